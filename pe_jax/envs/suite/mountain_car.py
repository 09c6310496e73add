"""bsuite's mountain car (`bsuite.environments.mountain_car.MountainCar`),
in float64 as bsuite computes it.

Start position `uniform(-0.6, -0.4)` at each reset, velocity 0; reward -1
per step; the episode ends at position >= 0.5 or after max_steps steps;
actions 0, 1, 2 push left, not at all, right. Observation [position,
velocity, t / max_steps].
"""

import dataclasses
from typing import NamedTuple, Optional

import jax.numpy as jnp

from pe_jax.envs import numpy_random
# bsuite's constants, one home: the key-based variant's module.
from pe_jax.envs.mountain_car import FORCE
from pe_jax.envs.mountain_car import GOAL_POSITION
from pe_jax.envs.mountain_car import GRAVITY
from pe_jax.envs.mountain_car import MAX_POSITION
from pe_jax.envs.mountain_car import MAX_SPEED
from pe_jax.envs.mountain_car import MIN_POSITION
from pe_jax.envs.exact import div
from pe_jax.envs.exact import mul
from pe_jax.envs.suite import base



class MountainCarState(NamedTuple):
  stream: numpy_random.RandomStream
  timestep: jnp.ndarray      # [] int32
  position: jnp.ndarray      # [] float64
  velocity: jnp.ndarray      # [] float64
  raw_return: jnp.ndarray    # [] float64
  reset_next: jnp.ndarray    # [] bool


@dataclasses.dataclass(frozen=True)
class MountainCar(base.Environment):
  """Args: max_steps, seed."""
  max_steps: int = 1000
  seed: Optional[int] = None

  STATIC = ('max_steps',)
  num_actions = 3
  num_episodes = 1_000
  info_names = ('raw_return',)

  @property
  def observation_shape(self):
    return (1, 3)

  def _init(self):
    return MountainCarState(numpy_random.from_seed(self.seed),
                            jnp.zeros((), jnp.int32), base.as_f64(0.),
                            base.as_f64(0.), base.as_f64(0.),
                            jnp.ones((), bool))

  def _observation(self, state):
    return jnp.stack([state.position, state.velocity,
                      div(state.timestep.astype(jnp.float64),
                          float(self.max_steps))])[None, :]

  def _reset(self, state):
    stream, position = numpy_random.uniform(state.stream, -0.6, -0.4)
    state = state._replace(stream=stream, position=position,
                           velocity=base.as_f64(0.),
                           timestep=jnp.zeros((), jnp.int32))
    return state, base.restart(self._observation(state))

  def _step(self, state, action):
    timestep = state.timestep + 1
    push = mul((action - 1).astype(jnp.float64), FORCE)
    # bsuite: velocity += push + cos(3 position) * -gravity (sum first).
    velocity = state.velocity + (push + mul(jnp.cos(3 * state.position),
                                            -GRAVITY))
    velocity = jnp.clip(velocity, -MAX_SPEED, MAX_SPEED)
    position = jnp.clip(state.position + velocity, MIN_POSITION,
                        MAX_POSITION)
    velocity = jnp.where(position == MIN_POSITION,
                         jnp.clip(velocity, 0, MAX_SPEED), velocity)
    state = state._replace(timestep=timestep, position=position,
                           velocity=velocity,
                           raw_return=state.raw_return - 1.)
    last = (position >= GOAL_POSITION) | (timestep >= self.max_steps)
    return state, base.transition(-1., self._observation(state), last)

  def info(self, state):
    return {'raw_return': state.raw_return}
