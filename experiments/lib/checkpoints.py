"""Checkpoints of a jitted run between its compiled chunks (orbax).

A jitted training (`agents.training.make_train`) runs as a few long compiled
calls; a kill loses everything since the start unless the carry (agent
states with replay, environment states, RNG keys, counters) is saved between
calls. `ChunkCheckpoints` saves a pytree after each call with orbax, whose
saves are atomic (written to a temporary folder and renamed into place), so
a kill during a save leaves the previous checkpoint usable; it keeps the last
two. Each save also writes a SHA-256 of the saved values; on restore a
checkpoint that is unreadable, or whose values no longer match their
digest (a damaged file that still parses), or whose digest is missing, is
reported by path and the one before it is tried. A folder that cannot be
used at all (its identity file or every checkpoint damaged) is set aside
beside it as `<folder>.unreadable` with one line saying so, and its unit
starts over from the first episode: never a silent restart, and the other
units of the command go on.
"""

import base64
import errno
import hashlib
import json
import os
import shutil
import sys
import traceback
import types
from typing import Any, Callable, List, Optional, Tuple

import jax
import numpy as np

from experiments.lib import interrupts
from experiments.lib import unit_files


def _orbax():
  """orbax.checkpoint, imported where first used: about 0.3 s of a
  script's 2 s of imports, which runs that never checkpoint (refused
  flags, finished units, bsuite's loop) need not pay."""
  import orbax.checkpoint  # pylint: disable=g-import-not-at-top
  return orbax.checkpoint


IDENTITY_FILE = 'run.json'
KEEP = 2
DIGEST_SUFFIX = '.sha256'  # beside the step folders: '<step>.sha256'


def checkpoint_bytes(tree: Any, extra: Any = None) -> int:
  """About what a checkpoint of `tree` (and `extra`) writes: its arrays'
  bytes and the JSON of `extra`."""
  # From each leaf's shape and dtype: no device-to-host copy.
  size = sum(int(np.prod(np.shape(leaf))) * np.dtype(leaf.dtype).itemsize
             if hasattr(leaf, 'dtype') else np.asarray(leaf).nbytes
             for leaf in jax.tree_util.tree_leaves(tree))
  if extra is not None:
    size += len(json.dumps(extra))
  return size


def check_room(directory: str, tree: Any, extra: Any = None) -> None:
  """Raises OSError(ENOSPC), naming `directory` and the sizes, when the
  disk lacks room for a checkpoint: before orbax starts writing, whose
  writer threads report a full disk as hundreds of lines of tracebacks."""
  needed = int(1.5 * checkpoint_bytes(tree, extra)) + (1 << 20)
  free = shutil.disk_usage(directory).free
  if free < needed:
    raise OSError(errno.ENOSPC,
                  f'no space left for a checkpoint (about {needed / 1e6:.1f} '
                  f'MB needed, {free / 1e6:.1f} MB free)', directory)


def digest(tree: Any, extra: Any = None) -> str:
  """SHA-256 of a pytree's values (each leaf's dtype, shape and bytes, in
  flattening order) and of `extra` (as sorted JSON)."""
  hasher = hashlib.sha256()
  for leaf in jax.tree_util.tree_leaves(tree):
    array = np.asarray(leaf)
    hasher.update(f'{array.dtype.str}{array.shape}'.encode())
    hasher.update(np.ascontiguousarray(array).tobytes())
  if extra is not None:
    hasher.update(json.dumps(extra, sort_keys=True).encode())
  return hasher.hexdigest()


UNREADABLE_SUFFIX = '.unreadable'


def is_abandoned_read(unraisable) -> bool:
  """Whether an unraisable exception (`sys.unraisablehook`'s argument) is
  tensorstore completing a read that a failed restore abandoned: orbax's
  event loop for the restore closed when the first read failed, and each
  read still in flight then finds it closed. The failure itself is
  reported, in one line, by `restore_latest`."""
  error = unraisable.exc_value
  if not (isinstance(error, RuntimeError) and unraisable.object is None
          and str(error) == 'Event loop is closed'):
    return False
  # Called from native code: asyncio's two frames and no Python caller.
  frames = traceback.extract_tb(unraisable.exc_traceback)
  asyncio_file = os.path.join('asyncio', 'base_events.py')
  return ([frame.name for frame in frames] ==
          ['call_soon_threadsafe', '_check_closed'] and
          all(frame.filename.endswith(asyncio_file) for frame in frames))


