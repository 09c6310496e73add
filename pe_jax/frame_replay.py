"""Replay of pixel transitions that stores each frame once, with priorities.

For E environments stepped together (VizDoom's 32), each environment has its
own stream of T slots; slot t of a stream holds the newest frame of the
observation at a step, the action taken, the next reward and discount, and
how many steps into its episode it is. Observations (stacks of S frames) are
rebuilt at sampling time: stack position j of slot t is the frame of slot
t - min(S - 1 - j, episode_step[t]), which repeats the episode's first frame
where the stack reaches before the episode, as the environment does. An
episode's last observation gets a slot of its own (an "end" slot, never a
start) so truncated episodes bootstrap from it.

Sampling is proportional to priorities in a sum tree (`pe_jax.prioritized`),
which also marks which slots can start a transition: a slot gets a priority
when the n slots after it are written, and loses it when it, or a frame its
stack needs, is overwritten. Uniform sampling is priority 1 everywhere
(`alpha = 0`).

  replay = frame_replay_init(num_envs, slots_per_env, (42, 42), 6, n_step)
  replay = frame_replay_add(replay, observations, actions, next_timesteps)
  batch, indices, weights = frame_replay_sample(replay, key, B, beta, gamma)
  replay = frame_replay_set_priorities(replay, indices, priorities)
"""

from typing import NamedTuple, Tuple

import chex
import dm_env
import jax.numpy as jnp
import numpy as np

from pe_jax import prioritized
from pe_jax import replay as replay_lib


class FrameReplayState(NamedTuple):
  frames: jnp.ndarray        # [E, T, H, W] uint8: newest frame of each step
  action: jnp.ndarray        # [E, T] int32
  reward: jnp.ndarray        # [E, T] float32: reward after the action
  discount: jnp.ndarray      # [E, T] float32: environment discount after it
  episode_step: jnp.ndarray  # [E, T] int32: steps since the episode began
  is_end: jnp.ndarray        # [E, T] bool: an episode's last observation
  head: jnp.ndarray          # [E] int32: slots written per stream (total)
  next_episode_step: jnp.ndarray  # [E] int32: episode step of the next slot
  tree: jnp.ndarray          # [2L] float32 priorities of the E * T slots
  max_priority: jnp.ndarray  # [] float32: priority given to new slots


def frame_replay_init(num_envs: int, slots_per_env: int,
                      frame_shape: Tuple[int, int], stack: int,
                      n_step: int) -> FrameReplayState:
  """An empty replay of `num_envs` streams of `slots_per_env` slots."""
  for name, value, low in (('num_envs', num_envs, 1),
                           ('stack', stack, 1), ('n_step', n_step, 1),
                           ('slots_per_env', slots_per_env,
                            stack + 2 * n_step + 2)):
    if not isinstance(value, (int, np.integer)) or value < low:
      raise ValueError(f'`{name}` must be an int >= {low}, got {value!r}.')
  shape = (num_envs, slots_per_env)
  return FrameReplayState(
      frames=jnp.zeros(shape + tuple(frame_shape), jnp.uint8),
      action=jnp.zeros(shape, jnp.int32),
      reward=jnp.zeros(shape, jnp.float32),
      discount=jnp.zeros(shape, jnp.float32),
      episode_step=jnp.zeros(shape, jnp.int32),
      is_end=jnp.zeros(shape, bool),
      head=jnp.zeros(num_envs, jnp.int32),
      next_episode_step=jnp.zeros(num_envs, jnp.int32),
      tree=prioritized.sum_tree_init(num_envs * slots_per_env),
      max_priority=jnp.ones((), jnp.float32))


def _dims(state: FrameReplayState):
  num_envs, slots = state.action.shape
  return num_envs, slots


