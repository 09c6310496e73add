"""bsuite's simple bandit (`bsuite.environments.bandit.SimpleBandit`).

Eleven arms with rewards 0, 0.1, ..., 1 in an order drawn once, at
construction, by `RandomState(mapping_seed).choice(11, 11, replace=False)`;
every episode is one pull; observation ones [1, 1].
"""

import dataclasses
from typing import NamedTuple, Optional

import jax.numpy as jnp
import numpy as np

from pe_jax.envs.suite import base


class BanditState(NamedTuple):
  rewards: jnp.ndarray        # [A] float64: each arm's reward
  total_regret: jnp.ndarray   # [] float64
  reset_next: jnp.ndarray     # [] bool


@dataclasses.dataclass(frozen=True)
class SimpleBandit(base.Environment):
  """Args: mapping_seed (the arms' order), num_actions."""
  mapping_seed: Optional[int] = None
  num_actions: int = 11

  STATIC = ('num_actions',)
  num_episodes = 10_000
  info_names = ('total_regret',)

  @property
  def observation_shape(self):
    return (1, 1)

  def _init(self):
    order = np.random.RandomState(self.mapping_seed).choice(
        range(self.num_actions), size=self.num_actions, replace=False)
    rewards = np.linspace(0, 1, self.num_actions)[order]
    return BanditState(jnp.asarray(rewards, jnp.float64), base.as_f64(0.),
                       jnp.ones((), bool))

  def _reset(self, state):
    return state, base.restart(jnp.ones((1, 1)))

  def _step(self, state, action):
    reward = state.rewards[action]
    state = state._replace(total_regret=state.total_regret + (1. - reward))
    return state, base.transition(reward, jnp.ones((1, 1)), True)

  def info(self, state):
    return {'total_regret': state.total_regret}
