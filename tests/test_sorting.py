"""The vectorised sorting network against NumPy."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
import numpy as np

from pe_jax import sorting


class SortingTest(parameterized.TestCase):
  """Column sorting, counting and cumulative sums against NumPy."""

  @chex.variants(with_jit=True, without_jit=True)
  # Fewer than 64 columns: XLA's sort; 64 and more: the network, padded
  # (n = 5 -> 8) or not (n = 16).
  @parameterized.parameters((5, 3), (5, 70), (16, 64))
  def test_sort_columns_matches_numpy(self, n, columns):
    rng = np.random.default_rng(n + columns)
    keys = rng.integers(0, 4, size=(n, columns)).astype(np.float32)  # Ties.
    values = rng.normal(size=(n, columns)).astype(np.float32)
    got_keys, got_values = self.variant(
        sorting.sort_columns, static_argnums=2)(keys, values, -9.0)
    size = got_keys.shape[0]
    self.assertEqual(size, n if columns < 64 else 1 << (n - 1).bit_length())
    np.testing.assert_array_equal(got_keys[:n], np.sort(keys, 0))
    np.testing.assert_array_equal(got_keys[n:],
                                  np.broadcast_to(keys.max(0), (size - n,
                                                                columns)))
    for c in range(columns):
      # Every (key, value) pair survives, padding pairs carry the fill value.
      want = sorted(zip(keys[:, c], values[:, c])) + [
          (keys[:, c].max(), -9.0)] * (size - n)
      self.assertEqual(sorted(zip(got_keys[:, c], got_values[:, c])),
                       sorted(want))

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters(1, 7, 8, 128)
  def test_count_not_greater_matches_searchsorted(self, size):
    rng = np.random.default_rng(size)
    keys = np.sort(rng.integers(0, 5, size=(size, 6)), 0).astype(np.float32)
    queries = rng.integers(-1, 6, size=(9, 6)).astype(np.float32)
    queries[0] = np.nan
    got = self.variant(sorting.count_not_greater)(keys, queries)
    want = np.stack([np.searchsorted(keys[:, c], queries[:, c], side='right')
                     for c in range(6)], 1)
    want[0] = 0
    np.testing.assert_array_equal(got, want)

  @chex.variants(with_jit=True, without_jit=True)
  def test_cumulative_sum_matches_numpy(self):
    x = np.random.default_rng(0).normal(size=(9, 4, 2)).astype(np.float32)
    np.testing.assert_allclose(self.variant(sorting.cumulative_sum)(x),
                               np.cumsum(x, 0), rtol=1e-5, atol=1e-6)


if __name__ == '__main__':
  absltest.main()
