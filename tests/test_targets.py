"""pe_jax.targets: Eq. 10 and Eq. 17's targets against NumPy loops."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
import jax.numpy as jnp
import numpy as np

from pe_jax import targets

M, A, K = 3, 4, 5


def _members(rng):
  """[M, A, K] atoms and probabilities of M random members."""
  atoms = rng.normal(size=(M, A, K)).astype(np.float32)
  probs = rng.dirichlet(np.ones(K), size=(M, A)).astype(np.float32)
  return atoms, probs


def _mixture_row(atoms, probs, action, reward, discount):
  """NumPy: the equal mixture of the members at `action`, pushed forward."""
  row = np.concatenate([reward + discount * atoms[m, action]
                        for m in range(atoms.shape[0])])
  row_probs = np.concatenate([probs[m, action] / atoms.shape[0]
                              for m in range(atoms.shape[0])])
  return row, row_probs


class TargetsTest(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  def test_greedy_mixture_target_matches_numpy(self):
    rng = np.random.default_rng(0)
    atoms, probs = _members(rng)
    q_values = rng.normal(size=A).astype(np.float32)
    got_atoms, got_probs = self.variant(targets.greedy_mixture_target)(
        q_values, atoms, probs, jnp.float32(0.3), jnp.float32(0.9))
    want, want_probs = _mixture_row(atoms, probs, int(np.argmax(q_values)),
                                    0.3, 0.9)
    self.assertEqual(got_atoms.shape, (M, M * K))
    for member in range(M):  # Every member shares the mixture's target.
      np.testing.assert_allclose(got_atoms[member], want, rtol=1e-6)
      np.testing.assert_allclose(got_probs[member], want_probs, rtol=1e-6)

  def test_mixture_target_by_hand(self):
    # Members {0, 2} and {-1: 0.5, 1: 0.5} at the one action; r = 1,
    # discount 0.5: atoms 1 + 0.5 z, each member's mass halved.
    atoms = jnp.array([[[0.0, 2.0]], [[-1.0, 1.0]]])
    probs = jnp.full((2, 1, 2), 0.5)
    got_atoms, got_probs = targets.mixture_target_at(
        0, atoms, probs, jnp.array(1.0), jnp.array(0.5))
    for member in range(2):
      np.testing.assert_allclose(got_atoms[member], [1.0, 2.0, 0.5, 1.5])
      np.testing.assert_allclose(got_probs[member], [0.25] * 4)

  @chex.variants(with_jit=True, without_jit=True)
  def test_own_greedy_targets_match_numpy(self):
    rng = np.random.default_rng(1)
    online_atoms, online_probs = _members(rng)
    atoms, probs = _members(rng)
    got_atoms, got_probs = self.variant(targets.own_greedy_targets)(
        online_atoms, online_probs, atoms, probs, jnp.float32(-0.2),
        jnp.float32(0.5))
    self.assertEqual(got_atoms.shape, (M, K))
    for member in range(M):
      action = int(np.argmax(np.sum(online_atoms[member] *
                                    online_probs[member], -1)))
      np.testing.assert_allclose(got_atoms[member],
                                 -0.2 + 0.5 * atoms[member, action],
                                 rtol=1e-6)
      np.testing.assert_allclose(got_probs[member], probs[member, action])

  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters(True, False)
  def test_propagated_bonus_target_matches_numpy(self, signal_as_prior):
    rng = np.random.default_rng(2)
    atoms, probs = _members(rng)
    scores = rng.normal(size=A).astype(np.float32)
    next_signal = rng.uniform(size=A).astype(np.float32)
    target = lambda s, a, p, w, i, d: targets.propagated_bonus_target(
        s, a, p, w, i, d, signal_as_prior)
    got_atoms, got_probs = self.variant(target)(
        scores, atoms, probs, next_signal, jnp.float32(0.7),
        jnp.float32(0.9))
    explore = int(np.argmax(scores))
    if signal_as_prior:  # w_avg(s', a'_eps) in the atoms, no reward.
      want, want_probs = _mixture_row(atoms + next_signal[explore], probs,
                                      explore, 0.0, 0.9)
    else:  # w(s, a) as the reward.
      want, want_probs = _mixture_row(atoms, probs, explore, 0.7, 0.9)
    for member in range(M):
      np.testing.assert_allclose(got_atoms[member], want, rtol=1e-5)
      np.testing.assert_allclose(got_probs[member], want_probs, rtol=1e-6)

  def test_episode_end_collapses_onto_the_reward(self):
    atoms, probs = _members(np.random.default_rng(3))
    got, _ = targets.greedy_mixture_target(jnp.zeros(A), atoms, probs,
                                           jnp.float32(0.4), jnp.float32(0.0))
    np.testing.assert_allclose(got, 0.4)

  def test_bad_ranks_raise_naming_the_argument(self):
    atoms, probs = _members(np.random.default_rng(4))
    with self.assertRaisesRegex(ValueError, '`atoms` must have rank 3'):
      targets.greedy_mixture_target(jnp.zeros(A), atoms[0], probs[0],
                                    jnp.float32(0.0), jnp.float32(0.9))
    with self.assertRaisesRegex(ValueError, '`q_values` must have rank 1'):
      targets.greedy_mixture_target(jnp.zeros((1, A)), atoms, probs,
                                    jnp.float32(0.0), jnp.float32(0.9))
    with self.assertRaisesRegex(ValueError, '`explore_scores` and '
                                '`next_signal` must have the same shape'):
      targets.propagated_bonus_target(jnp.zeros(A), atoms, probs,
                                      jnp.zeros(A + 1), jnp.float32(0.0),
                                      jnp.float32(0.9), True)


if __name__ == '__main__':
  absltest.main()