def _write(state: FrameReplayState, write, frame, action, reward, discount,
           is_end) -> FrameReplayState:
  """Writes one slot per stream where `write` [E] is true (else keeps)."""
  num_envs, slots = _dims(state)
  streams = jnp.arange(num_envs)
  t = state.head % slots
  episode_step = state.next_episode_step

  def put(array, value):
    old = array[streams, t]
    mask = write.reshape(write.shape + (1,) * (old.ndim - 1))
    return array.at[streams, t].set(jnp.where(mask, value.astype(array.dtype),
                                              old))

  return state._replace(
      frames=put(state.frames, frame), action=put(state.action, action),
      reward=put(state.reward, reward), discount=put(state.discount, discount),
      episode_step=put(state.episode_step, episode_step),
      is_end=put(state.is_end, is_end),
      head=state.head + write.astype(jnp.int32),
      next_episode_step=jnp.where(write, episode_step + 1, episode_step))


def _update_validity(state: FrameReplayState, wrote, stack: int,
                     n_step: int) -> FrameReplayState:
  """After a write at head - 1 of the streams in `wrote`: the slot written
  and the slot whose stack may need the frame it replaced lose priority; the
  slot n before it becomes a start (unless it is an end slot)."""
  num_envs, slots = _dims(state)
  streams = jnp.arange(num_envs)
  written = state.head - 1
  base = streams * slots
  tree = state.tree
  lost = jnp.stack([written % slots, (written + stack - 1) % slots], 1)
  lost_values = prioritized.sum_tree_get(tree, (base[:, None] + lost).ravel())
  tree = prioritized.sum_tree_set(
      tree, (base[:, None] + lost).ravel(),
      jnp.where(jnp.repeat(wrote, 2), 0.0, lost_values))
  start = (written - n_step) % slots
  is_start = wrote & (written >= n_step) & ~state.is_end[streams, start]
  old = prioritized.sum_tree_get(tree, base + start)
  tree = prioritized.sum_tree_set(
      tree, base + start, jnp.where(is_start, state.max_priority, old))
  return state._replace(tree=tree)


def frame_replay_add(state: FrameReplayState, observations: jnp.ndarray,
                     actions: jnp.ndarray, next_timesteps: dm_env.TimeStep,
                     n_step: int, active=None) -> FrameReplayState:
  """Stores one step of every stream.

  Args:
    state: the replay.
    observations: [E, H, W, S] uint8, the observations acted on (a stream's
      FIRST observation starts a new episode in it).
    actions: [E] int32.
    next_timesteps: the timesteps that followed, fields [E, ...]; where one
      is LAST its observation is stored as the episode's end slot.
    n_step: the return length the replay is sampled with.
    active: [E] bool, the streams that took a real step (default all); a
      stream whose observation was LAST restarts without a transition.
  """
  chex.assert_rank(observations, 4)
  stack = observations.shape[-1]
  # A slot starts its episode when the previous slot written was an end.
  num_envs, slots = _dims(state)
  previous = (state.head - 1) % slots
  after_end = (state.head == 0) | state.is_end[jnp.arange(num_envs), previous]
  state = state._replace(next_episode_step=jnp.where(
      after_end, 0, state.next_episode_step))
  # Streams written this step.
  stepped = (jnp.ones(num_envs, bool) if active is None
            else jnp.asarray(active, bool))
  state = _write(state, stepped, observations[..., -1], actions,
                 next_timesteps.reward, next_timesteps.discount,
                 jnp.zeros(num_envs, bool))
  state = _update_validity(state, stepped, stack, n_step)
  last = stepped & (jnp.asarray(next_timesteps.step_type)
                   == int(dm_env.StepType.LAST))
  return _write_ends(state, next_timesteps.observation, last, n_step)


def _write_ends(state, observations, ends, n_step: int) -> FrameReplayState:
  num_envs = observations.shape[0]
  zeros = jnp.zeros(num_envs)
  state = _write(state, ends, observations[..., -1],
                 jnp.zeros(num_envs, jnp.int32), zeros, zeros, ends)
  return _update_validity(state, ends, observations.shape[-1], n_step)


def frame_replay_end_episodes(state: FrameReplayState,
                              observations: jnp.ndarray, ongoing,
                              n_step: int) -> FrameReplayState:
  """Cuts the episodes of the streams in `ongoing` [E] at `observations`
  [E, H, W, S], the observations that followed their last stored step:
  stored as end slots, so their last transitions bootstrap from them (a
  truncation). Before restarting environments mid-episode."""
  return _write_ends(state, observations, jnp.asarray(ongoing, bool), n_step)


