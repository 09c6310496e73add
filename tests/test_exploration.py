"""pe_jax.exploration against NumPy references, with and without jit."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
import jax
import jax.numpy as jnp
import numpy as np
from scipy import special
from scipy import stats

from pe_jax import exploration


def _random_q(seed, members=5, actions=4):
  return np.random.default_rng(seed).normal(size=(members, actions)).astype(
      np.float32)


class ExplorationTest(parameterized.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  def test_majority_vote_counts_greedy_actions_and_breaks_ties_low(self):
    vote = self.variant(exploration.majority_vote)
    q = jnp.array([[0.0, 1.0, 0.5], [2.0, 1.0, 0.0], [0.0, 3.0, 1.0],
                   [0.0, 0.0, 9.0]])
    # Greedy actions 1, 0, 1, 2: action 1 has two votes.
    self.assertEqual(int(vote(q)), 1)
    np.testing.assert_array_equal(exploration.vote_counts(q), [1, 2, 1])
    # A 2-2 tie between actions 0 and 2 goes to the lower index.
    tie = jnp.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0],
                     [0.0, 0.0, 1.0]])
    self.assertEqual(int(vote(tie)), 0)
    for seed in range(5):
      q = _random_q(seed, members=7)
      counts = np.bincount(q.argmax(-1), minlength=q.shape[1])
      self.assertEqual(int(vote(q)), int(np.argmax(counts)))

  @chex.variants(with_jit=True, without_jit=True)
  def test_ucb_scores_are_mean_plus_lambda_population_std(self):
    ucb = self.variant(exploration.ucb_scores)
    q = jnp.array([[1.0, 0.0], [3.0, 0.0]])
    # Action 0: mean 2, std 1; action 1: mean 0, std 0.
    np.testing.assert_allclose(ucb(q, 0.5), [2.5, 0.0])
    q = _random_q(1)
    np.testing.assert_allclose(ucb(q, 1.5), q.mean(0) + 1.5 * q.std(0),
                               rtol=1e-5)

  @chex.variants(with_jit=True, without_jit=True)
  def test_infogain_bonus_is_the_mean_kl_to_the_average_policy(self):
    bonus = self.variant(exploration.infogain_bonus)
    q = jnp.array([[np.log(3.0), 0.0], [0.0, np.log(3.0)]])
    # Boltzmann policies (3/4, 1/4) and (1/4, 3/4); their mean is uniform.
    kl = 0.75 * np.log(0.75 / 0.5) + 0.25 * np.log(0.25 / 0.5)
    np.testing.assert_allclose(bonus(q, 1.0), kl, rtol=1e-6)
    self.assertAlmostEqual(float(bonus(q[:1], 1.0)), 0.0, places=6)
    q = _random_q(2).astype(np.float64)
    policies = special.softmax(q / 0.7, axis=-1)
    average = policies.mean(0)
    expected = np.mean([stats.entropy(p, average) for p in policies])
    np.testing.assert_allclose(bonus(q, 0.7), expected, rtol=1e-4)

  @chex.variants(with_jit=True, without_jit=True)
  def test_tdu_rewards_add_beta_sigma_to_the_explorers_only(self):
    rule = self.variant(exploration.tdu_rewards, static_argnums=(2,))
    rng = np.random.default_rng(3)
    rewards = rng.normal(size=6).astype(np.float32)
    td = rng.normal(size=6).astype(np.float32)
    new, sigma = rule(rewards, td, 4, 0.5)
    expected_sigma = np.std(td[:4], ddof=1)
    np.testing.assert_allclose(sigma, expected_sigma, rtol=1e-5)
    np.testing.assert_allclose(exploration.td_error_std(td[:4]),
                               expected_sigma, rtol=1e-5)
    np.testing.assert_allclose(new[:4], rewards[:4])
    np.testing.assert_allclose(new[4:], rewards[4:] + 0.5 * expected_sigma,
                               rtol=1e-5)

  def test_no_gradient_flows_through_sigma(self):
    def total(td):
      new, _ = exploration.tdu_rewards(jnp.zeros(4), td, 2, 1.0)
      return jnp.sum(new)
    np.testing.assert_array_equal(
        jax.grad(total)(jnp.array([1.0, 2.0, 4.0, 0.0])), np.zeros(4))

  def test_bad_input_is_one_error(self):
    with self.assertRaisesRegex(ValueError, r'num_exploiters must be in '
                                r'\[2, 3\].*got 1'):
      exploration.tdu_rewards(jnp.zeros(3), jnp.zeros(3), 1, 1.0)
    with self.assertRaises(AssertionError):  # chex: rank [M, A] expected
      exploration.ucb_scores(jnp.zeros(3), 1.0)
    with self.assertRaises(AssertionError):
      exploration.tdu_rewards(jnp.zeros(3), jnp.zeros(4), 2, 1.0)


if __name__ == '__main__':
  absltest.main()
