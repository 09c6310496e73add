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
    temporary = self._save_path + '.tmp'
    pd.DataFrame(self._data).to_csv(temporary, index=False)
    os.replace(temporary, self._save_path)


def read_rows(path: str) -> List[Dict[str, str]]:
  """Rows of a CSV run table; [] when it does not exist yet."""
  if not os.path.exists(path):
    return []
  with open(path, newline='') as f:
    return list(csv.DictReader(f))


def append_row(path: str, row: Mapping[str, Any],
               columns: Sequence[str]) -> None:
  """Appends one complete row (header first if the file is new), synced."""
  missing = set(columns) - set(row)
  if missing:
    raise ValueError(f'Row lacks columns {sorted(missing)}.')
  new = not os.path.exists(path) or os.path.getsize(path) == 0
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  with open(path, 'a', newline='') as f:
    writer = csv.DictWriter(f, fieldnames=list(columns),
                            extrasaction='ignore')
    if new:
      writer.writeheader()
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
