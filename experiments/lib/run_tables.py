"""Run tables: CSV files that a killed process cannot tear.

A run table gets one complete line per finished run (flushed and synced),
so a rerun sees exactly the runs that finished; whole files are written to
a temporary file and renamed into place.
"""

import csv
import os
from typing import Any, Dict, List, Mapping, Sequence


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


def write_text(path: str, text: str) -> None:
  """Writes `text` whole (temporary file + rename)."""
  temporary = path + '.tmp'
  with open(temporary, 'w') as f:
    f.write(text)
  os.replace(temporary, path)
