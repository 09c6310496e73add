"""The tests that say whether two arms' seeds separate them, against a
brute-force NumPy enumeration and scipy's closed forms."""

import itertools
import math

from absl.testing import absltest
from absl.testing import parameterized
import numpy as np
from scipy import stats

from experiments.lib import seed_statistics


def _mid_ranks(values):
  order = np.argsort(values, kind='stable')
  ranks = np.empty(len(values))
  ranks[order] = np.arange(1, len(values) + 1)
  for value in np.unique(values):  # Ties share their mean rank.
    ranks[values == value] = ranks[values == value].mean()
  return ranks


def _u(pooled, first):
  """U of the values at indices `first` of `pooled` against the rest."""
  ranks = _mid_ranks(pooled)
  n = len(first)
  return ranks[list(first)].sum() - n * (n + 1) / 2


def brute_force_rank_p(a, b):
  """Two-sided p over every split: twice the smaller tail, at most 1."""
  pooled = np.concatenate([a, b]).astype(np.float64)
  observed = _u(pooled, range(len(a)))
  us = np.array([_u(pooled, first) for first in
                 itertools.combinations(range(len(pooled)), len(a))])
  below = np.mean(us <= observed + 1e-9)
  above = np.mean(us >= observed - 1e-9)
  return min(1.0, 2 * min(below, above))


class RankTestTest(parameterized.TestCase):

  @parameterized.parameters(
      ([500, 600, 500], [900, 900, 900]),        # apart, with ties
      ([2001, 700, 700], [1400, 1700, 1000]),
      ([900, 700, 700, 900, 900], [600, 600, 600, 700, 600]),
      ([100, 100, 100], [100, 100, 100]),        # all tied
      ([1, 5, 9, 13], [2, 6, 7]),                # unequal sizes
  )
  def test_equals_the_enumeration_of_every_split(self, a, b):
    self.assertAlmostEqual(seed_statistics.rank_test_p(a, b),
                           brute_force_rank_p(a, b))

  def test_without_ties_equals_scipys_exact_mann_whitney(self):
    rng = np.random.default_rng(0)
    for n, m in ((3, 3), (5, 5), (4, 6)):
      a, b = rng.permutation(n + m)[:n], rng.permutation(n + m)[n:] + 0.5
      self.assertAlmostEqual(
          seed_statistics.rank_test_p(a, b),
          stats.mannwhitneyu(a, b, method='exact').pvalue)

  def test_three_seeds_against_three_never_go_below_a_tenth(self):
    self.assertAlmostEqual(seed_statistics.rank_test_p([1, 2, 3], [4, 5, 6]),
                           0.1)
    self.assertAlmostEqual(
        seed_statistics.rank_test_p(range(5), range(5, 10)), 2 / 252)

  def test_refuses_an_empty_or_nested_sample(self):
    with self.assertRaisesRegex(ValueError, 'non-empty 1-D'):
      seed_statistics.rank_test_p([], [1, 2])
    with self.assertRaisesRegex(ValueError, 'non-empty 1-D'):
      seed_statistics.rank_test_p([[1, 2]], [1, 2])


class SignTestTest(parameterized.TestCase):

  @parameterized.parameters((9, 0), (0, 8), (9, 6), (3, 3), (1, 0))
  def test_equals_the_binomial_sum(self, lower, higher):
    n = lower + higher
    tail = sum(math.comb(n, k) for k in range(min(lower, higher) + 1))
    self.assertAlmostEqual(seed_statistics.sign_test_p(lower, higher),
                           min(1.0, 2 * tail / 2**n))

  def test_no_untied_pair_is_no_evidence(self):
    self.assertEqual(seed_statistics.sign_test_p(0, 0), 1.0)
    with self.assertRaisesRegex(ValueError, '>= 0'):
      seed_statistics.sign_test_p(-1, 2)


if __name__ == '__main__':
  absltest.main()
