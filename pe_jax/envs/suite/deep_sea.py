"""bsuite's deep sea (`bsuite.environments.deep_sea.DeepSea`), deterministic
and stochastic, with bsuite's random streams.

The action mapping is `RandomState(mapping_seed).binomial(1, .5, [N, N])`
(drawn on the host at construction); the stochastic variant draws from its
own stream (`seed`), in bsuite's order: `randn()` on the last row's end
cells, then `rand()` on every 'right' move (the move fails when it is below
1/N). bsuite's deterministic variant draws that `rand()` too, to no effect.
`pe_jax.envs.deep_sea.DeepSea` is the key-based variant the deep sea
training runners use.
"""

import dataclasses
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from pe_jax.envs import numpy_random
from pe_jax.envs.suite import base


class DeepSeaState(NamedTuple):
  stream: numpy_random.RandomStream
  action_mapping: jnp.ndarray      # [N, N] int32: the 'right' action
  row: jnp.ndarray                 # [] int32
  column: jnp.ndarray              # [] int32
  bad_episode: jnp.ndarray         # [] bool
  total_bad_episodes: jnp.ndarray  # [] int32
  denoised_return: jnp.ndarray     # [] float64
  reset_next: jnp.ndarray          # [] bool


@dataclasses.dataclass(frozen=True)
class DeepSea(base.Environment):
  """Args as bsuite's DeepSea: size, deterministic, unscaled_move_cost,
  randomize_actions, seed, mapping_seed."""
  size: int = 10
  deterministic: bool = True
  unscaled_move_cost: float = 0.01
  randomize_actions: bool = True
  seed: Optional[int] = None
  mapping_seed: Optional[int] = None

  STATIC = ('size', 'deterministic', 'unscaled_move_cost')
  num_actions = 2
  num_episodes = 10_000
  info_names = ('total_bad_episodes', 'denoised_return')

  @property
  def observation_shape(self):
    return (self.size, self.size)

  def _init(self):
    n = self.size
    if self.randomize_actions:
      mapping = np.random.RandomState(self.mapping_seed).binomial(
          1, 0.5, [n, n])
    else:
      mapping = np.ones([n, n])
    zero = jnp.zeros((), jnp.int32)
    return DeepSeaState(numpy_random.from_seed(self.seed),
                        jnp.asarray(mapping, jnp.int32), zero, zero,
                        jnp.zeros((), bool), zero, base.as_f64(0.),
                        jnp.ones((), bool))

  def _observation(self, row, column):
    n = self.size
    cells = jnp.arange(n * n).reshape(n, n)
    return ((cells == row * n + column) & (row < n)).astype(jnp.float32)

  def _reset(self, state):
    zero = jnp.zeros((), jnp.int32)
    state = state._replace(row=zero, column=zero,
                           bad_episode=jnp.zeros((), bool))
    return state, base.restart(self._observation(zero, zero))

  def _step(self, state, action):
    n = self.size
    row, column = state.row, state.column
    right = action == state.action_mapping[row, column]
    treasure = (column == n - 1) & right
    reward = jnp.where(treasure, 1., 0.)
    stream = state.stream
    if not self.deterministic:
      at_end = (row == n - 1) & ((column == 0) | (column == n - 1))
      stream, noise = jax.lax.cond(
          at_end, numpy_random.standard_normal,
          lambda s: (s, jnp.zeros((), jnp.float64)), stream)
      reward = reward + noise
    # bsuite draws rand() on every 'right' move, deterministic or not.
    stream, u = jax.lax.cond(
        right, numpy_random.random_double,
        lambda s: (s, jnp.ones((), jnp.float64)), stream)
    moves = right & ((u > 1 / n) | self.deterministic)
    column = jnp.where(moves, jnp.minimum(column + 1, n - 1),
                       jnp.where(right, column, jnp.maximum(column - 1, 0)))
    reward = jnp.where(right, reward - self.unscaled_move_cost / n, reward)
    bad_episode = state.bad_episode | (~right & (row == state.column))
    row = row + 1
    last = row == n
    state = state._replace(
        stream=stream, row=row, column=column, bad_episode=bad_episode,
        total_bad_episodes=state.total_bad_episodes + (last & bad_episode),
        denoised_return=state.denoised_return + jnp.where(treasure, 1., 0.))
    return state, base.transition(reward, self._observation(row, column),
                                  last)

  def info(self, state):
    return {'total_bad_episodes': state.total_bad_episodes,
            'denoised_return': state.denoised_return}
