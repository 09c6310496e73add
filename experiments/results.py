"""Result files of the experiment scripts: crash-safe logs and run tables.

Nothing written here can be torn by a killed process: bsuite logs are
rewritten whole to a temporary file and renamed into place, and a run table
gets one complete line per finished run (flushed and synced), so a rerun sees
exactly the runs that finished.
"""

import csv
import os
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from bsuite.logging import csv_logging
import numpy as np
import pandas as pd


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