def _quiet_abandoned_reads() -> None:
  """From now on, `is_abandoned_read` exceptions print nothing (a
  traceback for each array of a damaged checkpoint still being read);
  every other unraisable exception goes to the hook there was."""
  previous = sys.unraisablehook
  if getattr(previous, 'drops_abandoned_reads', False):
    return

  def hook(unraisable):
    if not is_abandoned_read(unraisable):
      previous(unraisable)
  hook.drops_abandoned_reads = True
  sys.unraisablehook = hook


def _set_aside_name(directory: str) -> str:
  """`directory.unreadable`, or `.unreadable.2`, ... if that is taken."""
  aside, count = directory + UNREADABLE_SUFFIX, 1
  while os.path.exists(aside):
    count += 1
    aside = f'{directory}{UNREADABLE_SUFFIX}.{count}'
  return aside


class DamagedCheckpointError(ValueError):
  """A checkpoint's restored values differ from the digest saved with it."""


def uncommitted(tree: Any) -> Any:
  """`tree` with its arrays as a fresh start makes them: on the default
  device, not committed to it. orbax restores arrays committed to a device,
  and jit compiles a committed argument into another program (with
  sharding annotations), so a resumed run would compile every program
  again, missing the compilation cache; the values are the same."""
  def fresh(leaf):
    if isinstance(leaf, jax.Array) and leaf.committed:
      return jax.device_put(np.array(leaf))  # a copy: never aliased
    return leaf
  return jax.tree_util.tree_map(fresh, tree)


class EnvironmentStateError(ValueError):
  """A saved environment state does not fit the environment it is restored
  into (damaged, or saved from another environment)."""


_MAX_DEPTH = 12


def _encode(value: Any, depth: int = 0) -> Any:
  """`value` as tagged JSON (plain data only: numbers, strings, numpy
  scalars and arrays of numeric dtypes, RandomState streams, containers and
  the plain attributes of objects). Code (functions, classes, modules) and
  what has no plain form (specs) are recorded as skipped: a restore keeps
  the fresh environment's own."""
  if depth > _MAX_DEPTH:
    raise EnvironmentStateError('environment state nested too deeply')
  if value is None or isinstance(value, (bool, str)):
    return value
  if isinstance(value, int):
    return {'int': str(value)}
  if isinstance(value, float):
    return {'float': value.hex()}
  if isinstance(value, np.random.RandomState):
    return {'random_state': _encode(value.get_state(), depth + 1)}
  if isinstance(value, np.ndarray):
    if value.dtype.hasobject:
      return {'skip': 'object array'}
    return {'array': value.dtype.str, 'shape': list(value.shape),
            'bytes': base64.b64encode(
                np.ascontiguousarray(value).tobytes()).decode('ascii')}
  if isinstance(value, np.generic):
    return {'scalar': value.dtype.str, 'bytes': base64.b64encode(
        np.asarray(value).tobytes()).decode('ascii')}
  if isinstance(value, tuple) and hasattr(value, '_fields'):
    return {'namedtuple': type(value).__name__,
            'items': [_encode(v, depth + 1) for v in value]}
  if isinstance(value, (list, tuple)):
    return {type(value).__name__: [_encode(v, depth + 1) for v in value]}
  if isinstance(value, dict):
    return {'dict': [[_encode(k, depth + 1), _encode(v, depth + 1)]
                     for k, v in value.items()]}
  if (isinstance(value, (type, types.ModuleType)) or callable(value)
      or not hasattr(value, '__dict__')):
    return {'skip': type(value).__name__}
  return {'object': type(value).__name__,
          'attributes': {name: _encode(v, depth + 1)
                         for name, v in vars(value).items()}}


def _numeric_dtype(name: str) -> np.dtype:
  dtype = np.dtype(name)
  if dtype.hasobject or dtype.kind not in 'biufc':
    raise EnvironmentStateError(f'dtype {name!r} is not numeric')
  return dtype


