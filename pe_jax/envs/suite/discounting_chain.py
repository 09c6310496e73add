"""bsuite's discounting chain
(`bsuite.environments.discounting_chain.DiscountingChain`).

The first action picks one of five chains, whose reward of 1 comes after
1, 3, 10, 30 or 100 steps; chain `mapping_seed % 5` pays 1.1. Episodes are
100 steps; observation [context, t / 100].
"""

import dataclasses
from typing import NamedTuple, Optional

import jax.numpy as jnp
import numpy as np

from pe_jax.envs.exact import div
from pe_jax.envs.suite import base

REWARD_TIMESTEPS = (1, 3, 10, 30, 100)
EPISODE_LENGTH = 100


class DiscountingChainState(NamedTuple):
  rewards: jnp.ndarray        # [5] float64: each chain's reward
  timestep: jnp.ndarray       # [] int32
  context: jnp.ndarray        # [] int32: the chain, -1 before the choice
  reset_next: jnp.ndarray     # [] bool


@dataclasses.dataclass(frozen=True)
class DiscountingChain(base.Environment):
  """Args: mapping_seed (which chain pays 1.1; None: numpy's global
  generator draws it, as bsuite does)."""
  mapping_seed: Optional[int] = None

  num_actions = len(REWARD_TIMESTEPS)
  num_episodes = 1_000
  info_names = ()

  @property
  def observation_shape(self):
    return (1, 2)

  def _init(self):
    if self.mapping_seed is None:
      bonus = np.random.randint(0, self.num_actions)
    else:
      bonus = self.mapping_seed % self.num_actions
    rewards = np.ones(self.num_actions)
    rewards[bonus] += 0.1
    zero = jnp.zeros((), jnp.int32)
    return DiscountingChainState(jnp.asarray(rewards, jnp.float64), zero,
                                 zero - 1, jnp.ones((), bool))

  def _observation(self, state):
    return jnp.stack([state.context.astype(jnp.float64),
                      div(state.timestep.astype(jnp.float64),
                          float(EPISODE_LENGTH))])[None, :]

  def _reset(self, state):
    state = state._replace(timestep=jnp.zeros((), jnp.int32),
                           context=jnp.asarray(-1, jnp.int32))
    return state, base.restart(self._observation(state))

  def _step(self, state, action):
    context = jnp.where(state.timestep == 0, action, state.context)
    timestep = state.timestep + 1
    # bsuite indexes with the context: -1 never occurs after a step.
    paid = timestep == jnp.asarray(REWARD_TIMESTEPS)[context]
    reward = jnp.where(paid, state.rewards[context], 0.)
    state = state._replace(timestep=timestep, context=context)
    return state, base.transition(reward, self._observation(state),
                                  timestep == EPISODE_LENGTH)

  def info(self, state):
    del state
    return {}
