"""The losses against rlax and brute-force NumPy."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
import jax
import jax.numpy as jnp
import numpy as np
import rlax

from pe_jax import losses
from pe_jax import projections
from tests.core_testing import random_distribution
from tests import reference


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


class ProjectionEnsembleLossTest(parameterized.TestCase):
  """The batched loss of mixed ensembles against rlax's quantile loss and
  a member-by-member cross-entropy to NumPy's projection."""

  B, M, K, N = 3, 3, 5, 7

  def _model(self, rng, support):
    outputs = rng.normal(size=(self.B, self.M, self.K)).astype(np.float32)
    atoms = rng.normal(size=(self.B, self.M, self.N)).astype(np.float32)
    probs = rng.dirichlet(np.ones(self.N),
                          size=(self.B, self.M)).astype(np.float32)
    return outputs, atoms, probs, support

  def _reference(self, models, num_quantile, huber):
    """Each member's loss on its own: rlax for the quantile members (their
    targets' atoms drawn by weight; the loss is linear in the weights), the
    cross-entropy to `reference`'s projection for the categorical ones."""
    taus = projections.quantile_midpoints(self.K)
    total = np.zeros(self.B)
    for outputs, atoms, probs, support in models:
      for b in range(self.B):
        for m in range(self.M):
          if m < num_quantile:
            per_atom = [float(rlax.quantile_regression_loss(
                outputs[b, m], taus, atoms[b, m, j:j + 1], huber))
                        for j in range(self.N)]
            total[b] += np.dot(probs[b, m], per_atom)
          else:
            projected = reference.categorical_projection(
                atoms[b, m], probs[b, m], np.asarray(support))
            log_probs = np.asarray(jax.nn.log_softmax(outputs[b, m]))
            total[b] -= np.dot(projected, log_probs)
    return total

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.product(num_quantile=(0, 1, 3), num_models=(1, 2),
                         huber=(0.0, 1.0))
  def test_matches_member_by_member(self, num_quantile, num_models, huber):
    rng = np.random.default_rng(num_quantile + 10 * num_models)
    supports = (jnp.linspace(-2.0, 2.0, self.K), jnp.linspace(0.0, 4.0,
                                                              self.K))
    models = [self._model(rng, supports[i]) for i in range(num_models)]
    got = self.variant(losses.projection_ensemble_loss,
                       static_argnums=(1, 2))(models, num_quantile, huber)
    self.assertEqual(got.shape, (self.B,))
    np.testing.assert_allclose(
        got, self._reference(models, num_quantile, huber), rtol=1e-4,
        atol=1e-5)

  def test_bad_arguments_raise_naming_them(self):
    model = self._model(np.random.default_rng(0), jnp.linspace(-1, 1, self.K))
    with self.assertRaisesRegex(ValueError, '`num_quantile` must be in'):
      losses.projection_ensemble_loss([model], self.M + 1)
    with self.assertRaisesRegex(ValueError, '`outputs` must have rank 3'):
      losses.projection_ensemble_loss([(model[0][0],) + model[1:]], 1)
    with self.assertRaisesRegex(ValueError, 'same number of members'):
      losses.projection_ensemble_loss(
          [model, tuple(x[:, :2] for x in model[:3]) + model[3:]], 1)


if __name__ == '__main__':
  absltest.main()