def _decode(data: Any, like: Any) -> Any:
  """The value `_encode` recorded; `like` is the fresh environment's value
  at the same place (objects and RandomStates are restored into it)."""
  if data is None or isinstance(data, (bool, str)):
    return data
  if not isinstance(data, dict) or len(data) not in (1, 2, 3):
    raise EnvironmentStateError(f'unexpected entry {str(data)[:80]!r}')
  if 'int' in data:
    return int(data['int'])
  if 'float' in data:
    return float.fromhex(data['float'])
  if 'random_state' in data:
    if not isinstance(like, np.random.RandomState):
      raise EnvironmentStateError('a random stream where the environment '
                                  'has none')
    like.set_state(_decode(data['random_state'], None))
    return like
  if 'array' in data:
    dtype = _numeric_dtype(data['array'])
    array = np.frombuffer(base64.b64decode(data['bytes'], validate=True),
                          dtype=dtype).copy()
    return array.reshape([int(n) for n in data['shape']])
  if 'scalar' in data:
    dtype = _numeric_dtype(data['scalar'])
    return np.frombuffer(base64.b64decode(data['bytes'], validate=True),
                         dtype=dtype)[0]
  if 'namedtuple' in data:
    if not (isinstance(like, tuple) and
            type(like).__name__ == data['namedtuple']):
      raise EnvironmentStateError(f'a {data["namedtuple"]} where the '
                                  f'environment has {type(like).__name__}')
    return type(like)(*[_decode(v, w)
                        for v, w in zip(data['items'], like)])
  if 'list' in data or 'tuple' in data:
    kind = 'list' if 'list' in data else 'tuple'
    likes = list(like) if isinstance(like, (list, tuple)) else []
    values = [_decode(v, likes[i] if i < len(likes) else None)
              for i, v in enumerate(data[kind])]
    return values if kind == 'list' else tuple(values)
  if 'dict' in data:
    likes = like if isinstance(like, dict) else {}
    out = {}
    for key, value in data['dict']:
      key = _decode(key, None)
      out[key] = _decode(value, likes.get(key))
    return out
  if 'object' in data:
    if like is None or type(like).__name__ != data['object']:
      raise EnvironmentStateError(
          f'a {data["object"]} where the environment has '
          f'{type(like).__name__}')
    attributes = vars(like)
    for name, value in data['attributes'].items():
      if isinstance(value, dict) and 'skip' in value:
        continue
      attributes[name] = _decode(value, attributes.get(name))
    return like
  raise EnvironmentStateError(f'unexpected entry {str(data)[:80]!r}')


def environment_state(env) -> Any:
  """The state of a bsuite environment (with its wrappers, random streams,
  counters and logger rows) as JSON-able plain data."""
  return _encode(env)


def restore_environment(env, state: Any):
  """`env`, freshly built for the same id and seed, put in `state` (from
  `environment_state`). Only data is read: nothing in `state` names code
  that runs. Raises EnvironmentStateError when `state` does not fit."""
  return _decode(state, env)


