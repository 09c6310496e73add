"""Uniform experience replay: a fixed-capacity ring buffer as a pure JAX
value (`ReplayState` with `replay_init`, `replay_add`, `replay_sample`) that
lives inside an agent's state (tests/numpy_replay.py holds the NumPy
reference it is tested against).

With `n_step > 1` a sample carries the n-step return
r_0 + g d_0 r_1 + ... and the bootstrap discount g^n d_0 ... d_{n-1}, cut at
episode ends (d = 0) and never reaching past the newest transition.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class Transition(NamedTuple):
  observation: np.ndarray       # [B, *obs_shape]
  action: np.ndarray            # [B] int32
  reward: np.ndarray            # [B] (n-step) return
  discount: np.ndarray          # [B] bootstrap discount, gamma^n * prod(d)
  next_observation: np.ndarray  # [B, *obs_shape]


class ReplayState(NamedTuple):
  """A fixed-capacity ring buffer of transitions, as JAX arrays.

  Slot i holds transition i: observations in their own dtype, reward and
  the environment's discount (0 at an episode's end) as float32.
  """
  observation: jnp.ndarray       # [C, *obs_shape]
  action: jnp.ndarray            # [C] int32
  reward: jnp.ndarray            # [C] float32
  discount: jnp.ndarray          # [C] float32
  next_observation: jnp.ndarray  # [C, *obs_shape]
  next_index: jnp.ndarray        # [] int32: the slot written next
  size: jnp.ndarray              # [] int32: slots filled


def replay_init(capacity: int, observation_shape,
                observation_dtype=jnp.float32) -> ReplayState:
  """An empty buffer of `capacity` transitions."""
  if not isinstance(capacity, (int, np.integer)) or capacity < 1:
    raise ValueError(f'`capacity` must be an int >= 1, got {capacity!r}.')
  shape = (int(capacity),) + tuple(observation_shape)
  return ReplayState(
      observation=jnp.zeros(shape, observation_dtype),
      action=jnp.zeros(capacity, jnp.int32),
      reward=jnp.zeros(capacity, jnp.float32),
      discount=jnp.zeros(capacity, jnp.float32),
      next_observation=jnp.zeros(shape, observation_dtype),
      next_index=jnp.zeros((), jnp.int32),
      size=jnp.zeros((), jnp.int32))


def replay_capacity(state: ReplayState) -> int:
  return state.action.shape[-1]


def replay_add(state: ReplayState, observation, action, reward, discount,
               next_observation) -> ReplayState:
  """Stores one transition; `discount` is the environment's (0 at the end)."""
  i = state.next_index
  capacity = replay_capacity(state)
  dtype = state.observation.dtype
  return ReplayState(
      observation=state.observation.at[i].set(
          jnp.asarray(observation).astype(dtype)),
      action=state.action.at[i].set(jnp.asarray(action, jnp.int32)),
      reward=state.reward.at[i].set(jnp.asarray(reward, jnp.float32)),
      discount=state.discount.at[i].set(jnp.asarray(discount, jnp.float32)),
      next_observation=state.next_observation.at[i].set(
          jnp.asarray(next_observation).astype(dtype)),
      next_index=(i + 1) % capacity,
      size=jnp.minimum(state.size + 1, capacity))


def replay_num_sampleable(state: ReplayState, n_step: int = 1) -> jnp.ndarray:
  """Transitions whose n-step window is complete: [] int32."""
  return jnp.maximum(state.size - n_step + 1, 0)


def replay_sample_at(state: ReplayState, positions: jnp.ndarray,
                     discount_factor: float, n_step: int = 1) -> Transition:
  """The transitions at `positions` [B] (0 = the oldest stored one).

  Same arithmetic as the NumPy reference's `sample` (tests/numpy_replay.py)
  given the same positions:
  observations come back as float32, n-step returns are cut at d = 0.
  """
  capacity = replay_capacity(state)
  oldest = (state.next_index - state.size) % capacity
  start = (oldest + positions) % capacity
  window = (start[:, None] + jnp.arange(n_step)[None, :]) % capacity  # [B, n]
  step_discounts = discount_factor * state.discount[window]
  running = jnp.cumprod(step_discounts, axis=1)
  weights = jnp.concatenate(
      [jnp.ones_like(running[:, :1]), running[:, :-1]], axis=1)
  returns = jnp.sum(weights * state.reward[window], axis=1)
  return Transition(
      observation=state.observation[start].astype(jnp.float32),
      action=state.action[start],
      reward=returns,
      discount=running[:, -1],
      next_observation=state.next_observation[window[:, -1]].astype(
          jnp.float32))


def replay_sample(state: ReplayState, key, batch_size: int,
                  discount_factor: float, n_step: int = 1) -> Transition:
  """`batch_size` transitions drawn uniformly with replacement.

  Only meaningful once `replay_num_sampleable(state, n_step) >= 1`; callers
  gate learning on that count (see `agents.pure`).
  """
  available = jnp.maximum(replay_num_sampleable(state, n_step), 1)
  positions = jax.random.randint(key, (batch_size,), 0, available)
  return replay_sample_at(state, positions, discount_factor, n_step)