def _stacks(state: FrameReplayState, streams, t, stack: int) -> jnp.ndarray:
  """Observations [B, H, W, S] uint8 of slots t [B] of `streams` [B]."""
  slots = state.action.shape[1]
  back = jnp.minimum(stack - 1 - jnp.arange(stack)[None, :],
                     state.episode_step[streams, t][:, None])  # [B, S]
  frames = state.frames[streams[:, None], (t[:, None] - back) % slots]
  return jnp.moveaxis(frames, 1, -1)


def frame_replay_sample_at(state: FrameReplayState, indices: jnp.ndarray,
                           discount_factor, n_step: int, stack: int
                           ) -> replay_lib.Transition:
  """The n-step transitions starting at slots `indices` [B] (stream * T + t).

  Observations are uint8 stacks [B, H, W, S]; reward is the discounted
  n-step return cut at an episode's end; discount the product of gamma * d
  over the m steps taken (0 after a termination, gamma^m up to a
  truncation); next_observation the stack m steps on.
  """
  _, slots = _dims(state)
  streams, t = indices // slots, indices % slots
  window = (t[:, None] + jnp.arange(n_step)[None, :]) % slots  # [B, n]
  ends = state.is_end[streams[:, None], window]
  real = jnp.cumprod(~ends, axis=1).astype(jnp.float32)  # before any end
  step_discounts = jnp.where(
      real > 0, discount_factor * state.discount[streams[:, None], window],
      1.0)
  running = jnp.cumprod(step_discounts, axis=1)
  weights_before = jnp.concatenate(
      [jnp.ones_like(running[:, :1]), running[:, :-1]], axis=1)
  returns = jnp.sum(real * weights_before *
                    state.reward[streams[:, None], window], axis=1)
  steps = jnp.sum(real, axis=1).astype(jnp.int32)  # m, 1..n
  return replay_lib.Transition(
      observation=_stacks(state, streams, t, stack),
      action=state.action[streams, t],
      reward=returns,
      discount=running[:, -1],
      next_observation=_stacks(state, streams, (t + steps) % slots, stack))


def frame_replay_sample(state: FrameReplayState, key: chex.PRNGKey,
                        batch_size: int, beta, discount_factor,
                        n_step: int, stack: int
                        ) -> Tuple[replay_lib.Transition, jnp.ndarray,
                                   jnp.ndarray]:
  """A prioritized batch: (transition, indices [B], weights [B]).

  `transition` as `frame_replay_sample_at`; `indices` for
  `frame_replay_set_priorities`; importance `weights` as
  `prioritized.prioritized_sample`. Callers sample only once some slot has
  a priority (`frame_replay_num_starts` > 0).
  """
  _, slots = _dims(state)
  size = jnp.sum(jnp.minimum(state.head, slots))
  indices, weights = prioritized.prioritized_sample(state.tree, key,
                                                    batch_size, beta, size)
  transition = frame_replay_sample_at(state, indices, discount_factor,
                                      n_step, stack)
  return transition, indices, weights


def frame_replay_set_priorities(state: FrameReplayState, indices: jnp.ndarray,
                                priorities: jnp.ndarray) -> FrameReplayState:
  """New priorities [B] (> 0) of sampled slots `indices` [B]."""
  # A slot invalidated since it was sampled keeps priority 0.
  valid = prioritized.sum_tree_get(state.tree, indices) > 0
  tree = prioritized.sum_tree_set(state.tree, indices,
                                  jnp.where(valid, priorities, 0.0))
  return state._replace(
      tree=tree,
      max_priority=jnp.maximum(state.max_priority,
                               jnp.max(jnp.where(valid, priorities, 0.0))))


def frame_replay_num_starts(state: FrameReplayState) -> jnp.ndarray:
  """[] int32: slots that can start a transition (positive priority)."""
  num_leaves = state.tree.shape[0] // 2
  return jnp.sum(state.tree[num_leaves:] > 0).astype(jnp.int32)
