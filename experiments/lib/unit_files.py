"""A unit's files beside its log: its record, its lock, its checkpoint folder.

A unit (agent, bsuite id, seed) logs bsuite's CSV into its seed folder; once
finished, a record (`<log>.json`: identity, episodes, the log's fingerprint)
says so, for every runner. A log another run wrote, or one cut short, is
never taken as this run's (`AnotherRunError`, `csv_mismatch`).
"""

import contextlib
import functools
import hashlib
import json
import os
from typing import Any, Dict, Mapping, Optional, Tuple

from bsuite import sweep
from bsuite.logging import csv_logging
from bsuite.utils import wrappers
import filelock


class AnotherRunError(ValueError):
  """Results on disk belong to another run (seed, agent, hyperparameters)
  than the one asked for: never taken as its results."""


# A finished unit's record, next to its log, for every runner: identity
# (runner, agent, seed, overrides, ...), the episodes run and what was
# written (`csv_fingerprint`). The bsuite-loop runners wrote '<log>.done'
# before; such a record is still read (`read_record`) and replaced.
MARKER_SUFFIX = '.json'


LEGACY_MARKER_SUFFIX = '.done'


RUNNERS = ('bsuite', 'jax')


def marker_path(bsuite_id: str, directory: str) -> str:
  """The record of `bsuite_id`'s unit whose log goes into `directory`."""
  return bsuite_csv_path(bsuite_id, directory) + MARKER_SUFFIX


def _read_json(path: str) -> Tuple[Optional[Any], str]:
  """(the JSON at `path`, '') or (None, why it cannot be read)."""
  try:
    with open(path) as f:
      return json.load(f), ''
  except (OSError, ValueError) as error:
    return None, f'{type(error).__name__}: {error}'


def record_runner(record: Mapping[str, Any]) -> Optional[str]:
  """Which runner wrote a unit's record: 'jax' or 'bsuite' (bsuite's loop,
  one seed or seeds in lockstep), None when it does not say."""
  identity = record.get('identity')
  if not isinstance(identity, dict):
    return None
  if 'runner' in identity:
    return identity['runner']
  return 'bsuite' if 'loop' in identity else None


def _from_legacy(record: Any) -> Dict[str, Any]:
  """A '<log>.done' record in today's form: its identity names its runner."""
  if not isinstance(record, dict):  # the oldest: the episode count alone
    return {'episodes': record, 'identity': None}
  record = dict(record)
  if isinstance(record.get('identity'), dict):
    record['identity'] = dict(record['identity'], runner='bsuite')
  return record


def read_record(bsuite_id: str, directory: str) -> Optional[Dict[str, Any]]:
  """The record of a unit with a log here, or None when it has none (or
  the record cannot be read: said in one line, and the unit is run again).
  A record in the old '<log>.done' form is read as today's."""
  log = bsuite_csv_path(bsuite_id, directory)
  if not os.path.exists(log):
    return None
  for suffix in (MARKER_SUFFIX, LEGACY_MARKER_SUFFIX):
    if not os.path.exists(log + suffix):
      continue
    record, error = _read_json(log + suffix)
    if suffix == LEGACY_MARKER_SUFFIX and not error:
      record = _from_legacy(record)
    if error:
      print(f'  {log + suffix} cannot be read ({error}); its unit is run '
            'again.', flush=True)
      return None
    if not isinstance(record, dict) or 'episodes' not in record:
      print(f'  {log + suffix} is not a unit record; its unit is run again.',
            flush=True)
      return None
    return record
  return None


def write_record(bsuite_id: str, directory: str,
                 record: Dict[str, Any]) -> None:
  """Writes a unit's record (atomically) after its log: `record` plus the
  log's fingerprint, so a log changed or cut later is never taken as done.
  An old '<log>.done' record of the unit is removed."""
  log = bsuite_csv_path(bsuite_id, directory)
  record.update(csv_fingerprint(log))
  path = marker_path(bsuite_id, directory)
  with open(path + '.tmp', 'w') as f:
    json.dump(record, f, indent=1)
    f.write('\n')
  os.replace(path + '.tmp', path)
  remove_record(bsuite_id, directory, legacy_only=True)


def remove_record(bsuite_id: str, directory: str,
                  legacy_only: bool = False) -> None:
  """Removes a unit's record (it is being rerun: not finished)."""
  log = bsuite_csv_path(bsuite_id, directory)
  suffixes = (LEGACY_MARKER_SUFFIX,) if legacy_only else (
      MARKER_SUFFIX, LEGACY_MARKER_SUFFIX)
  for suffix in suffixes:
    with contextlib.suppress(FileNotFoundError):
      os.remove(log + suffix)


def log_runner(log: str) -> Optional[str]:
  """The runner whose record sits beside the CSV log at `log`, or None."""
  for suffix in (MARKER_SUFFIX, LEGACY_MARKER_SUFFIX):
    if os.path.exists(log + suffix):
      record, error = _read_json(log + suffix)
      if error:
        return None
      if suffix == LEGACY_MARKER_SUFFIX:
        record = _from_legacy(record)
      return record_runner(record) if isinstance(record, dict) else None
  return None


