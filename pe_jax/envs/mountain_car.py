"""bsuite's mountain car (Moore, 1990) as a pure JAX environment.

  env = MountainCar()
  state, timestep = env.reset(key)
  state, timestep = env.step(state, action)

Same dynamics, rewards, observations and episode ends as
`bsuite.environments.mountain_car.MountainCar`: reward -1 per step, the
episode ends (discount 0) at the goal position 0.5 or after `max_steps`
steps; actions 0, 1, 2 push left, not at all, right. The start position is
uniform in [-0.6, -0.4] from the reset key (bsuite draws it from its own
NumPy generator). bsuite computes in float64, this in float32: a trajectory
agrees to about 1e-5 per step, so an episode's length can differ by a step
when the car reaches the goal within rounding of 0.5.
"""

import dataclasses
from typing import NamedTuple, Optional, Tuple

import dm_env
import jax
import jax.numpy as jnp

MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GOAL_POSITION = 0.5
FORCE = 0.001
GRAVITY = 0.0025


class MountainCarState(NamedTuple):
  position: jnp.ndarray    # [] float32
  velocity: jnp.ndarray    # [] float32
  timestep: jnp.ndarray    # [] int32: steps in this episode
  raw_return: jnp.ndarray  # [] float32: summed reward over all episodes


@dataclasses.dataclass(frozen=True)
class MountainCar:
  """Mountain car with episodes of at most `max_steps` steps (hashable)."""
  max_steps: int = 1000

  def __post_init__(self):
    if not isinstance(self.max_steps, int) or self.max_steps < 1:
      raise ValueError(f'`max_steps` must be an int >= 1, got '
                       f'{self.max_steps!r}.')

  @property
  def num_actions(self) -> int:
    return 3

  @property
  def observation_shape(self) -> Tuple[int, int]:
    return (1, 3)

  def _observation(self, state: MountainCarState) -> jnp.ndarray:
    return jnp.stack([state.position, state.velocity,
                      state.timestep / self.max_steps]).astype(
                          jnp.float32).reshape(1, 3)

  def reset(self, key, state: Optional[MountainCarState] = None
            ) -> Tuple[MountainCarState, dm_env.TimeStep]:
    """A new episode; given the previous state, its raw return carries over."""
    raw_return = (jnp.zeros((), jnp.float32) if state is None
                  else state.raw_return)
    new = MountainCarState(
        position=jax.random.uniform(key, (), jnp.float32, -0.6, -0.4),
        velocity=jnp.zeros((), jnp.float32),
        timestep=jnp.zeros((), jnp.int32), raw_return=raw_return)
    return new, dm_env.TimeStep(
        step_type=jnp.int32(dm_env.StepType.FIRST), reward=jnp.float32(0.0),
        discount=jnp.float32(1.0), observation=self._observation(new))

  def step(self, state: MountainCarState, action, key=None
           ) -> Tuple[MountainCarState, dm_env.TimeStep]:
    """One step; `key` is unused (the dynamics are deterministic)."""
    del key
    velocity = (state.velocity + (action - 1) * FORCE +
                jnp.cos(3 * state.position) * -GRAVITY)
    velocity = jnp.clip(velocity, -MAX_SPEED, MAX_SPEED)
    position = jnp.clip(state.position + velocity, MIN_POSITION, MAX_POSITION)
    # At the left wall the car stops unless it already moves right.
    velocity = jnp.where(position == MIN_POSITION,
                         jnp.clip(velocity, 0.0, MAX_SPEED), velocity)
    timestep = state.timestep + 1
    new = MountainCarState(position.astype(jnp.float32),
                           velocity.astype(jnp.float32), timestep,
                           state.raw_return - 1.0)
    last = (position >= GOAL_POSITION) | (timestep >= self.max_steps)
    return new, dm_env.TimeStep(
        step_type=jnp.where(last, int(dm_env.StepType.LAST),
                            int(dm_env.StepType.MID)).astype(jnp.int32),
        reward=jnp.float32(-1.0),
        discount=jnp.where(last, 0.0, 1.0).astype(jnp.float32),
        observation=self._observation(new))
