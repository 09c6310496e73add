"""W1 distances and ensemble disagreement against scipy and NumPy."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
from hypothesis import given
from hypothesis import strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats

from pe_jax import distances
from pe_jax import projections
from tests.core_testing import distribution_strategy
from tests.core_testing import finite
from tests.core_testing import normalised
from tests.core_testing import random_distribution
from tests import reference

# The property tests draw a new shape per example: jitted, each compiles
# once per shape, not once per operation (about 4x faster).
_wasserstein1_jit = jax.jit(distances.wasserstein1)


class Wasserstein1Test(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters((5, 7, False, False), (101, 101, True, False),
                            (30, 3, False, True), (1, 1, False, False))
  def test_matches_scipy(self, n, m, ties, zeros):
    rng = np.random.default_rng(n + m)
    a, pa = random_distribution(rng, n, ties, zeros)
    b, pb = random_distribution(rng, m, ties, zeros)
    got = self.variant(distances.wasserstein1)(a, pa, b, pb)
    want = scipy.stats.wasserstein_distance(a, b, pa, pb)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

  @chex.variants(with_jit=True, without_jit=True)
  def test_quantile_vs_categorical_matches_quantile_function_integral(self):
    rng = np.random.default_rng(0)
    locations = np.sort(rng.normal(size=11)).astype(np.float32)
    support = np.linspace(-3, 3, 11).astype(np.float32)
    probs = np.asarray(jax.nn.softmax(rng.normal(size=11)), np.float32)
    uniform = np.full(11, 1 / 11, np.float32)
    got = self.variant(distances.wasserstein1)(locations, uniform, support,
                                               probs)
    want = reference.w1_from_quantile_functions(locations, uniform, support,
                                                probs)
    np.testing.assert_allclose(got, want, rtol=1e-3)

  @given(distribution_strategy(), distribution_strategy())
  def test_symmetric(self, a, b):
    (xa, pa), (xb, pb) = a, b
    pa, pb = normalised(pa), normalised(pb)
    np.testing.assert_allclose(
        _wasserstein1_jit(xa, pa, xb, pb),
        _wasserstein1_jit(xb, pb, xa, pa), rtol=1e-5, atol=1e-4)

  @given(distribution_strategy(), distribution_strategy(),
         distribution_strategy())
  def test_triangle_inequality(self, a, b, c):
    (xa, pa), (xb, pb), (xc, pc) = a, b, c
    pa, pb, pc = normalised(pa), normalised(pb), normalised(pc)
    ab = _wasserstein1_jit(xa, pa, xb, pb)
    bc = _wasserstein1_jit(xb, pb, xc, pc)
    ac = _wasserstein1_jit(xa, pa, xc, pc)
    self.assertLessEqual(float(ac), float(ab + bc) + 1e-3)

  @given(finite, finite)
  def test_point_masses(self, x, y):
    one = np.ones(1, np.float32)
    got = _wasserstein1_jit(np.array([x], np.float32), one,
                            np.array([y], np.float32), one)
    np.testing.assert_allclose(got, abs(np.float32(x) - np.float32(y)),
                               rtol=1e-6, atol=1e-5)

  @given(distribution_strategy(), distribution_strategy(),
         st.floats(-20, 20, width=32))
  def test_translation_invariant(self, a, b, shift):
    (xa, pa), (xb, pb) = a, b
    pa, pb = normalised(pa), normalised(pb)
    base = _wasserstein1_jit(xa, pa, xb, pb)
    moved = _wasserstein1_jit(xa + np.float32(shift), pa,
                              xb + np.float32(shift), pb)
    np.testing.assert_allclose(moved, base, rtol=1e-4, atol=1e-3)

  @chex.variants(with_jit=True, without_jit=True)
  # 64 rows and more take the sorting network, fewer take XLA's sort.
  @parameterized.parameters(((7,), 5, 9), ((3, 4), 101, 101), ((2,), 1, 3),
                            ((8, 9), 101, 101), ((70,), 3, 2), ((64,), 1, 2))
  def test_batch_matches_scipy_per_row(self, batch_shape, n, m):
    rng = np.random.default_rng(n * m)
    rows = [(random_distribution(rng, n, ties=True),
             random_distribution(rng, m, zeros=True))
            for _ in range(int(np.prod(batch_shape)))]
    stack = lambda i, j: np.stack([r[i][j] for r in rows]).reshape(
        batch_shape + (-1,))
    got = self.variant(distances.wasserstein1)(stack(0, 0), stack(0, 1),
                                               stack(1, 0), stack(1, 1))
    want = [scipy.stats.wasserstein_distance(a, b, pa, pb)
            for (a, pa), (b, pb) in rows]
    self.assertEqual(got.shape, batch_shape)
    np.testing.assert_allclose(np.ravel(got), want, rtol=1e-5, atol=1e-5)

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters(3, 80)
  def test_nan_only_in_bad_rows(self, rows):
    atoms = np.tile(np.array([0.0, 1.0, 2.0], np.float32), (rows, 1))
    atoms[1, 1] = np.inf
    probs = np.full((rows, 3), 1 / 3, np.float32)
    other = np.tile(np.array([0.5, 0.5, 0.0], np.float32), (rows, 1))
    other[2, 2] = np.nan
    got = self.variant(distances.wasserstein1)(atoms, probs, atoms, other)
    want = scipy.stats.wasserstein_distance(atoms[0], atoms[0], probs[0],
                                            other[0])
    np.testing.assert_allclose(np.delete(got, [1, 2]), want, rtol=1e-5)
    self.assertTrue(np.isnan(got[1]))
    self.assertTrue(np.isnan(got[2]))

  @chex.variants(with_jit=True, without_jit=True)
  def test_nan_in_nan_out(self):
    a = np.array([0.0, np.nan, 1.0], np.float32)
    p = np.full(3, 1 / 3, np.float32)
    self.assertTrue(np.isnan(self.variant(distances.wasserstein1)(a, p, a, p)))
    q = np.array([0.5, np.nan, 0.5], np.float32)
    b = np.array([0.0, 1.0, 2.0], np.float32)
    self.assertTrue(np.isnan(self.variant(distances.wasserstein1)(b, q, b, p)))

  def test_bad_input(self):
    p = np.full(3, 1 / 3, np.float32)
    with self.assertRaisesRegex(ValueError, 'atoms_a.*probs_a'):
      distances.wasserstein1(np.zeros(4), p, np.zeros(3), p)
    with self.assertRaisesRegex(ValueError, 'probs_b.*non-negative'):
      distances.wasserstein1(np.zeros(3), p, np.zeros(3),
                             np.array([1.5, -0.5, 0.0]))
    with self.assertRaisesRegex(ValueError, 'atoms_a.*rank >= 1'):
      distances.wasserstein1(np.float32(0), np.float32(1), np.zeros(3), p)
    with self.assertRaisesRegex(ValueError, 'leading'):
      distances.wasserstein1(np.zeros((2, 3)), np.full((2, 3), 1 / 3),
                             np.zeros(3), p)
    # Under jit a negative probability cannot raise: it poisons the result.
    got = jax.jit(distances.wasserstein1)(
        np.zeros(3), p, np.arange(3.0), np.array([1.5, -0.5, 0.0]))
    self.assertTrue(np.isnan(got))


class EnsembleDisagreementTest(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters(2, 3, 5)
  def test_matches_pairwise_scipy(self, num_members):
    rng = np.random.default_rng(num_members)
    pairs = [random_distribution(rng, 9) for _ in range(num_members)]
    atoms = np.stack([a for a, _ in pairs])
    probs = np.stack([p for _, p in pairs])
    got = self.variant(distances.ensemble_disagreement)(atoms, probs)
    total = sum(
        scipy.stats.wasserstein_distance(atoms[i], atoms[j], probs[i], probs[j])
        for i in range(num_members) for j in range(num_members) if i != j)
    np.testing.assert_allclose(
        got, total / (num_members * (num_members - 1)), rtol=1e-5)

  def test_vmaps_over_batch(self):
    rng = np.random.default_rng(1)
    atoms = rng.normal(size=(6, 2, 5)).astype(np.float32)
    probs = np.full((6, 2, 5), 0.2, np.float32)
    got = jax.jit(jax.vmap(distances.ensemble_disagreement))(atoms, probs)
    want = [scipy.stats.wasserstein_distance(a[0], a[1]) for a in atoms]
    np.testing.assert_allclose(got, want, rtol=1e-5)

  @chex.variants(with_jit=True, without_jit=True)
  def test_batch_leading_dims_match_vmap(self):
    rng = np.random.default_rng(2)
    atoms = rng.normal(size=(4, 3, 3, 7)).astype(np.float32)
    probs = rng.dirichlet(np.ones(7), size=(4, 3, 3)).astype(np.float32)
    got = self.variant(distances.ensemble_disagreement)(atoms, probs)
    want = jax.vmap(jax.vmap(distances.ensemble_disagreement))(atoms, probs)
    self.assertEqual(got.shape, (4, 3))
    np.testing.assert_allclose(got, want, rtol=1e-5)

  @parameterized.parameters(0.0, 0.1, 0.5, 0.85)
  def test_exact_disagreement_floor_of_a_perfect_fit(self, x):
    # Both members fit the same Dirac return v exactly as their projections
    # allow: the quantile member is v itself, the categorical member its
    # Cramér projection onto the support. Their exact W1 never reaches 0:
    # 2 x (1 - x) dz for v at x of the way between two atoms (by hand:
    # mass 1 - x at distance x dz, mass x at (1 - x) dz). Projecting the
    # quantile member onto the support first (the authors' estimate)
    # removes that floor.
    support = np.linspace(-1.0, 1.0, 101)
    dz = support[1] - support[0]
    v = support[40] + x * dz
    quantile_atoms, quantile_probs = np.full(101, v), np.full(101, 1 / 101)
    categorical = projections.categorical_projection(
        jnp.array([v]), jnp.array([1.0]), jnp.asarray(support))
    exact = distances.ensemble_disagreement(
        jnp.stack([jnp.asarray(quantile_atoms), jnp.asarray(support)]),
        jnp.stack([jnp.asarray(quantile_probs), categorical]))
    self.assertAlmostEqual(float(exact), 2 * x * (1 - x) * dz, places=5)
    self.assertAlmostEqual(
        float(exact), scipy.stats.wasserstein_distance(
            quantile_atoms, support, quantile_probs, np.asarray(categorical)),
        places=5)
    projected_quantile = projections.categorical_projection(
        jnp.asarray(quantile_atoms), jnp.asarray(quantile_probs),
        jnp.asarray(support))
    projected = distances.ensemble_disagreement(
        jnp.stack([jnp.asarray(support)] * 2),
        jnp.stack([projected_quantile, categorical]))
    self.assertAlmostEqual(float(projected), 0.0, delta=1e-5)  # float32

  def test_needs_two_members(self):
    with self.assertRaisesRegex(ValueError, 'atoms.*at least 2'):
      distances.ensemble_disagreement(np.zeros((1, 5)), np.full((1, 5), 0.2))


class EnsembleDisagreementOnSupportTest(parameterized.TestCase):
  """Members on one shared support: the CDF form against scipy and the
  general (sorting) `ensemble_disagreement`."""

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters((2, False), (3, True), (5, False))
  def test_matches_pairwise_scipy(self, num_members, uneven_support):
    rng = np.random.default_rng(num_members)
    support = (np.sort(rng.normal(size=11)) if uneven_support
               else np.linspace(-1.0, 1.0, 11)).astype(np.float32)
    probs = rng.dirichlet(np.full(11, 0.5), size=num_members).astype(
        np.float32)
    probs[0, 3] = 0.0  # Zero mass on an atom.
    probs[0] /= probs[0].sum()
    got = self.variant(distances.ensemble_disagreement_on_support)(
        probs, support)
    total = sum(
        scipy.stats.wasserstein_distance(support, support, probs[i], probs[j])
        for i in range(num_members) for j in range(num_members) if i != j)
    np.testing.assert_allclose(
        got, total / (num_members * (num_members - 1)), rtol=1e-5)

  @chex.variants(with_jit=True, without_jit=True)
  def test_equals_the_general_disagreement_on_a_batch(self):
    rng = np.random.default_rng(3)
    support = np.linspace(-2.0, 3.0, 101).astype(np.float32)
    probs = rng.dirichlet(np.ones(101), size=(4, 3, 2)).astype(np.float32)
    got = self.variant(distances.ensemble_disagreement_on_support)(
        probs, support)
    want = distances.ensemble_disagreement(
        np.broadcast_to(support, probs.shape), probs)
    self.assertEqual(got.shape, (4, 3))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-7)
    # Identical members: no disagreement.
    same = np.broadcast_to(probs[:, :, :1], probs.shape)
    np.testing.assert_allclose(
        distances.ensemble_disagreement_on_support(same, support), 0.0,
        atol=1e-7)

  def test_nan_in_nan_out_per_batch_item(self):
    probs = np.full((3, 2, 4), 0.25, np.float32)
    probs[1, 0, 2] = np.nan
    got = distances.ensemble_disagreement_on_support(
        probs, np.arange(4.0, dtype=np.float32))
    self.assertTrue(np.isnan(got[1]))
    np.testing.assert_allclose(np.asarray(got)[[0, 2]], 0.0)

  def test_bad_input_is_named(self):
    with self.assertRaisesRegex(ValueError, 'probs.*at least 2'):
      distances.ensemble_disagreement_on_support(np.full((1, 4), 0.25),
                                                 np.arange(4.0))
    with self.assertRaisesRegex(ValueError, '`support` must have shape'):
      distances.ensemble_disagreement_on_support(np.full((2, 4), 0.25),
                                                 np.arange(5.0))
    with self.assertRaisesRegex(ValueError, '`support` must be strictly'):
      distances.ensemble_disagreement_on_support(np.full((2, 4), 0.25),
                                                 np.array([0.0, 2.0, 1.0, 3.0]))


if __name__ == '__main__':
  absltest.main()
