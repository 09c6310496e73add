"""Discrete return distributions as (atoms, probs) pairs.

A distribution is a pair of arrays of equal shape [N]: atom locations (any
order, ties allowed) and their probabilities. A quantile model with K outputs
is (locations, 1/K each); a categorical model with K logits on a fixed support
is (support, softmax(logits)). Batch dimensions come from `jax.vmap`.
"""

from typing import NamedTuple, Tuple

import chex
import jax
import jax.numpy as jnp

from pe_jax import checks

Array = chex.Array


def at_action(values: Array, action: Array) -> Array:
  """values[:, action] for values [M, A, ...], as a one-hot contraction.

  A data-dependent gather would be fused into the large loss loops that
  consume it and recomputed there; the contraction is dense and cheap.
  """
  one_hot = jax.nn.one_hot(action, values.shape[1], dtype=values.dtype)
  return jnp.tensordot(one_hot, values, axes=(0, 1))


def quantile_distribution(locations: Array) -> Tuple[Array, Array]:
  """Quantile model output -> (atoms, probs).

  Args:
    locations: [K] quantile locations.

  Returns:
    atoms [K] (the locations) and probs [K] (1/K each).
  """
  checks.check_rank(locations, 1, 'locations')
  num_quantiles = locations.shape[0]
  return locations, jnp.full_like(locations, 1.0 / num_quantiles)


def categorical_distribution(logits: Array,
                             support: Array) -> Tuple[Array, Array]:
  """Categorical model output -> (atoms, probs).

  Args:
    logits: [K] unnormalised log-probabilities.
    support: [K] fixed, strictly increasing atom locations.

  Returns:
    atoms [K] (the support) and probs [K] (softmax of the logits).
  """
  checks.check_rank(logits, 1, 'logits')
  checks.check_same_shape(logits, support, 'logits', 'support')
  checks.check_support(support)
  probs = jax.nn.softmax(logits)
  return support, probs


def mixture(atoms: Array, probs: Array) -> Tuple[Array, Array]:
  """Equal-weight mixture of M member distributions as one atom set.

  Args:
    atoms: [M, K] atoms of each member.
    probs: [M, K] probabilities of each member (each row sums to 1).

  Returns:
    atoms [M*K] and probs [M*K], each member's mass scaled by 1/M (Eq. 10/16).
  """
  checks.check_rank(atoms, 2, 'atoms')
  checks.check_same_shape(atoms, probs, 'atoms', 'probs')
  num_members = atoms.shape[0]
  return atoms.reshape(-1), probs.reshape(-1) / num_members


def mixture_target(atoms: Array, probs: Array, reward: Array,
                   discount: Array) -> Tuple[Array, Array]:
  """Distributional Bellman target of an equal mixture of members (PE-DQN
  Eq. 10): r + discount * Z over the mixture's atoms.

  Args:
    atoms: [M, K] next-state atoms of each member.
    probs: [M, K] their probabilities.
    reward, discount: scalars (discount already zero at episode ends).

  Returns:
    atoms [M*K] and probs [M*K] of the target.
  """
  mix_atoms, mix_probs = mixture(atoms, probs)
  return bellman_pushforward(mix_atoms, reward, discount), mix_probs


def bellman_pushforward(atoms: Array, reward: Array,
                        discount: Array) -> Array:
  """Atoms of the sampled distributional Bellman target r + discount * Z.

  Args:
    atoms: [N] atoms of the next-state return distribution (probabilities are
      unchanged by the push-forward).
    reward: scalar reward.
    discount: scalar discount, already zero on terminal transitions
      (gamma * (1 - done), as `dm_env` and rlax use it). A terminal step thus
      collapses every atom onto the reward.

  Returns:
    [N] target atoms.
  """
  checks.check_rank(atoms, 1, 'atoms')
  checks.check_rank(reward, 0, 'reward')
  checks.check_rank(discount, 0, 'discount')
  return reward + discount * atoms


def mean(atoms: Array, probs: Array) -> Array:
  """Expected value of a discrete distribution: [N], [N] -> scalar."""
  checks.check_rank(atoms, 1, 'atoms')
  checks.check_same_shape(atoms, probs, 'atoms', 'probs')
  return jnp.sum(atoms * probs)


class Moments(NamedTuple):
  mean: Array
  variance: Array
  skewness: Array
  kurtosis: Array  # Excess kurtosis (0 for a Gaussian), as scipy's default.


def moments(atoms: Array, probs: Array) -> Moments:
  """Mean, variance, skewness and excess kurtosis of a discrete distribution.

  Args:
    atoms: [N] atoms.
    probs: [N] probabilities summing to 1.

  Returns:
    `Moments` of scalars. Skewness and kurtosis are defined as 0 for a point
    mass (zero variance), where the standardised moments do not exist; this
    keeps statistic-greedy action selection well defined.
  """
  checks.check_rank(atoms, 1, 'atoms')
  checks.check_same_shape(atoms, probs, 'atoms', 'probs')
  checks.check_probs(probs)
  mu = jnp.sum(atoms * probs)
  centred = atoms - mu
  variance = jnp.sum(probs * centred**2)
  third = jnp.sum(probs * centred**3)
  fourth = jnp.sum(probs * centred**4)
  degenerate = variance <= 0
  safe_var = jnp.where(degenerate, 1.0, variance)
  skewness = jnp.where(degenerate, 0.0, third / safe_var**1.5)
  kurtosis = jnp.where(degenerate, 0.0, fourth / safe_var**2 - 3.0)
  valid = checks.probs_are_valid(probs)
  return Moments(
      mean=checks.nan_unless(valid, mu),
      variance=checks.nan_unless(valid, variance),
      skewness=checks.nan_unless(valid, skewness),
      kurtosis=checks.nan_unless(valid, kurtosis))
