"""bsuite's deep sea (Osband et al., 2019) as a pure JAX environment.

  env = DeepSea(size=10, mapping_seed=0)
  state, timestep = env.reset(key)
  state, timestep = env.step(state, action, key)

Same dynamics, rewards, observations and counters as
`bsuite.environments.deep_sea.DeepSea`: for the same `mapping_seed` the
deterministic variant matches it step by step, and the stochastic one
('right' fails with probability 1 / N, N(0, 1) noise on the last row's two
end cells) follows the same law. `state.total_bad_episodes` counts what
bsuite's `bsuite_info()` counts, i.e. episodes that left the diagonal with a
'left' move while on it.
"""

import dataclasses
from typing import NamedTuple, Optional, Tuple

import dm_env
import jax
import jax.numpy as jnp
import numpy as np


class DeepSeaState(NamedTuple):
  row: jnp.ndarray                 # [] int32
  column: jnp.ndarray              # [] int32
  bad_episode: jnp.ndarray         # [] bool: left the diagonal this episode
  total_bad_episodes: jnp.ndarray  # [] int32, over all finished episodes
  denoised_return: jnp.ndarray     # [] float32: treasures found, over all
  action_mapping: jnp.ndarray      # [N, N] int32: the 'right' action per cell


def bsuite_action_mapping(size: int, mapping_seed: Optional[int]) -> np.ndarray:
  """bsuite's mapping: `RandomState(mapping_seed).binomial(1, .5, [N, N])`."""
  return np.random.RandomState(mapping_seed).binomial(
      1, 0.5, [size, size]).astype(np.int32)


@dataclasses.dataclass(frozen=True)
class DeepSea:
  """Deep sea of `size` x `size` cells; hashable, so it can be static.

  Args:
    size: N, the grid's side and the episode length (>= 1).
    deterministic: False: 'right' fails w.p. 1/N and the end cells of the last
      row add N(0, 1) reward noise (bsuite's `deep_sea_stochastic`).
    unscaled_move_cost: cost of a 'right' move, divided by N.
    randomize_actions: False: action 1 is 'right' everywhere (debug mode).
    mapping_seed: seed of bsuite's action mapping; None draws the mapping
      from the key given to the first `reset`.
  """
  size: int
  deterministic: bool = True
  unscaled_move_cost: float = 0.01
  randomize_actions: bool = True
  mapping_seed: Optional[int] = None

  def __post_init__(self):
    if not isinstance(self.size, (int, np.integer)) or self.size < 1:
      raise ValueError(f'`size` must be an int >= 1, got {self.size!r}.')

  @property
  def num_actions(self) -> int:
    return 2

  @property
  def observation_shape(self) -> Tuple[int, int]:
    return (self.size, self.size)

  # The fixed-length episode interface of `agents.training.make_train`.

  @property
  def episode_length(self) -> int:
    """Every episode takes exactly N steps."""
    return self.size

  @property
  def num_state_actions(self) -> int:
    return self.size * self.size * self.num_actions

  def state_action_index(self, state: DeepSeaState, action) -> jnp.ndarray:
    """[] int32 in [0, N * N * A): (row * N + column) * A + action."""
    return (state.row * self.size + state.column) * self.num_actions + action

  def episode_counters(self, state: DeepSeaState
                       ) -> Tuple[jnp.ndarray, jnp.ndarray]:
    """bsuite's counters after an episode: (total_bad_episodes [] int32,
    denoised_return [] float32, the treasures found so far)."""
    return state.total_bad_episodes, state.denoised_return

  def action_mapping(self, key) -> jnp.ndarray:
    """The [N, N] mapping a first `reset(key)` uses."""
    n = self.size
    if not self.randomize_actions:
      return jnp.ones((n, n), jnp.int32)
    if self.mapping_seed is not None:
      return jnp.asarray(bsuite_action_mapping(n, self.mapping_seed))
    return jax.random.bernoulli(key, 0.5, (n, n)).astype(jnp.int32)

  def _observation(self, row, column) -> jnp.ndarray:
    n = self.size
    on_grid = row < n
    cells = jnp.arange(n * n).reshape(n, n)
    return ((cells == row * n + column) & on_grid).astype(jnp.float32)

  def reset(self, key, state: Optional[DeepSeaState] = None,
            action_mapping: Optional[jnp.ndarray] = None
            ) -> Tuple[DeepSeaState, dm_env.TimeStep]:
    """A new episode. Given the previous `state`, its counters and mapping
    carry over (as bsuite's do across resets); `action_mapping` [N, N]
    overrides the mapping of a first reset."""
    zero = jnp.zeros((), jnp.int32)
    if state is None:
      if action_mapping is None:
        action_mapping = self.action_mapping(key)
      state = DeepSeaState(zero, zero, jnp.zeros((), bool), zero,
                           jnp.zeros((), jnp.float32),
                           jnp.asarray(action_mapping, jnp.int32))
    state = state._replace(row=zero, column=zero,
                           bad_episode=jnp.zeros((), bool))
    timestep = dm_env.TimeStep(
        step_type=jnp.asarray(int(dm_env.StepType.FIRST), jnp.int32),
        reward=jnp.zeros((), jnp.float32),
        discount=jnp.ones((), jnp.float32),
        observation=self._observation(state.row, state.column))
    return state, timestep

  def step(self, state: DeepSeaState, action, key=None
           ) -> Tuple[DeepSeaState, dm_env.TimeStep]:
    """One move; `key` is needed only by the stochastic variant.

    The step after the last one of an episode is the caller's `reset`.
    """
    n = self.size
    row, column = state.row, state.column
    action_right = action == state.action_mapping[jnp.minimum(row, n - 1),
                                                  column]
    treasure = (column == n - 1) & action_right
    reward = jnp.where(treasure, 1.0, 0.0)
    moved_right = action_right
    if not self.deterministic:
      noise_key, move_key = jax.random.split(key)
      at_end = (row == n - 1) & ((column == 0) | (column == n - 1))
      reward = reward + jnp.where(at_end, jax.random.normal(noise_key), 0.0)
      moved_right = action_right & (jax.random.uniform(move_key) > 1.0 / n)
    reward = reward - jnp.where(action_right, self.unscaled_move_cost / n, 0.0)
    bad_episode = state.bad_episode | (~action_right & (row == column))
    column = jnp.where(moved_right, jnp.minimum(column + 1, n - 1),
                       jnp.where(action_right, column,
                                 jnp.maximum(column - 1, 0)))
    row = row + 1
    last = row == n
    state = DeepSeaState(
        row=row, column=column.astype(jnp.int32), bad_episode=bad_episode,
        total_bad_episodes=state.total_bad_episodes +
        (last & bad_episode).astype(jnp.int32),
        denoised_return=state.denoised_return +
        treasure.astype(jnp.float32),
        action_mapping=state.action_mapping)
    timestep = dm_env.TimeStep(
        step_type=jnp.where(last, int(dm_env.StepType.LAST),
                            int(dm_env.StepType.MID)).astype(jnp.int32),
        reward=reward.astype(jnp.float32),
        discount=jnp.where(last, 0.0, 1.0).astype(jnp.float32),
        observation=self._observation(row, column))
    return state, timestep
