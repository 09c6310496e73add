"""Result files of the experiment scripts: crash-safe logs and run tables.

Nothing written here can be torn by a killed process: bsuite logs are
rewritten whole to a temporary file and renamed into place, and a run table
gets one complete line per finished run (flushed and synced), so a rerun sees
exactly the runs that finished.
"""

import contextlib
import csv
import functools
import hashlib
import json
import os
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from bsuite import bsuite as bsuite_loader
from bsuite import sweep
from bsuite.logging import csv_logging
from bsuite.utils import wrappers
import filelock
import numpy as np
import pandas as pd


def load_seeded(bsuite_id: str, seed: int):
  """bsuite's environment of `bsuite_id`, its randomness seeded by `seed`.

  Many of bsuite's settings leave the environment's seed None (catch,
  cartpole, mountain car, mnist and their noise/scale variants, umbrella
  length, cartpole swingup, the noise of deep sea stochastic), so
  `bsuite.load_from_id` gives another run each time. Here such an
  environment gets `registry.environment_seed(bsuite_id, seed)` (distinct
  for an experiment's replicas, the agent's seed at id 0), so the same
  command gives the same log; settings that fix a seed keep bsuite's. Same
  dynamics and law as `load_from_id` otherwise; the exact ports are seeded
  by the same rule (`pe_jax.envs.suite.registry.seeded_settings`).
  """
  from pe_jax.envs.suite import registry  # pylint: disable=g-import-not-at-top
  experiment_name, kwargs = registry.seeded_settings(bsuite_id, seed)
  loader = bsuite_loader.EXPERIMENT_NAME_TO_ENVIRONMENT[experiment_name]
  if experiment_name == 'deep_sea_stochastic':
    # Its loader passes no seed to bsuite's DeepSea, whose noise and failed
    # moves draw from `_rng` (mapping_seed fixes only the action mapping).
    stream_seed = kwargs.pop('seed')
    env = loader(**kwargs)
    env._rng = np.random.RandomState(stream_seed)  # pylint: disable=protected-access
    return env
  return loader(**kwargs)


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


def check_output_folder(path: str, flag: str) -> None:
  """Raises ValueError (naming `flag`) unless `path` is a folder or can be
  made one: checked before any work, not when the first result is saved.
  An empty path is refused (it would write into the current folder)."""
  if not path or not path.strip():
    raise ValueError(f'{flag} must name a folder, got {path!r}.')
  probe = os.path.abspath(path)
  while not os.path.exists(probe):
    probe = os.path.dirname(probe)
  if not os.path.isdir(probe):
    raise ValueError(f'{flag}: {probe} is a file, not a folder.')
  # Try it (permissions alone miss read-only and virtual file systems,
  # and root passes every access check).
  try:
    os.rmdir(tempfile.mkdtemp(prefix='.write_check_', dir=probe))
  except OSError as error:
    raise ValueError(f'{flag}: cannot write under {probe} '
                     f'({error.strerror}).') from None


def check_output_flag(path: str, flag: str) -> None:
  """`check_output_folder` for a script's flag: a one-line usage error."""
  from absl import app  # pylint: disable=g-import-not-at-top
  try:
    check_output_folder(path, flag)
  except ValueError as error:
    raise app.UsageError(str(error)) from None


def quiet_checkpoint_logs() -> None:
  """orbax logs every checkpoint step at INFO; progress lines say enough."""
  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
  absl_logging.set_verbosity(absl_logging.WARNING)


class AtomicCSVLogger(csv_logging.Logger):
  """bsuite's CSV logger, but each rewrite is atomic (temporary + rename).

  bsuite's logger rewrites the whole file on every write; a process killed
  mid-write would leave a truncated log that looks like fewer (or corrupt)
  episodes. Renaming a complete file into place cannot be torn.
  """

  def write(self, data: Mapping[str, Any]) -> None:
    self._data.append(data)
    self.write_all()

  def write_all(self) -> None:
    """Rewrites the file with the rows held (e.g. after a restore)."""
    temporary = self._save_path + '.tmp'
    pd.DataFrame(self._data).to_csv(temporary, index=False)
    os.replace(temporary, self._save_path)


def read_rows(path: str, columns: Sequence[str]) -> List[Dict[str, str]]:
  """Complete rows of a run table; [] when it does not exist yet.

  A row cut off mid-write (a field missing) is dropped, so its run is done
  again. A table without the expected columns is an error, not a silent
  restart.
  """
  if not os.path.exists(path):
    return []
  with open(path, newline='') as f:
    reader = csv.DictReader(f)
    missing = set(columns) - set(reader.fieldnames or ())
    if reader.fieldnames and missing:
      raise ValueError(f'{path} lacks the columns {sorted(missing)}; move it '
                       'away or write to another output folder.')
    return [row for row in reader
            if all(row.get(c) is not None for c in columns)]


def append_row(path: str, row: Mapping[str, Any],
               columns: Sequence[str]) -> None:
  """Appends one complete row (header first if the file is new), synced."""
  missing = set(columns) - set(row)
  if missing:
    raise ValueError(f'Row lacks columns {sorted(missing)}.')
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  new = not os.path.exists(path) or os.path.getsize(path) == 0
  torn = False
  if not new:
    with open(path, 'rb') as f:
      f.seek(-1, os.SEEK_END)
      torn = f.read(1) != b'\n'  # A row cut off mid-write: end it first.
  with open(path, 'a', newline='') as f:
    writer = csv.DictWriter(f, fieldnames=list(columns),
                            extrasaction='ignore')
    if new:
      writer.writeheader()
    if torn:
      f.write('\n')
    writer.writerow(row)
    f.flush()
    os.fsync(f.fileno())


