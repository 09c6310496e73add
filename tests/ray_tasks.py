"""Task functions for the Ray tests, in a module that imports nothing heavy:
a Ray worker imports a task's module to unpickle it, and the test module
would make every (re)started worker import JAX and the experiments first
(about 90 s a worker on 2 busy cores)."""

import os


def die_once(marker: str, value: int) -> int:
  """Kills its worker process the first time (no exception: a crash)."""
  if not os.path.exists(marker):
    with open(marker, 'w') as f:
      f.write('died\n')
    os._exit(1)  # pylint: disable=protected-access
  return 2 * value


def niceness() -> int:
  """The niceness of the worker process that runs this task."""
  return os.nice(0)
