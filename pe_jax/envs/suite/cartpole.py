"""bsuite's cartpole and cartpole swing-up
(`bsuite.environments.cartpole.Cartpole`,
`bsuite.experiments.cartpole_swingup.cartpole_swingup.CartpoleSwingup`),
in float64 as bsuite computes them.

Explicit Euler steps of dt = 0.01 of the cart-pole equations; the start
state draws `uniform(-0.05, 0.05)` four times at each reset (x, x_dot,
theta, theta_dot; the swing-up adds pi to theta). Float64 matters here:
bsuite's clock reaches 10 after 1,001 steps of 0.01 (float32's after 1,000).
"""

import dataclasses
from typing import NamedTuple, Optional

import jax.numpy as jnp
import numpy as np

from pe_jax.envs import numpy_random
from pe_jax.envs.exact import div
from pe_jax.envs.exact import mul
from pe_jax.envs.suite import base

MASS_CART = 1.
MASS_POLE = 0.1
LENGTH = 0.5
FORCE_MAGNITUDE = 10.
GRAVITY = 9.8
# bsuite's derived constants, computed as bsuite computes them.
POLE_MASS_LENGTH = MASS_POLE * LENGTH
TOTAL_MASS = MASS_CART + MASS_POLE


class CartpoleState(NamedTuple):
  stream: numpy_random.RandomStream
  x: jnp.ndarray                 # [] float64
  x_dot: jnp.ndarray             # [] float64
  theta: jnp.ndarray             # [] float64
  theta_dot: jnp.ndarray         # [] float64
  time_elapsed: jnp.ndarray      # [] float64
  settings: jnp.ndarray          # [2] float64: the id's reward thresholds
  raw_return: jnp.ndarray        # [] float64
  total_upright: jnp.ndarray     # [] float64 (swing-up's counter)
  best_episode: jnp.ndarray      # [] float64
  episode_return: jnp.ndarray    # [] float64
  reset_next: jnp.ndarray        # [] bool


def step_cartpole(action, timescale: float, state: CartpoleState
                  ) -> CartpoleState:
  """bsuite's `step_cartpole`: one Euler step, operation for operation."""
  force = ((action - 1) * FORCE_MAGNITUDE).astype(jnp.float64)
  cos = jnp.cos(state.theta)
  sin = jnp.sin(state.theta)
  temp = div(force + mul(mul(POLE_MASS_LENGTH,
                             mul(state.theta_dot, state.theta_dot)), sin),
             TOTAL_MASS)
  theta_acc = div(mul(GRAVITY, sin) - mul(cos, temp),
                  LENGTH * (4 / 3 - div(MASS_POLE * (cos * cos),
                                        TOTAL_MASS)))
  x_acc = temp - div(mul(mul(POLE_MASS_LENGTH, theta_acc), cos), TOTAL_MASS)
  x = state.x + mul(timescale, state.x_dot)
  x_dot = state.x_dot + mul(timescale, x_acc)
  theta = jnp.remainder(state.theta + mul(timescale, state.theta_dot),
                        2 * np.pi)
  theta_dot = state.theta_dot + mul(timescale, theta_acc)
  return state._replace(x=x, x_dot=x_dot, theta=theta, theta_dot=theta_dot,
                        time_elapsed=state.time_elapsed + timescale)


