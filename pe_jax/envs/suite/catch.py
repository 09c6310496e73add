"""bsuite's catch (`bsuite.environments.catch.Catch`).

A ball falls from a random column of the top row (`randint(columns)` at each
reset) while the agent moves a paddle on the bottom row left, not at all or
right; +1 for a catch, -1 for a miss, after rows - 1 steps.
"""

import dataclasses
from typing import NamedTuple, Optional

import jax.numpy as jnp

from pe_jax.envs import numpy_random
from pe_jax.envs.suite import base


class CatchState(NamedTuple):
  stream: numpy_random.RandomStream
  ball_x: jnp.ndarray         # [] int32
  ball_y: jnp.ndarray         # [] int32
  paddle_x: jnp.ndarray       # [] int32
  total_regret: jnp.ndarray   # [] float64
  reset_next: jnp.ndarray     # [] bool


@dataclasses.dataclass(frozen=True)
class Catch(base.Environment):
  """Args: rows, columns, seed (None: numpy draws one from the OS)."""
  rows: int = 10
  columns: int = 5
  seed: Optional[int] = None

  STATIC = ('rows', 'columns')
  num_actions = 3
  num_episodes = 10_000
  info_names = ('total_regret',)

  @property
  def observation_shape(self):
    return (self.rows, self.columns)

  def _init(self):
    zero = jnp.zeros((), jnp.int32)
    return CatchState(numpy_random.from_seed(self.seed), zero, zero, zero,
                      base.as_f64(0.), jnp.ones((), bool))

  def _observation(self, state):
    rows = jnp.arange(self.rows)[:, None]
    columns = jnp.arange(self.columns)[None, :]
    ball = (rows == state.ball_y) & (columns == state.ball_x)
    paddle = (rows == self.rows - 1) & (columns == state.paddle_x)
    return (ball | paddle).astype(jnp.float32)

  def _reset(self, state):
    stream, ball_x = numpy_random.randint(state.stream, self.columns)
    state = state._replace(stream=stream, ball_x=ball_x,
                           ball_y=jnp.zeros((), jnp.int32),
                           paddle_x=jnp.asarray(self.columns // 2, jnp.int32))
    return state, base.restart(self._observation(state))

  def _step(self, state, action):
    paddle_x = jnp.clip(state.paddle_x + action - 1, 0, self.columns - 1)
    ball_y = state.ball_y + 1
    last = ball_y == self.rows - 1
    reward = jnp.where(last, jnp.where(paddle_x == state.ball_x, 1., -1.), 0.)
    state = state._replace(
        paddle_x=paddle_x, ball_y=ball_y,
        total_regret=state.total_regret + jnp.where(last, 1. - reward, 0.))
    return state, base.transition(reward, self._observation(state), last)

  def info(self, state):
    return {'total_regret': state.total_regret}
