"""The categorical and quantile projections against rlax and NumPy."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
from hypothesis import given
from hypothesis import strategies as st
import jax
import numpy as np
import rlax

from pe_jax import distances
from pe_jax import projections
from tests.core_testing import distribution_strategy
from tests.core_testing import normalised
from tests.core_testing import random_distribution
from tests import reference

# The property tests draw a new shape per example: jitted, each compiles
# once per shape, not once per operation (about 4x faster).
_categorical_projection_jit = jax.jit(projections.categorical_projection)
_quantile_projection_jit = jax.jit(projections.quantile_projection,
                                   static_argnums=2)
_wasserstein1_jit = jax.jit(distances.wasserstein1)


class CategoricalProjectionTest(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  # N x K >= 10,000 takes the binary search + scatter path, smaller the
  # dense hat pass.
  @parameterized.parameters((202, 101, False), (150, 80, True), (7, 5, True),
                            (30, 11, False))
  def test_matches_brute_force_and_rlax(self, n, k, uneven_support):
    rng = np.random.default_rng(n)
    atoms, probs = random_distribution(rng, n, ties=True, zeros=True)
    if uneven_support:
      support = np.sort(rng.normal(size=k) * 3).astype(np.float32)
    else:
      support = np.linspace(-4, 4, k).astype(np.float32)
    got = self.variant(projections.categorical_projection)(atoms, probs,
                                                           support)
    np.testing.assert_allclose(
        got, reference.categorical_projection(atoms, probs, support),
        atol=1e-5)
    np.testing.assert_allclose(
        got, rlax.categorical_l2_project(atoms, probs, support), atol=1e-6)

  @given(distribution_strategy(max_size=20))
  def test_keeps_mass_and_inner_mean(self, dist):
    atoms, probs = dist
    probs = normalised(probs)
    support = np.linspace(-60, 60, 13).astype(np.float32)
    projected = _categorical_projection_jit(atoms, probs, support)
    np.testing.assert_allclose(np.sum(projected), 1.0, rtol=1e-5)
    np.testing.assert_allclose(
        np.sum(projected * support), np.sum(atoms * probs), atol=1e-3)

  def test_mass_beyond_ends_goes_to_end_atoms(self):
    got = projections.categorical_projection(
        np.array([-10.0, 10.0]), np.array([0.25, 0.75]), np.arange(3.0))
    np.testing.assert_allclose(got, [0.25, 0.0, 0.75])

  def test_bad_input(self):
    p = np.full(3, 1 / 3, np.float32)
    with self.assertRaisesRegex(ValueError, 'support.*strictly increasing'):
      projections.categorical_projection(np.zeros(3), p, np.array([0., 2, 1]))
    with self.assertRaisesRegex(ValueError, 'support.*at least 2'):
      projections.categorical_projection(np.zeros(3), p, np.array([0.0]))
    with self.assertRaisesRegex(ValueError, 'probs.*non-negative'):
      projections.categorical_projection(np.zeros(3), -p, np.arange(3.0))
    with self.assertRaisesRegex(ValueError, 'atoms.*probs.*same shape'):
      projections.categorical_projection(np.zeros(4), p, np.arange(3.0))
    got = jax.jit(projections.categorical_projection)(
        np.zeros(3), p, np.array([0., 2, 1]))
    self.assertTrue(np.all(np.isnan(got)))

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters(3, 101)
  def test_nan_in_nan_out(self, k):
    atoms = np.zeros(100, np.float32)
    atoms[1] = np.nan
    got = self.variant(projections.categorical_projection)(
        atoms, np.full(100, 0.01, np.float32), np.arange(float(k)))
    self.assertTrue(np.all(np.isnan(got)))


class QuantileProjectionTest(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters((202, 101), (7, 5), (3, 12))
  def test_matches_inverse_cdf(self, n, k):
    rng = np.random.default_rng(n * k)
    atoms, probs = random_distribution(rng, n, ties=True, zeros=True)
    got = self.variant(projections.quantile_projection, static_argnums=2)(
        atoms, probs, k)
    taus = (2 * np.arange(k) + 1) / (2 * k)
    np.testing.assert_allclose(got, reference.inverse_cdf(atoms, probs, taus))

  @given(distribution_strategy(max_size=15), st.integers(2, 9),
         st.integers(0, 2**31 - 1))
  def test_no_worse_than_perturbed_atoms(self, dist, k, seed):
    atoms, probs = dist
    probs = normalised(probs)
    projected = _quantile_projection_jit(atoms, probs, k)
    uniform = np.full(k, 1 / k, np.float32)
    best = _wasserstein1_jit(projected, uniform, atoms, probs)
    rng = np.random.default_rng(seed)
    for scale in (0.01, 0.3, 3.0):
      other = np.asarray(projected) + rng.normal(size=k).astype(np.float32) * scale
      self.assertLessEqual(
          float(best),
          float(_wasserstein1_jit(other, uniform, atoms, probs)) + 1e-4)

  def test_bad_input(self):
    with self.assertRaisesRegex(ValueError, 'num_quantiles.*>= 2'):
      projections.quantile_projection(np.zeros(3), np.full(3, 1 / 3), 1)
    with self.assertRaisesRegex(ValueError, 'probs.*non-negative'):
      projections.quantile_projection(np.zeros(2), np.array([2.0, -1.0]), 3)

  def test_nan_in_nan_out(self):
    got = jax.jit(projections.quantile_projection, static_argnums=2)(
        np.array([0.0, np.nan, 2.0]), np.full(3, 1 / 3), 3)
    self.assertTrue(np.all(np.isnan(got)))


if __name__ == '__main__':
  absltest.main()
