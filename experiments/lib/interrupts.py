"""Ctrl-C and SIGTERM that no library can swallow.

Python raises a signal's KeyboardInterrupt wherever the main thread happens
to be. Code that catches every exception there lets the run go on as if
nothing happened: jaxlib's MLIR start-up does, so without this module a
Ctrl-C in a command's first seconds is lost. The handler here also records
the request, and the long loops call `raise_if_requested` once per episode
or compiled chunk, which raises it again at the next safe point; they run a
compiled chunk with `call_until_ready`, where a stop is handled as it
comes.

Where Python cannot raise (a garbage-collector callback such as jax's, a
`__del__`), it prints the KeyboardInterrupt as "Exception ignored in ...",
with a traceback, and drops it. `install` silences exactly those: the stop
is recorded, and the next safe point raises it.

This module imports nothing heavy, so a command can call
`record_during_imports` before its other imports: a stop asked for then is
kept (not raised in the middle of a library's start-up) and raised as soon as
`compilation_cache.run` starts the command.
"""

import contextlib
import signal
import sys

_requested = False
_deferring = 0  # how many `deferred` sections the main thread is in


def _record(signum, frame):
  del signum, frame
  global _requested
  _requested = True


def record_and_raise(signum, frame):
  """The stop handler: records the request and raises KeyboardInterrupt
  (inside a `deferred` section, when the section ends)."""
  _record(signum, frame)
  if not _deferring:
    raise KeyboardInterrupt


@contextlib.contextmanager
def deferred():
  """A section that a stop does not cut short: one asked for inside it is
  raised as it ends. For what must finish once begun and takes at most
  seconds: writing a checkpoint, where a KeyboardInterrupt raised inside
  orbax's wait for its writer threads prints orbax's traceback and leaves
  the step unfinished."""
  global _deferring
  _deferring += 1
  try:
    yield
  finally:
    _deferring -= 1
  if not _deferring:
    raise_if_requested()


def record_during_imports() -> None:
  """Until `install`: SIGINT and SIGTERM only record the request."""
  signal.signal(signal.SIGINT, _record)
  signal.signal(signal.SIGTERM, _record)


def _quiet_about_recorded_stops(previous_hook):
  """A `sys.unraisablehook` that drops a recorded stop's KeyboardInterrupt
  (raised again at the next safe point) and passes on everything else."""
  def hook(unraisable):
    if _requested and issubclass(unraisable.exc_type, KeyboardInterrupt):
      return
    previous_hook(unraisable)
  hook.quiet_about_recorded_stops = True
  return hook


def install() -> None:
  """SIGINT (Ctrl-C) and SIGTERM (a scheduler, `kill`) stop a run alike;
  one recorded before is raised now."""
  if not getattr(sys.unraisablehook, 'quiet_about_recorded_stops', False):
    sys.unraisablehook = _quiet_about_recorded_stops(sys.unraisablehook)
  signal.signal(signal.SIGINT, record_and_raise)
  signal.signal(signal.SIGTERM, record_and_raise)
  raise_if_requested()


def requested() -> bool:
  """Whether a stop was asked for since `install` (or `clear`)."""
  return _requested


def raise_if_requested() -> None:
  """Raises KeyboardInterrupt if a stop was asked for, swallowed or not."""
  if _requested:
    raise KeyboardInterrupt


def call_until_ready(function, *args):
  """`function(*args)` (a compiled call: its compilation, if any, and its
  run), its outputs computed, with the main thread waiting in Python
  meanwhile: a stop raises at once rather than when the call ends (a CPU
  chunk can run for minutes, a compilation for many seconds). The call is
  then abandoned: no runner saves on a stop, and the command exits without
  waiting for it (`compilation_cache.run`)."""
  import threading  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top
  done = threading.Event()
  outcome = []

  def call():
    try:
      outcome.append(jax.block_until_ready(function(*args)))
    except BaseException as error:  # pylint: disable=broad-except
      outcome.append(error)
    done.set()
  threading.Thread(target=call, daemon=True).start()
  # A signal's handler runs in this wait, in the main thread. The poll
  # catches a stop whose KeyboardInterrupt Python dropped (see above).
  while not done.wait(0.1):
    raise_if_requested()
  if isinstance(outcome[0], BaseException):
    raise outcome[0]
  return outcome[0]


def clear() -> None:
  """Forgets a request (tests; a program that handled one and goes on)."""
  global _requested
  _requested = False
