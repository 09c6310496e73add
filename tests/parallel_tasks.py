"""Module-level task functions for tests/test_parallel_local.py (spawned
workers import them by name)."""

import os
import signal
import time


def die_or_return(name: str, seconds: float) -> str:
  """Kills its own worker for name 'die'; otherwise sleeps and returns."""
  if name == 'die':
    time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGKILL)
  time.sleep(seconds)
  return name.upper()