class ChunkCheckpoints:
  """The checkpoints of one run, in `directory`, numbered by `step` (for the
  runners: episodes done).

  `identity` (JSON-able) says which run the folder belongs to: a folder made
  for another run is an error naming the file, not a silent mix-up.
  `differences(found, identity)`, if given, lists how a recorded identity
  differs from this run's (empty: the same run); by default any inequality
  is a difference. The runners pass their own rule so that a field added
  to a config since the folder was written (at the value that computes
  what the record computed) does not orphan a half-done run.
  """

  def __init__(self, directory: str, identity: Any,
               differences: Optional[Callable[[Any, Any], List[str]]] = None,
               report: Callable[[str], None] = print):
    self.directory = os.path.abspath(directory)
    self._identity = json.loads(json.dumps(identity))
    os.makedirs(self.directory, exist_ok=True)
    identity_path = os.path.join(self.directory, IDENTITY_FILE)
    if os.path.exists(identity_path):
      try:
        with open(identity_path) as f:
          found = json.load(f)
      except (OSError, ValueError) as error:
        self._set_aside(f'{identity_path} cannot be read '
                        f'({type(error).__name__})', report)
        return
      if differences is None:
        differs = ['identity'] if found != self._identity else []
      else:
        differs = differences(found, self._identity)
      if differs:
        raise unit_files.AnotherRunError(
            f'{identity_path} belongs to another run '
            f'({"; ".join(differs)}): {found}, not {self._identity}. Run the '
            'same command as that run to continue it (its progress is '
            'kept), or remove the folder to start over.')
    self._open()

  def _open(self) -> None:
    """Writes the identity file if missing and opens the orbax manager."""
    os.makedirs(self.directory, exist_ok=True)
    identity_path = os.path.join(self.directory, IDENTITY_FILE)
    if not os.path.exists(identity_path):
      temporary = identity_path + '.tmp'
      with open(temporary, 'w') as f:
        json.dump(self._identity, f, indent=1)
      os.replace(temporary, identity_path)
    ocp = _orbax()
    self._manager = ocp.CheckpointManager(
        self.directory, options=ocp.CheckpointManagerOptions(
            max_to_keep=KEEP, create=True))

  def _set_aside(self, why: str, report: Callable[[str], None]) -> None:
    """Moves the unusable folder out of the way (kept for inspection, never
    read again) and opens a fresh one: the unit starts over."""
    manager = getattr(self, '_manager', None)
    if manager is not None:
      manager.close()
    aside = _set_aside_name(self.directory)
    os.replace(self.directory, aside)
    report(f'{why}: set aside as {aside}; this unit starts over from its '
           'first episode.')
    self._open()

  def steps(self):
    return sorted(self._manager.all_steps())

  def save(self, step: int, tree: Any, extra: Any = None) -> None:
    """Saves `tree` as checkpoint `step` and waits until it is on disk (the
    runner donates the carry's buffers to its next call). `extra`, if
    given, is JSON-able data saved in the same atomic checkpoint (restore
    it with `restore_latest(..., with_extra=True)`)."""
    check_room(self.directory, tree, extra)
    ocp = _orbax()
    if extra is None:
      args = ocp.args.StandardSave(tree)
    else:
      args = ocp.args.Composite(state=ocp.args.StandardSave(tree),
                                extra=ocp.args.JsonSave(extra))
    # The digest first: orbax names the step's folder only once it is
    # complete, so a step that is there has its digest, wherever a kill
    # lands (a digest without its step is removed below, next time).
    path = self._digest_path(step)
    with interrupts.deferred():  # a stop lands after the step is whole
      with open(path + '.tmp', 'w') as f:
        f.write(digest(tree, extra) + '\n')
      os.replace(path + '.tmp', path)
      self._manager.save(step, args=args)
      self._manager.wait_until_finished()
      kept = set(self.steps())
      for name in os.listdir(self.directory):
        if (name.endswith(DIGEST_SUFFIX)
            and name[:-len(DIGEST_SUFFIX)].isdigit()
            and int(name[:-len(DIGEST_SUFFIX)]) not in kept):
          os.remove(os.path.join(self.directory, name))

  def _digest_path(self, step: int) -> str:
    return os.path.join(self.directory, f'{step}{DIGEST_SUFFIX}')

  def _check(self, step: int, tree: Any, extra: Any = None) -> None:
    """Raises DamagedCheckpointError if `step`'s values do not match the
    digest saved with them, or its digest is missing or unreadable."""
    path = self._digest_path(step)
    try:
      with open(path) as f:
        saved = f.read().strip()
    except OSError as error:
      raise DamagedCheckpointError(
          f'its digest cannot be read ({path}: {error.strerror})') from None
    if digest(tree, extra) != saved:
      raise DamagedCheckpointError(
          f'its values do not match the digest saved with them ({path})')

  def restore_latest(self, like_for_step: Callable[[int], Any],
                     report: Callable[[str], None] = print,
                     with_extra: bool = False,
                     decode_extra: Optional[Callable[[Any], Any]] = None
                     ) -> Optional[Tuple]:
    """(step, tree) of the newest readable checkpoint, or None if there is
    none (a folder with none readable is set aside first, with a line);
    (step, tree, extra) `with_extra` (checkpoints saved with extra).
    `like_for_step(step)` gives a tree of the expected structure, shapes and
    dtypes (arrays or `jax.ShapeDtypeStruct`s). `decode_extra(extra)`, if
    given, is returned in place of extra; it runs inside the fallback, so a
    checkpoint whose extra cannot be decoded (a damaged environment state)
    counts as unreadable and the one before is tried."""
    ocp = _orbax()
    # Before the first read: the abandoned reads of a failing restore can
    # complete before its error reaches the handler below.
    _quiet_abandoned_reads()
    steps = self.steps()
    failures = []
    for step in reversed(steps):
      abstract = jax.tree_util.tree_map(
          ocp.utils.to_shape_dtype_struct, like_for_step(step))
      try:
        if with_extra:
          restored = self._manager.restore(step, args=ocp.args.Composite(
              state=ocp.args.StandardRestore(abstract),
              extra=ocp.args.JsonRestore()))
          extra = restored['extra']
          self._check(step, restored['state'], extra)
          if decode_extra is not None:
            extra = decode_extra(extra)
          return step, uncommitted(restored['state']), extra
        tree = uncommitted(self._manager.restore(
            step, args=ocp.args.StandardRestore(abstract)))
        self._check(step, tree)
      except Exception as error:  # pylint: disable=broad-except
        path = os.path.join(self.directory, str(step))
        failures.append(path)
        report(f'Checkpoint {path} is unreadable ({type(error).__name__}: '
               f'{str(error)[:200]}); trying the one before.')
        continue
      return step, tree
    if failures:
      self._set_aside(f'No readable checkpoint in {self.directory} (tried '
                      f'{", ".join(os.path.basename(f) for f in failures)})',
                      report)
    return None

  def remove(self) -> None:
    """Deletes the folder (once the run's results are safely written)."""
    self._manager.close()
    shutil.rmtree(self.directory, ignore_errors=True)
