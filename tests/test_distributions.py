"""Distributions, mixtures and the Bellman push-forward against NumPy."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
import jax.numpy as jnp
import numpy as np
import scipy.stats

from pe_jax import distributions


class DistributionsTest(parameterized.TestCase):

  def test_mixture_weights(self):
    atoms = jnp.array([[0.0, 1.0], [2.0, 3.0]])
    probs = jnp.array([[0.5, 0.5], [0.9, 0.1]])
    flat_atoms, flat_probs = distributions.mixture(atoms, probs)
    np.testing.assert_allclose(flat_atoms, [0, 1, 2, 3])
    np.testing.assert_allclose(flat_probs, [0.25, 0.25, 0.45, 0.05])

  @chex.variants(with_jit=True, without_jit=True)
  def test_mixture_target_by_hand(self):
    # Members {0, 2} and {-1: 0.5, 1: 0.5}; r = 1, discount 0.5: atoms
    # 1 + 0.5 z, each member's mass halved.
    atoms = jnp.array([[0.0, 2.0], [-1.0, 1.0]])
    probs = jnp.array([[0.5, 0.5], [0.5, 0.5]])
    target, target_probs = self.variant(distributions.mixture_target)(
        atoms, probs, jnp.array(1.0), jnp.array(0.5))
    np.testing.assert_allclose(target, [1.0, 2.0, 0.5, 1.5])
    np.testing.assert_allclose(target_probs, [0.25] * 4)
    # At an episode's end every atom collapses onto the reward.
    ended, _ = distributions.mixture_target(atoms, probs, jnp.array(1.0),
                                            jnp.array(0.0))
    np.testing.assert_allclose(ended, [1.0] * 4)

  def test_pushforward_and_terminal(self):
    atoms = jnp.array([1.0, 2.0])
    np.testing.assert_allclose(
        distributions.bellman_pushforward(atoms, jnp.array(1.0),
                                          jnp.array(0.5)), [1.5, 2.0])
    np.testing.assert_allclose(
        distributions.bellman_pushforward(atoms, jnp.array(1.0),
                                          jnp.array(0.0)), [1.0, 1.0])

  @chex.variants(with_jit=True, without_jit=True)
  def test_moments_match_scipy(self):
    rng = np.random.default_rng(7)
    samples = rng.gamma(2.0, size=64).astype(np.float32)
    probs = np.full(64, 1 / 64, np.float32)
    got = self.variant(distributions.moments)(samples, probs)
    np.testing.assert_allclose(got.mean, samples.mean(), rtol=1e-5)
    np.testing.assert_allclose(got.variance, samples.var(), rtol=1e-4)
    np.testing.assert_allclose(got.skewness, scipy.stats.skew(samples),
                               rtol=1e-3)
    np.testing.assert_allclose(got.kurtosis, scipy.stats.kurtosis(samples),
                               rtol=1e-3)

  def test_weighted_moments_equal_repeated_samples(self):
    atoms = np.array([0.0, 1.0, 5.0], np.float32)
    got = distributions.moments(atoms, np.array([0.5, 0.25, 0.25], np.float32))
    repeated = np.array([0.0, 0.0, 1.0, 5.0])
    np.testing.assert_allclose(got.skewness, scipy.stats.skew(repeated),
                               rtol=1e-5)
    np.testing.assert_allclose(got.kurtosis, scipy.stats.kurtosis(repeated),
                               rtol=1e-5)

  def test_point_mass_moments_are_finite(self):
    got = distributions.moments(jnp.array([2.0, 2.0]), jnp.array([0.5, 0.5]))
    np.testing.assert_allclose(got, [2.0, 0.0, 0.0, 0.0])

  def test_categorical_distribution_checks_support(self):
    with self.assertRaisesRegex(ValueError, 'support'):
      distributions.categorical_distribution(jnp.zeros(3),
                                             jnp.array([0.0, 0.0, 1.0]))


if __name__ == '__main__':
  absltest.main()
