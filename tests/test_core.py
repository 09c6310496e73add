"""Core functions against scipy, rlax and brute-force NumPy references."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
from hypothesis import given
from hypothesis import strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import rlax
import scipy.stats

from pe_jax import distances
from pe_jax import distributions
from pe_jax import losses
from pe_jax import projections
from pe_jax import sorting
from tests import reference


def random_distribution(rng, n, ties=False, zeros=False):
  atoms = rng.normal(size=n).astype(np.float32) * 3
  if ties:
    atoms[: n // 2] = atoms[0]
  probs = rng.random(n).astype(np.float32)
  if zeros:
    probs[::3] = 0.0
  return atoms, probs / probs.sum()


finite = st.floats(-50, 50, allow_nan=False, width=32)


def distribution_strategy(min_size=1, max_size=12):
  return st.lists(st.tuples(finite, st.floats(0.0, 1.0, width=32)),
                  min_size=min_size, max_size=max_size).filter(
                      lambda xs: sum(p for _, p in xs) > 1e-3).map(
                          lambda xs: (np.array([x for x, _ in xs], np.float32),
                                      np.array([p for _, p in xs], np.float64)))


def normalised(probs):
  return (probs / probs.sum()).astype(np.float32)


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
        distances.wasserstein1(xa, pa, xb, pb),
        distances.wasserstein1(xb, pb, xa, pa), rtol=1e-5, atol=1e-4)

  @given(distribution_strategy(), distribution_strategy(),
         distribution_strategy())
  def test_triangle_inequality(self, a, b, c):
    (xa, pa), (xb, pb), (xc, pc) = a, b, c
    pa, pb, pc = normalised(pa), normalised(pb), normalised(pc)
    ab = distances.wasserstein1(xa, pa, xb, pb)
    bc = distances.wasserstein1(xb, pb, xc, pc)
    ac = distances.wasserstein1(xa, pa, xc, pc)
    self.assertLessEqual(float(ac), float(ab + bc) + 1e-3)

  @given(finite, finite)
  def test_point_masses(self, x, y):
    one = np.ones(1, np.float32)
    got = distances.wasserstein1(np.array([x], np.float32), one,
                                 np.array([y], np.float32), one)
    np.testing.assert_allclose(got, abs(np.float32(x) - np.float32(y)),
                               rtol=1e-6, atol=1e-5)

  @given(distribution_strategy(), distribution_strategy(),
         st.floats(-20, 20, width=32))
  def test_translation_invariant(self, a, b, shift):
    (xa, pa), (xb, pb) = a, b
    pa, pb = normalised(pa), normalised(pb)
    base = distances.wasserstein1(xa, pa, xb, pb)
    moved = distances.wasserstein1(xa + np.float32(shift), pa,
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
    projected = projections.categorical_projection(atoms, probs, support)
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
    projected = projections.quantile_projection(atoms, probs, k)
    uniform = np.full(k, 1 / k, np.float32)
    best = distances.wasserstein1(projected, uniform, atoms, probs)
    rng = np.random.default_rng(seed)
    for scale in (0.01, 0.3, 3.0):
      other = np.asarray(projected) + rng.normal(size=k).astype(np.float32) * scale
      self.assertLessEqual(
          float(best),
          float(distances.wasserstein1(other, uniform, atoms, probs)) + 1e-4)

  def test_bad_input(self):
    with self.assertRaisesRegex(ValueError, 'num_quantiles.*>= 2'):
      projections.quantile_projection(np.zeros(3), np.full(3, 1 / 3), 1)
    with self.assertRaisesRegex(ValueError, 'probs.*non-negative'):
      projections.quantile_projection(np.zeros(2), np.array([2.0, -1.0]), 3)

  def test_nan_in_nan_out(self):
    got = jax.jit(projections.quantile_projection, static_argnums=2)(
        np.array([0.0, np.nan, 2.0]), np.full(3, 1 / 3), 3)
    self.assertTrue(np.all(np.isnan(got)))


class LossesTest(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters(0.0, 1.0)
  def test_quantile_loss_and_gradient_match_rlax_for_uniform_targets(
      self, huber):
    rng = np.random.default_rng(3)
    locations = rng.normal(size=11).astype(np.float32)
    targets = rng.normal(size=13).astype(np.float32)
    uniform = np.full(13, 1 / 13, np.float32)
    taus = projections.quantile_midpoints(11)
    loss_and_grad = jax.value_and_grad(losses.quantile_regression_loss)
    got = self.variant(loss_and_grad, static_argnums=3)(locations, targets,
                                                        uniform, huber)
    want = jax.value_and_grad(rlax.quantile_regression_loss)(
        locations, taus, targets, huber)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-7)
    self.assertGreater(float(np.abs(got[1]).max()), 1e-3)

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters(0.0, 1.0)
  def test_quantile_loss_matches_brute_force_for_weighted_targets(self, huber):
    rng = np.random.default_rng(4)
    locations = rng.normal(size=5).astype(np.float32)
    targets, probs = random_distribution(rng, 8, zeros=True)
    got = self.variant(losses.quantile_regression_loss, static_argnums=3)(
        locations, targets, probs, huber)
    np.testing.assert_allclose(
        got, reference.quantile_loss(locations, targets, probs, huber),
        rtol=1e-5)
    # Gradient against central differences of the NumPy loss (float64; the
    # loss is piecewise linear / quadratic, and no kink lies within eps).
    grad = self.variant(jax.grad(losses.quantile_regression_loss),
                        static_argnums=3)(locations, targets, probs, huber)
    eps = 1e-6
    want = [(reference.quantile_loss(locations.astype(np.float64) + eps * e,
                                     targets, probs, huber) -
             reference.quantile_loss(locations.astype(np.float64) - eps * e,
                                     targets, probs, huber)) / (2 * eps)
            for e in np.eye(5)]
    np.testing.assert_allclose(grad, want, rtol=1e-4, atol=1e-5)

  @chex.variants(with_jit=True, without_jit=True)
  # Fewer than 64 rows: one comparison matrix; 64 and more: the sort path,
  # padded (K = 5 -> 8) or not (K = 8). Ties between locations and targets.
  @parameterized.parameters(((3,), 5, 9), ((2, 3), 8, 4), ((70,), 5, 9),
                            ((8, 9), 8, 16), ((64,), 2, 3))
  def test_quantile_loss_batch_matches_brute_force_per_row(
      self, batch_shape, k, n):
    rng = np.random.default_rng(k * n)
    rows = int(np.prod(batch_shape))
    locations = rng.normal(size=(rows, k)).astype(np.float32)
    locations[:, 1] = locations[:, 0]
    targets = [random_distribution(rng, n, ties=True, zeros=True)
               for _ in range(rows)]
    atoms = np.stack([t[0] for t in targets])
    probs = np.stack([t[1] for t in targets])
    atoms[:, -1] = locations[:, 0]
    shaped = lambda x: x.reshape(batch_shape + (-1,))

    def total_and_per_row(x):
      per_row = losses.quantile_regression_loss(x, shaped(atoms),
                                                shaped(probs))
      return jnp.sum(per_row), per_row

    (_, per_row), grad = self.variant(jax.value_and_grad(
        total_and_per_row, has_aux=True))(shaped(locations))
    self.assertEqual(per_row.shape, batch_shape)
    want = [reference.quantile_loss(l, a, p)
            for l, a, p in zip(locations, atoms, probs)]
    np.testing.assert_allclose(np.ravel(per_row), want, rtol=1e-5,
                               atol=1e-6)
    # d loss / d theta_k = F(theta_k) - tau_k with F counting atoms < theta_k.
    taus = (2 * np.arange(k) + 1) / (2 * k)
    want_grad = [[np.sum(p[a < t]) - tau for t, tau in zip(l, taus)]
                 for l, a, p in zip(locations, atoms, probs)]
    np.testing.assert_allclose(np.reshape(grad, (rows, k)), want_grad,
                               atol=1e-5)
    huber = self.variant(losses.quantile_regression_loss, static_argnums=3)(
        shaped(locations), shaped(atoms), shaped(probs), 1.0)
    self.assertEqual(huber.shape, batch_shape)
    np.testing.assert_allclose(
        np.ravel(huber), [reference.quantile_loss(l, a, p, 1.0)
                          for l, a, p in zip(locations, atoms, probs)],
        rtol=1e-5, atol=1e-6)

  # Under jit (eagerly, bad probabilities raise instead).
  @parameterized.parameters(3, 70)
  def test_quantile_loss_nan_only_in_bad_rows(self, rows):
    rng = np.random.default_rng(rows)
    locations = rng.normal(size=(rows, 4)).astype(np.float32)
    atoms = rng.normal(size=(rows, 6)).astype(np.float32)
    probs = np.full((rows, 6), 1 / 6, np.float32)
    probs[1, 2] = -1 / 6
    probs[2, 0] = np.nan
    got = jax.jit(losses.quantile_regression_loss)(locations, atoms, probs)
    self.assertTrue(np.all(np.isnan(got[1:3])))
    good = np.r_[0, 3:rows]
    np.testing.assert_allclose(
        got[good], [reference.quantile_loss(locations[i], atoms[i], probs[i])
                    for i in good], rtol=1e-5)

  def test_quantile_loss_hand_computed(self):
    # K = 2 (taus 1/4, 3/4), one target atom at 1: theta_1 = 0 under-predicts
    # (weight 1/4, |u| = 1), theta_2 = 2 over-predicts (weight 1/4, |u| = 1).
    got = losses.quantile_regression_loss(
        jnp.array([0.0, 2.0]), jnp.array([1.0]), jnp.array([1.0]))
    np.testing.assert_allclose(got, 0.5)

  def test_quantile_loss_minimised_by_projection(self):
    rng = np.random.default_rng(5)
    targets, probs = random_distribution(rng, 40)
    best = projections.quantile_projection(targets, probs, 7)
    grad = jax.grad(losses.quantile_regression_loss)(best, targets, probs)
    # At theta_k = F^-1(tau_k) the derivative F(theta_k-) - tau_k lies within
    # the mass of the atom at theta_k: the projection minimises the loss.
    self.assertLessEqual(float(jnp.max(jnp.abs(grad))), float(probs.max()) + 1e-6)
    worse = losses.quantile_regression_loss(best + 0.05, targets, probs)
    self.assertLess(float(losses.quantile_regression_loss(best, targets, probs)),
                    float(worse))

  def test_no_gradient_into_targets(self):
    f = lambda t, p: losses.quantile_regression_loss(jnp.zeros(3), t, p)
    gt, gp = jax.grad(f, argnums=(0, 1))(jnp.ones(4), jnp.full(4, 0.25))
    np.testing.assert_array_equal(gt, 0.0)
    np.testing.assert_array_equal(gp, 0.0)
    g = lambda t: losses.categorical_cross_entropy_loss(
        jnp.zeros(5), jnp.arange(5.0), t, jnp.full(4, 0.25))
    np.testing.assert_array_equal(jax.grad(g)(jnp.ones(4) * 1.3), 0.0)

  @chex.variants(with_jit=True, without_jit=True)
  def test_cross_entropy_matches_numpy(self):
    rng = np.random.default_rng(6)
    logits = rng.normal(size=11).astype(np.float32)
    support = np.linspace(-2, 2, 11).astype(np.float32)
    targets, probs = random_distribution(rng, 22)
    got = self.variant(losses.categorical_cross_entropy_loss)(
        logits, support, targets, probs)
    projected = reference.categorical_projection(targets, probs, support)
    log_softmax = logits - np.log(np.sum(np.exp(logits)))
    np.testing.assert_allclose(got, -np.sum(projected * log_softmax),
                               rtol=1e-5)

  def test_cross_entropy_gradient_is_softmax_minus_target(self):
    support = jnp.arange(3.0)
    logits = jnp.array([0.1, -0.3, 0.5])
    grad = jax.grad(losses.categorical_cross_entropy_loss)(
        logits, support, jnp.array([0.5]), jnp.array([1.0]))
    np.testing.assert_allclose(grad, jax.nn.softmax(logits) - jnp.array(
        [0.5, 0.5, 0.0]), atol=1e-6)

  def test_bad_input(self):
    with self.assertRaisesRegex(ValueError, 'huber_param'):
      losses.quantile_regression_loss(jnp.zeros(3), jnp.zeros(2),
                                      jnp.full(2, 0.5), -1.0)
    with self.assertRaisesRegex(ValueError, 'target_atoms.*target_probs'):
      losses.quantile_regression_loss(jnp.zeros(3), jnp.zeros(2),
                                      jnp.full(3, 0.5))
    with self.assertRaisesRegex(ValueError, 'logits.*support'):
      losses.categorical_cross_entropy_loss(jnp.zeros(3), jnp.arange(4.0),
                                            jnp.zeros(2), jnp.full(2, 0.5))


class DistributionsTest(parameterized.TestCase):

  def test_mixture_weights(self):
    atoms = jnp.array([[0.0, 1.0], [2.0, 3.0]])
    probs = jnp.array([[0.5, 0.5], [0.9, 0.1]])
    flat_atoms, flat_probs = distributions.mixture(atoms, probs)
    np.testing.assert_allclose(flat_atoms, [0, 1, 2, 3])
    np.testing.assert_allclose(flat_probs, [0.25, 0.25, 0.45, 0.05])

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
