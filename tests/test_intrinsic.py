"""pe_jax.intrinsic: member distributions and w_avg, against rlax and scipy."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
import jax.numpy as jnp
import numpy as np
import rlax
from scipy import stats

from pe_jax import intrinsic


class MemberDistributionsTest(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  def test_quantile_atoms_and_categorical_logits(self):
    outputs = jnp.array([[[0.5, 2.0, -1.0]], [[0.0, 0.0, jnp.log(2.0)]]])
    support = jnp.linspace(-1.0, 1.0, 3)
    atoms, probs = self.variant(intrinsic.member_distributions,
                                static_argnums=1)(outputs, 1, support)
    np.testing.assert_allclose(atoms[0, 0], [0.5, 2.0, -1.0])
    np.testing.assert_allclose(probs[0, 0], [1 / 3] * 3)
    np.testing.assert_allclose(atoms[1, 0], [-1.0, 0.0, 1.0])
    np.testing.assert_allclose(probs[1, 0], [0.25, 0.25, 0.5], rtol=1e-6)

  def test_a_support_of_another_size_is_refused(self):
    with self.assertRaises(AssertionError):
      intrinsic.member_distributions(jnp.zeros((2, 1, 3)), 1,
                                     jnp.linspace(-1.0, 1.0, 4))


class DisagreementTest(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  def test_projected_against_rlax_and_scipy(self):
    rng = np.random.default_rng(0)
    support = np.linspace(-1.0, 1.0, 11)
    # Quantile atoms partly outside the support, as a prior can put them.
    raw = rng.normal(scale=0.8, size=(2, 3, 11)).astype(np.float32)
    atoms, probs = intrinsic.member_distributions(jnp.asarray(raw), 1,
                                                  jnp.asarray(support))
    w_avg = self.variant(intrinsic.per_action_disagreement,
                         static_argnums=(2, 4))
    got = w_avg(atoms, probs, 1, jnp.asarray(support), True)
    exact = w_avg(atoms, probs, 1, jnp.asarray(support), False)
    chex.assert_shape([got, exact], (3,))
    for a in range(3):
      projected = rlax.categorical_l2_project(
          jnp.asarray(raw[0, a]), jnp.full(11, 1 / 11), jnp.asarray(support))
      want = stats.wasserstein_distance(support, support,
                                        np.asarray(projected),
                                        np.asarray(probs[1, a]))
      self.assertAlmostEqual(float(got[a]), want, places=5)
      # Exact: W1 between the quantile atoms and the categorical member.
      want_exact = stats.wasserstein_distance(raw[0, a], support,
                                              np.full(11, 1 / 11),
                                              np.asarray(probs[1, a]))
      self.assertAlmostEqual(float(exact[a]), want_exact, places=5)
    # The clipping and the projection change the estimate.
    self.assertGreater(float(np.max(np.abs(got - exact))), 1e-3)

  def test_members_of_one_support_need_no_projection(self):
    rng = np.random.default_rng(1)
    support = jnp.linspace(0.0, 2.0, 5)
    atoms, probs = intrinsic.member_distributions(
        jnp.asarray(rng.normal(size=(3, 4, 2, 5)), jnp.float32), 0, support)
    got = intrinsic.per_action_disagreement(atoms, probs, 0, support, True)
    chex.assert_shape(got, (4, 2))
    pairs = [(0, 1), (0, 2), (1, 2)]
    for b in range(4):
      for a in range(2):
        want = np.mean([stats.wasserstein_distance(
            support, support, probs[i, b, a], probs[j, b, a])
                        for i, j in pairs])
        self.assertAlmostEqual(float(got[b, a]), want, places=5)


if __name__ == '__main__':
  absltest.main()
