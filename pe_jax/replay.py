"""Uniform experience replay: a fixed-capacity ring buffer, in NumPy
(`ReplayBuffer`) and as a pure JAX value (`ReplayState` with `replay_init`,
`replay_add`, `replay_sample`) that lives inside an agent's state.

Transitions live in preallocated NumPy arrays; sampling draws all indices of a
batch in one vectorised call from a seeded `numpy.random.Generator`, so runs
are reproducible. With `n_step > 1` a sample carries the n-step return
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


class ReplayBuffer:
  """Fixed-capacity uniform replay with optional n-step returns.

  Args:
    capacity: number of transitions kept; the oldest is overwritten first.
    observation_shape: shape of one observation.
    discount_factor: gamma, folded into the sampled `discount`.
    n_step: length of the returns (1 is one-step TD).
    observation_dtype: storage dtype of observations.
  """

  def __init__(self,
               capacity: int,
               observation_shape,
               discount_factor: float = 0.99,
               n_step: int = 1,
               observation_dtype=np.float32):
    if not isinstance(capacity, (int, np.integer)) or capacity < 1:
      raise ValueError(f'`capacity` must be an int >= 1, got {capacity!r}.')
    if not isinstance(n_step, (int, np.integer)) or not 1 <= n_step <= capacity:
      raise ValueError(
          f'`n_step` must be an int in [1, capacity={capacity}], got {n_step!r}.')
    if not 0.0 <= discount_factor <= 1.0:
      raise ValueError(
          f'`discount_factor` must be in [0, 1], got {discount_factor}.')
    self.capacity = int(capacity)
    self.n_step = int(n_step)
    self.discount_factor = float(discount_factor)
    shape = (self.capacity,) + tuple(observation_shape)
    self._observation = np.zeros(shape, observation_dtype)
    self._next_observation = np.zeros(shape, observation_dtype)
    self._action = np.zeros(self.capacity, np.int32)
    self._reward = np.zeros(self.capacity, np.float32)
    self._discount = np.zeros(self.capacity, np.float32)
    self._next_index = 0
    self._size = 0

  def __len__(self) -> int:
    return self._size

  @property
  def num_sampleable(self) -> int:
    """Transitions whose n-step window is complete."""
    return max(0, self._size - self.n_step + 1)

  def add(self, observation, action: int, reward: float, discount: float,
          next_observation) -> None:
    """Stores one transition; `discount` is the environment's (0 at the end)."""
    i = self._next_index
    self._observation[i] = observation
    self._action[i] = action
    self._reward[i] = reward
    self._discount[i] = discount
    self._next_observation[i] = next_observation
    self._next_index = (i + 1) % self.capacity
    self._size = min(self._size + 1, self.capacity)

  def sample(self, batch_size: int, rng: np.random.Generator) -> Transition:
    """A batch of `batch_size` transitions drawn uniformly with replacement."""
    if batch_size < 1:
      raise ValueError(f'`batch_size` must be >= 1, got {batch_size}.')
    available = self.num_sampleable
    if available < 1:
      raise ValueError(
          f'Cannot sample {batch_size} transitions: the buffer holds '
          f'{self._size}, and {self.n_step}-step returns need at least '
          f'{self.n_step}.')
    # Position 0 is the oldest stored transition.
    oldest = (self._next_index - self._size) % self.capacity
    start = (oldest + rng.integers(0, available, size=batch_size)) % self.capacity
    if self.n_step == 1:
      return Transition(self._observation[start], self._action[start],
                        self._reward[start],
                        self.discount_factor * self._discount[start],
                        self._next_observation[start])
    window = (start[:, None] + np.arange(self.n_step)[None, :]) % self.capacity
    step_discounts = self.discount_factor * self._discount[window]  # [B, n]
    # Discount applied to the reward of step k: prod_{l<k} gamma * d_l.
    running = np.cumprod(step_discounts, axis=1)
    weights = np.concatenate([np.ones((batch_size, 1), np.float32),
                              running[:, :-1]], axis=1)
    returns = np.sum(weights * self._reward[window], axis=1)
    last = window[:, -1]
    return Transition(self._observation[start], self._action[start],
                      returns.astype(np.float32),
                      running[:, -1].astype(np.float32),
                      self._next_observation[last])


# The same buffer as a pure value: a pytree of JAX arrays and functions over
# it, so that replay lives in an agent's state and jits, vmaps and scans.


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

  Same arithmetic as `ReplayBuffer.sample` given the same positions:
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
