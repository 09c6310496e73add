"""Exploration rules of a value ensemble: pure functions of its members.

The rules of Chen et al.'s "UCB exploration via Q-ensembles" (Ensemble
Voting, UCB, UCB+InfoGain) act on, or reward from, the members' Q-values
[M, A] at one state; TDU's (Flennerhag et al., 2020, Eq. 11) rewards the
explorers from the spread of the exploiters' TD errors [M] on one
transition. The agents (`agents.q_ensemble`) vmap them over a batch.
"""

import chex
import jax
import jax.numpy as jnp

Array = chex.Array


def vote_counts(q_values: Array) -> Array:
  """[A] how many members' greedy action each action is; q_values [M, A]."""
  chex.assert_rank(q_values, 2)
  greedy = jnp.argmax(q_values, axis=-1)
  return jnp.sum(jax.nn.one_hot(greedy, q_values.shape[-1]), axis=0)


def majority_vote(q_values: Array) -> Array:
  """[] the action most members choose greedily (Ensemble Voting); ties go
  to the lowest index. q_values [M, A]."""
  return jnp.argmax(vote_counts(q_values))


def ucb_scores(q_values: Array, lam: float) -> Array:
  """[A] mean_k Q_k(s, a) + lambda * std_k Q_k(s, a) (Chen et al., Alg. 2);
  q_values [M, A], std with 1 / M."""
  chex.assert_rank(q_values, 2)
  return jnp.mean(q_values, axis=0) + lam * jnp.std(q_values, axis=0)


def infogain_bonus(q_values: Array, temperature: float) -> Array:
  """[] mean_k KL(softmax(Q_k / T) || mean_j softmax(Q_j / T)) (Chen et
  al., Alg. 3): the members' disagreement as Boltzmann policies at s;
  q_values [M, A]."""
  chex.assert_rank(q_values, 2)
  log_policies = jax.nn.log_softmax(q_values / temperature, axis=-1)
  policies = jnp.exp(log_policies)
  log_average = jnp.log(jnp.mean(policies, axis=0))
  return jnp.mean(jnp.sum(policies * (log_policies - log_average[None]),
                          axis=-1))


def td_error_std(td_errors: Array) -> Array:
  """[] TDU's sigma: the sample standard deviation (1 / (K - 1), TDU Eq. 11)
  of the exploiters' TD errors [K] on one transition."""
  chex.assert_rank(td_errors, 1)
  return jnp.std(td_errors, ddof=1)


def tdu_rewards(rewards: Array, td_errors: Array, num_exploiters: int,
                beta: float):
  """TDU's rewards [M] and sigma [] of one transition.

  Members [0, K) (K = `num_exploiters` >= 2) exploit and keep their reward
  r; the others explore and learn from r + beta * sigma, sigma the std of
  the exploiters' TD errors (`td_error_std`). `rewards` [M], `td_errors`
  [M] (held fixed: no gradient flows through sigma).
  """
  chex.assert_rank([rewards, td_errors], 1)
  chex.assert_equal_shape([rewards, td_errors])
  if not 2 <= num_exploiters <= rewards.shape[0]:
    raise ValueError(f'num_exploiters must be in [2, {rewards.shape[0]}] '
                     f'(a standard deviation needs two), got '
                     f'{num_exploiters}.')
  sigma = td_error_std(jax.lax.stop_gradient(td_errors)[:num_exploiters])
  is_explorer = jnp.arange(rewards.shape[0]) >= num_exploiters
  return rewards + jnp.where(is_explorer, beta * sigma, 0.0), sigma
