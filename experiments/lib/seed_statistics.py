"""Median and spread of per-seed results, as rows and as markdown, and the
tests that say whether two arms' seeds separate them."""

from typing import Any, Dict, Mapping, Sequence, Tuple

import numpy as np
from scipy import stats


def median_and_iqr(values: Sequence[float]) -> Tuple[float, float, float]:
  """(median, 25th percentile, 75th percentile), linear interpolation."""
  if not len(values):  # pylint: disable=g-explicit-length-test
    raise ValueError('median_and_iqr needs at least one value.')
  q25, median, q75 = np.percentile(np.asarray(values, np.float64),
                                   [25, 50, 75])
  return float(median), float(q25), float(q75)


def rank_test_p(a: Sequence[float], b: Sequence[float]) -> float:
  """Two-sided p of the Mann-Whitney U test that arms `a` and `b` (one
  value per seed) come from one distribution, exact: U (ties at mid-ranks)
  over every split of the pooled values into groups of len(a) and len(b)
  (scipy's permutation test; two-sided is twice the smaller one-sided p,
  at most 1). Three seeds against three never go below 0.1, so they never
  separate two arms at the 5% level; five against five can (0.008)."""
  a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
  if a.ndim != 1 or b.ndim != 1 or not a.size or not b.size:
    raise ValueError('rank_test_p needs two non-empty 1-D samples; got '
                     f'shapes {a.shape} and {b.shape}.')

  def u_statistic(x, y, axis):
    return stats.mannwhitneyu(x, y, axis=axis, method='asymptotic').statistic

  return float(stats.permutation_test(
      (a, b), u_statistic, permutation_type='independent',
      n_resamples=np.inf, alternative='two-sided').pvalue)


def sign_test_p(lower: int, higher: int) -> float:
  """Two-sided p of the sign test: of `lower + higher` untied pairs (e.g.
  sizes, each compared by the two arms' medians), `lower` favour one arm
  (scipy's binomial test at 1/2); 1.0 when no pair is untied."""
  if lower < 0 or higher < 0:
    raise ValueError(f'sign_test_p counts must be >= 0; got {lower}, '
                     f'{higher}.')
  if lower + higher == 0:
    return 1.0
  return float(stats.binomtest(lower, lower + higher, 0.5).pvalue)


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