def check_no_other_runner(bsuite_id: str, directory: str, runner: str,
                          overwrite: bool) -> None:
  """Refuses (AnotherRunError, naming --overwrite) a unit whose log another
  runner finished; with `overwrite`, removes that runner's record so that
  it never claims the log this run writes."""
  log = bsuite_csv_path(bsuite_id, directory)
  other = log_runner(log)
  if other is None or other == runner:
    return
  if not overwrite:
    raise AnotherRunError(
        f'{log} was written by --runner={other}; this is --runner={runner}. '
        'Use --overwrite to replace it, or another --save_path.')
  remove_record(bsuite_id, directory)


def check_one_layout(bsuite_id: str, save_path: str, agent_name: str,
                     seed: int, directory: str) -> None:
  """Refuses (AnotherRunError) a unit of (agent, id, seed) that another
  folder already holds: every runner writes `<save_path>/<agent>/seed_K/`
  (`units.seed_folder`), and bsuite's loop once wrote one seed's units into
  `<save_path>/<agent>/` itself. Two logs of one unit would pass for two
  runs."""
  plain = os.path.join(save_path, agent_name)
  for folder in (plain, os.path.join(save_path, agent_name, f'seed_{seed}')):
    if os.path.abspath(folder) == os.path.abspath(directory):
      continue
    log = bsuite_csv_path(bsuite_id, folder)
    if not os.path.exists(log + MARKER_SUFFIX):
      continue
    record, error = _read_json(log + MARKER_SUFFIX)
    if error or not isinstance(record, dict):
      continue
    recorded = (record.get('identity') or {}).get('seed')
    if folder == plain and recorded != seed:
      continue  # the plain folder holds another seed's unit
    raise AnotherRunError(
        f'{log} already holds {agent_name} on {bsuite_id} with seed {seed} '
        f'(this run would log it again in {directory}); one unit lives in '
        'one folder: remove that log, or use another --save_path.')


def csv_fingerprint(path: str) -> Dict[str, Any]:
  """What a finished unit's marker records of its CSV log: its data rows
  and the SHA-256 of its bytes."""
  with open(path, 'rb') as f:
    data = f.read()
  return {'csv_rows': max(data.count(b'\n') - 1, 0),
          'csv_sha256': hashlib.sha256(data).hexdigest()}


@functools.lru_cache(maxsize=None)
def last_log_episode(episodes: int) -> int:
  """The last episode <= `episodes` at which bsuite's logging wrapper
  writes a row (10^k x {1, 1.2, 1.4, 1.7, 2, 2.5, 3, ..., 10})."""
  return max(e for e in range(1, int(episodes) + 1)
             # pylint: disable-next=protected-access
             if wrappers._logarithmic_logging(e))


def csv_mismatch(path: str, record: Mapping[str, Any],
                 last_episode: int) -> str:
  """Why the CSV log at `path` is not the one `record` (a finished unit's
  marker) was written with, or '' when it is. A record with a fingerprint
  (`csv_fingerprint`) must match it byte for byte; an older record's log
  must at least end at `last_episode`, the last log point of the episodes
  it ran."""
  if not os.path.exists(path):
    return 'its log is missing'
  if 'csv_sha256' in record:
    found = csv_fingerprint(path)
    if found['csv_sha256'] != record['csv_sha256']:
      return (f'its log changed since it was written ({found["csv_rows"]} '
              f'rows, {record["csv_rows"]} recorded)')
    return ''
  # Header and last row only: cheap for the hundreds of committed units.
  with open(path, 'rb') as f:
    lines = f.read().decode('utf-8', 'replace').strip().splitlines()
  try:
    column = lines[0].split(',').index('episode')
    last = int(lines[-1].split(',')[column]) if len(lines) > 1 else 0
  except (IndexError, ValueError):
    return 'its log cannot be read'
  if last != last_episode:
    return f'its log ends at episode {last}, not {last_episode}'
  return ''


# Per results folder: checkpoints and locks, not results (gitignored).
CHECKPOINTS = '.checkpoints'


def unit_lock_path(bsuite_id: str, directory: str) -> str:
  """The lock of `bsuite_id`'s unit whose log goes into `directory`."""
  return os.path.join(directory, CHECKPOINTS,
                      bsuite_id.replace(sweep.SEPARATOR, '-') + '.lock')


@contextlib.contextmanager
def unit_lock(bsuite_id: str, directory: str, name: str):
  """Holds the lock of the unit whose log goes into `directory`: every
  runner (plain, lockstep, jitted) takes it, so a second process on the
  same unit is refused before it reads or writes anything of it. `name`
  says which run in the message."""
  path = unit_lock_path(bsuite_id, directory)
  os.makedirs(os.path.dirname(path), exist_ok=True)
  lock = filelock.FileLock(path)
  try:
    lock.acquire(timeout=0)
  except filelock.Timeout:
    raise AnotherRunError(
        f'{name} is being run by another process (it holds {path}); wait '
        'for it to end or stop it.') from None
  try:
    yield
  finally:
    lock.release()


def bsuite_csv_path(bsuite_id: str, directory: str) -> str:
  """Where bsuite's CSV logger writes `bsuite_id`'s results."""
  safe_id = bsuite_id.replace(sweep.SEPARATOR, csv_logging.SAFE_SEPARATOR)
  return os.path.join(directory, f'{csv_logging.BSUITE_PREFIX}{safe_id}.csv')