@dataclasses.dataclass(frozen=True)
class Cartpole(base.Environment):
  """Args as bsuite's Cartpole: height_threshold, x_threshold, timescale,
  max_time, init_range, seed."""
  height_threshold: float = 0.8
  x_threshold: float = 3.
  timescale: float = 0.01
  max_time: float = 10.
  init_range: float = 0.05
  seed: Optional[int] = None

  STATIC = ('x_threshold', 'timescale', 'max_time', 'init_range')
  num_actions = 3
  num_episodes = 1_000
  info_names = ('raw_return', 'best_episode')
  theta_offset = 0.

  @property
  def observation_shape(self):
    return (1, 6)

  def _settings(self):
    return [self.height_threshold, 0.]

  def _init(self):
    zero = base.as_f64(0.)
    return CartpoleState(numpy_random.from_seed(self.seed), zero, zero, zero,
                         zero, zero,
                         jnp.asarray(np.float64(self._settings()),
                                     jnp.float64),
                         zero, zero, zero, zero, jnp.ones((), bool))

  def _reset(self, state):
    stream = state.stream
    values = []
    for _ in range(4):
      stream, value = numpy_random.uniform(stream, -self.init_range,
                                           self.init_range)
      values.append(value)
    x, x_dot, theta, theta_dot = values
    state = state._replace(stream=stream, x=x, x_dot=x_dot,
                           theta=self.theta_offset + theta,
                           theta_dot=theta_dot,
                           time_elapsed=base.as_f64(0.),
                           episode_return=base.as_f64(0.))
    return state, base.restart(self._observation(state))

  def _observation(self, state):
    return jnp.stack([div(state.x, self.x_threshold),
                      div(state.x_dot, self.x_threshold),
                      jnp.sin(state.theta), jnp.cos(state.theta),
                      state.theta_dot,
                      div(state.time_elapsed, self.max_time)])[None, :]

  def _step(self, state, action):
    state = step_cartpole(action, self.timescale, state)
    rewarded = ((jnp.cos(state.theta) > state.settings[0]) &
                (jnp.abs(state.x) < self.x_threshold))
    reward = jnp.where(rewarded, 1., 0.)
    last = (state.time_elapsed > self.max_time) | ~rewarded
    episode_return = state.episode_return + reward
    state = state._replace(
        raw_return=state.raw_return + reward, episode_return=episode_return,
        best_episode=jnp.where(last, jnp.maximum(episode_return,
                                                 state.best_episode),
                               state.best_episode))
    return state, base.transition(reward, self._observation(state), last)

  def info(self, state):
    return {'raw_return': state.raw_return,
            'best_episode': state.best_episode}


@dataclasses.dataclass(frozen=True)
class CartpoleSwingup(Cartpole):
  """Args as bsuite's CartpoleSwingup: height_threshold,
  theta_dot_threshold, x_reward_threshold, move_cost, x_threshold,
  timescale, max_time, init_range, seed."""
  height_threshold: float = 0.5
  theta_dot_threshold: float = 1.
  x_reward_threshold: float = 1.
  move_cost: float = 0.1
  x_threshold: float = 3.
  timescale: float = 0.01
  max_time: float = 10.
  init_range: float = 0.05
  seed: Optional[int] = None

  STATIC = ('theta_dot_threshold', 'move_cost', 'x_threshold', 'timescale',
            'max_time', 'init_range')
  info_names = ('raw_return', 'total_upright', 'best_episode')
  theta_offset = np.pi

  @property
  def observation_shape(self):
    return (1, 8)

  def _settings(self):
    return [self.height_threshold, self.x_reward_threshold]

  def _observation(self, state):
    head = super()._observation(state)[0]
    near = jnp.where(jnp.abs(state.x) < state.settings[1], 1., -1.)
    slow = jnp.where(jnp.abs(state.theta_dot) < self.theta_dot_threshold,
                     1., -1.)
    return jnp.concatenate([head, jnp.stack([near, slow])])[None, :]

  def _step(self, state, action):
    state = step_cartpole(action, self.timescale, state)
    upright = ((jnp.cos(state.theta) > state.settings[0]) &
               (jnp.abs(state.theta_dot) < self.theta_dot_threshold) &
               (jnp.abs(state.x) < state.settings[1]))
    # -1. * |a - 1| * move_cost: -0. for the still action, as in bsuite.
    reward = mul(-1. * jnp.abs(action - 1), self.move_cost)
    reward = jnp.where(upright, reward + 1., reward)
    last = ((state.time_elapsed > self.max_time) |
            (jnp.abs(state.x) > self.x_threshold))
    episode_return = state.episode_return + reward
    state = state._replace(
        raw_return=state.raw_return + reward, episode_return=episode_return,
        total_upright=state.total_upright + jnp.where(upright, 1., 0.),
        best_episode=jnp.where(last, jnp.maximum(episode_return,
                                                 state.best_episode),
                               state.best_episode))
    return state, base.transition(reward, self._observation(state), last)

  def info(self, state):
    return {'raw_return': state.raw_return,
            'total_upright': state.total_upright,
            'best_episode': state.best_episode}
