"""A NumPy ring buffer: the independent reference `pe_jax.replay` is tested
against (tests/test_replay.py).

Transitions live in preallocated NumPy arrays; sampling draws all indices of
a batch in one vectorised call from a seeded `numpy.random.Generator`.
"""

import numpy as np

from pe_jax.replay import Transition


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