def write_rows(path: str, rows: Sequence[Mapping[str, Any]],
               columns: Sequence[str]) -> None:
  """Writes a whole table atomically."""
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  temporary = path + '.tmp'
  with open(temporary, 'w', newline='') as f:
    writer = csv.DictWriter(f, fieldnames=list(columns),
                            extrasaction='ignore')
    writer.writeheader()
    writer.writerows(rows)
  os.replace(temporary, path)


def median_and_iqr(values: Sequence[float]) -> Tuple[float, float, float]:
  """(median, 25th percentile, 75th percentile), linear interpolation."""
  if not len(values):  # pylint: disable=g-explicit-length-test
    raise ValueError('median_and_iqr needs at least one value.')
  q25, median, q75 = np.percentile(np.asarray(values, np.float64),
                                   [25, 50, 75])
  return float(median), float(q25), float(q75)


# Regret statistics of one setting over its seeds (`regret_statistics`).
REGRET_COLUMNS = ('num_seeds', 'median_regret', 'q25_regret', 'q75_regret',
                  'min_regret', 'max_regret', 'seeds_found_treasure',
                  'median_first_treasure', 'median_bad_after_first')


def regret_statistics(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
  """Deep sea regret of one setting over its seeds (rows of a runs table).

  Regret is the count of bad episodes (bsuite's `total_bad_episodes`). Of
  the seeds that found the treasure: the median first find (1-based episode)
  and the median of the bad episodes after it, regret - (first find - 1),
  which separates finding late from going on exploring after the find.
  Statistics of no found seed are ''.
  """
  if not rows:
    raise ValueError('regret_statistics needs at least one run.')
  regrets = [float(r['regret']) for r in rows]
  median, q25, q75 = median_and_iqr(regrets)
  found = [r for r in rows
           if str(r['first_treasure_episode']) not in ('', 'None', 'nan')]
  firsts = [int(float(r['first_treasure_episode'])) for r in found]
  after = [float(r['regret']) - (first - 1) for r, first in zip(found, firsts)]
  return {
      'num_seeds': len(rows), 'median_regret': median, 'q25_regret': q25,
      'q75_regret': q75, 'min_regret': int(min(regrets)),
      'max_regret': int(max(regrets)), 'seeds_found_treasure': len(found),
      'median_first_treasure': float(np.median(firsts)) if firsts else '',
      'median_bad_after_first': float(np.median(after)) if after else '',
  }


def _number(value: Any) -> str:
  """65.5, 159.2, 78: one decimal at most, none when whole."""
  if value == '' or value is None:
    return '-'
  return f'{float(value):.1f}'.rstrip('0').rstrip('.')


def regret_markdown(summary: Sequence[Mapping[str, Any]],
                    label_columns: Sequence[str]) -> str:
  """A markdown table of `regret_statistics` rows, one per setting,
  labelled by `label_columns` (e.g. agent and size)."""
  header = [*label_columns, 'median regret [IQR]', 'min - max',
            'found the treasure', 'first find, median episode',
            'bad episodes after the first find, median']
  lines = ['| ' + ' | '.join(header) + ' |',
           '|' + '---|' * len(header)]
  for row in summary:
    found, seeds = row['seeds_found_treasure'], row['num_seeds']
    of = f' (of {found})' if 0 < found < seeds else ''
    cells = [f'{row[c]:g}' if isinstance(row[c], float) else str(row[c])
             for c in label_columns]  # Labels in full: 0.05, 0.001.
    cells += [f'{_number(row["median_regret"])} '
              f'[{_number(row["q25_regret"])}, {_number(row["q75_regret"])}]',
              f'{row["min_regret"]} - {row["max_regret"]}'
              if row['min_regret'] != row['max_regret']
              else str(row['min_regret']),
              f'{found}/{seeds}',
              _number(row['median_first_treasure']) + (of if found else ''),
              _number(row['median_bad_after_first']) + (of if found else '')]
    lines.append('| ' + ' | '.join(cells) + ' |')
  return '\n'.join(lines) + '\n'


def write_text(path: str, text: str) -> None:
  """Writes `text` whole (temporary file + rename)."""
  temporary = path + '.tmp'
  with open(temporary, 'w') as f:
    f.write(text)
  os.replace(temporary, path)


def replace_block(path: str, start: str, end: str, body: str) -> None:
  """Rewrites the generated block of a document: the text between the lines
  `start` and `end` (kept) becomes `body`. Raises naming the file when the
  markers are missing."""
  with open(path, encoding='utf-8') as f:
    text = f.read()
  head, found, rest = text.partition(start)
  _, found_end, tail = rest.partition(end)
  if not (found and found_end):
    raise ValueError(f'{path}: no block between {start!r} and {end!r}.')
  write_text(path, f'{head}{start}\n{body}\n{end}{tail}')


def print_or_replace_block(argv: Sequence[str], path: str, start: str,
                           end: str, make_body) -> None:
  """The `main` of a script that generates a document's table: prints
  `make_body()`, or with `--write` puts it into `path`'s block."""
  if '--write' in argv[1:]:
    replace_block(path, start, end, make_body())
    print(f'Wrote the table into {path}')
  else:
    print(make_body())


def restore_series_append() -> None:
  """Lets bsuite's deep_sea scoring run on pandas >= 2.

  bsuite 0.3.x's `deep_sea/analysis.py` joins two Series with
  `Series.append`, which pandas 2.0 removed; restore it as `pd.concat`, the
  documented replacement, if (and only if) it is missing.
  """
  if not hasattr(pd.Series, 'append'):
    pd.Series.append = lambda self, other: pd.concat([self, other])
