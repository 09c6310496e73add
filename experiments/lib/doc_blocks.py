"""Generated blocks of documents: the text between two marker lines,
rewritten by the script that computes it."""

from typing import Sequence

import numpy as np

from experiments.lib import run_tables


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
  run_tables.write_text(path, f'{head}{start}\n{body}\n{end}{tail}')


def print_or_replace_block(argv: Sequence[str], path: str, start: str,
                           end: str, make_body) -> None:
  """The `main` of a script that generates a document's table: prints
  `make_body()`, or with `--write` puts it into `path`'s block."""
  if '--write' in argv[1:]:
    replace_block(path, start, end, make_body())
    print(f'Wrote the table into {path}')
  else:
    print(make_body())


def median_range(values, digits: int = 3) -> str:
  """'median [min-max]' of `values`, each to `digits` decimals: a cell of
  a study table over ids or seeds."""
  values = np.asarray(values, dtype=float)
  return (f'{np.median(values):.{digits}f} [{values.min():.{digits}f}-'
          f'{values.max():.{digits}f}]')


def id_span(numbers: Sequence[int]) -> str:
  """'0-11' for a run of consecutive ids, else the ids listed ('3' for
  one id)."""
  numbers = list(numbers)
  if not numbers:
    raise ValueError('`numbers` must hold at least one id, got none.')
  if len(numbers) > 1 and numbers == list(range(numbers[0],
                                                numbers[-1] + 1)):
    return f'{numbers[0]}-{numbers[-1]}'
  return ', '.join(map(str, numbers))
