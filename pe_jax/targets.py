"""Bootstrap targets of a projection ensemble (PE-DQN Eqs. 10 and 17).

Each function takes one transition's next-state member distributions,
[M, A, K] atoms and probabilities (members, actions, atoms), and returns the
target distribution of each of the M members, [M, N']. Batches come from
`jax.vmap`. `discount` is already zero at episode ends, as `dm_env` and rlax
use it, so a terminal target collapses onto the reward.
"""

from typing import Tuple

import chex
import jax
import jax.numpy as jnp

from pe_jax import checks
from pe_jax import distributions

Array = chex.Array


def _check_members(atoms: Array, probs: Array) -> None:
  checks.check_rank(atoms, 3, 'atoms')
  checks.check_same_shape(atoms, probs, 'atoms', 'probs')


def mixture_target_at(action: Array, atoms: Array, probs: Array,
                      reward: Array, discount: Array) -> Tuple[Array, Array]:
  """The equal mixture's Bellman target at one action, shared by every member
  (Eq. 10; Eq. 16 for the bonus model).

  Args:
    action: scalar int, the bootstrap action a'.
    atoms: [M, A, K] next-state atoms of each member.
    probs: [M, A, K] their probabilities.
    reward, discount: scalars.

  Returns:
    atoms [M, M K] and probs [M, M K]: row m is member m's target, the mixture
    of all members at a' pushed forward by r + discount Z.
  """
  _check_members(atoms, probs)
  return _shared_target(distributions.at_action(atoms, action),
                        distributions.at_action(probs, action), reward,
                        discount)


def _shared_target(atoms: Array, probs: Array, reward: Array,
                   discount: Array) -> Tuple[Array, Array]:
  """[M, K] members at a' -> their mixture's target as each member's row."""
  target, target_probs = distributions.mixture_target(atoms, probs, reward,
                                                      discount)
  num_members = atoms.shape[0]
  return (jnp.broadcast_to(target, (num_members,) + target.shape),
          jnp.broadcast_to(target_probs, (num_members,) + target_probs.shape))


def greedy_mixture_target(q_values: Array, atoms: Array, probs: Array,
                          reward: Array,
                          discount: Array) -> Tuple[Array, Array]:
  """PE-DQN's value target (Eq. 10, Sec. 5.1): the target mixture at the
  online mixture's greedy action a' = argmax_a Q(s', a).

  Args:
    q_values: [A] online mixture means at s'.
    atoms, probs: [M, A, K] target networks' members at s'.
    reward, discount: scalars.

  Returns:
    atoms [M, M K] and probs [M, M K], the same row for every member.
  """
  checks.check_rank(q_values, 1, 'q_values')
  return mixture_target_at(jnp.argmax(q_values), atoms, probs, reward,
                           discount)


def own_greedy_targets(online_atoms: Array, online_probs: Array,
                       atoms: Array, probs: Array, reward: Array,
                       discount: Array) -> Tuple[Array, Array]:
  """Independent members (PE-DQN[Ind.]): each member bootstraps from its own
  target distribution at its own greedy action argmax_a E[Z_m(s', a)].

  Args:
    online_atoms, online_probs: [M, A, K] online members at s' (choose a'_m).
    atoms, probs: [M, A, K] target members at s'.
    reward, discount: scalars.

  Returns:
    atoms [M, K] and probs [M, K]: member m's own pushed-forward target.
  """
  _check_members(online_atoms, online_probs)
  _check_members(atoms, probs)
  num_members, num_actions = atoms.shape[:2]
  member_means = jnp.sum(online_atoms * online_probs, axis=-1)  # [M, A]
  one_hot = jax.nn.one_hot(jnp.argmax(member_means, axis=-1), num_actions)
  target = distributions.bellman_pushforward(
      jnp.einsum('ma,mak->mk', one_hot, atoms).reshape(-1), reward,
      discount).reshape(num_members, -1)
  return target, jnp.einsum('ma,mak->mk', one_hot, probs)


def propagated_bonus_target(explore_scores: Array, atoms: Array,
                            probs: Array, next_signal: Array,
                            intrinsic: Array, discount: Array,
                            signal_as_prior: bool) -> Tuple[Array, Array]:
  """PE-DQN's bonus target (Eq. 17): the bonus mixture bootstraps at the
  exploratory action a'_eps = argmax_a Q(s', a) + beta b(s', a) (Eq. 13).

  Eq. 17 with the intrinsic reward w(s, a) as the reward:
  w(s, a) + discount B(s', a'_eps). With `signal_as_prior` the bonus is
  b = raw + w_avg (the authors' code): the raw model learns only the
  propagated part, discount E[b(s', a'_eps)], so its target carries
  w_avg(s', a'_eps) in the next-state atoms and no reward.

  Args:
    explore_scores: [A] Q(s', .) + beta b(s', .) (chooses a'_eps).
    atoms, probs: [M, A, K] target bonus members at s'.
    next_signal: [A] w_avg(s', .) of the online value members.
    intrinsic: scalar w(s, a) of the transition.
    discount: scalar.
    signal_as_prior: whether b = raw + w_avg.

  Returns:
    atoms [M, M K] and probs [M, M K], the same row for every member.
  """
  _check_members(atoms, probs)
  checks.check_rank(explore_scores, 1, 'explore_scores')
  checks.check_same_shape(explore_scores, next_signal, 'explore_scores',
                          'next_signal')
  explore_action = jnp.argmax(explore_scores)
  next_atoms = distributions.at_action(atoms, explore_action)
  reward = intrinsic
  if signal_as_prior:
    next_atoms = next_atoms + jnp.sum(
        next_signal * jax.nn.one_hot(explore_action, next_signal.shape[0]))
    reward = jnp.zeros_like(intrinsic)
  return _shared_target(next_atoms,
                        distributions.at_action(probs, explore_action),
                        reward, discount)
