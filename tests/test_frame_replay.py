"""Frame replay: stacks, n-step returns and which slots can start, against
a brute-force record of every transition."""

import dm_env
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pe_jax import frame_replay

STACK, N_STEP, GAMMA = 3, 4, 0.9


class _Streams:
  """E synthetic environments whose frames carry a unique id in pixel 0."""

  def __init__(self, num_envs, seed):
    self.rng = np.random.default_rng(seed)
    self.num_envs = num_envs
    self.next_id = 1
    self.stacks = [None] * num_envs
    self.steps_left = [0] * num_envs
    self.first = [True] * num_envs

  def frame(self):
    frame = np.zeros((2, 3), np.uint8)
    frame[0, 0], frame[0, 1] = self.next_id % 256, self.next_id // 256
    frame[1] = self.next_id % 7
    self.next_id += 1
    return frame

  def reset_stream(self, e):
    f = self.frame()
    self.stacks[e] = np.repeat(f[..., None], STACK, -1)
    self.steps_left[e] = int(self.rng.integers(1, 9))
    return dm_env.restart(self.stacks[e].copy())

  def step_stream(self, e):
    f = self.frame()
    self.stacks[e] = np.concatenate([self.stacks[e][..., 1:], f[..., None]],
                                    -1)
    self.steps_left[e] -= 1
    reward = float(self.rng.normal())
    if self.steps_left[e] == 0:
      if self.rng.random() < 0.5:
        return dm_env.termination(reward, self.stacks[e].copy())
      return dm_env.truncation(reward, self.stacks[e].copy())
    return dm_env.transition(reward, self.stacks[e].copy())


def _ids(stack):
  """Frame ids of a [H, W, S] stack."""
  stack = np.asarray(stack).astype(np.int64)
  return tuple(stack[0, 0] + 256 * stack[0, 1])


def _stacked(timesteps):
  return dm_env.TimeStep(
      step_type=np.array([t.step_type for t in timesteps], np.int32),
      reward=np.array([t.reward or 0.0 for t in timesteps], np.float32),
      discount=np.array([1.0 if t.discount is None else t.discount
                         for t in timesteps], np.float32),
      observation=np.stack([t.observation for t in timesteps]))


def _run(num_envs, slots, num_steps, seed=0):
  """Fills a replay; returns it and the reference per start slot write."""
  env = _Streams(num_envs, seed)
  rng = np.random.default_rng(seed + 1)
  state = frame_replay.frame_replay_init(num_envs, slots, (2, 3), STACK,
                                         N_STEP)
  add = jax.jit(frame_replay.frame_replay_add, static_argnums=4)
  timesteps = [env.reset_stream(e) for e in range(num_envs)]
  episodes = [[] for _ in range(num_envs)]  # current episode's steps
  references = {}  # frame id of the observation -> expected transition
  writes = [0] * num_envs
  positions = {}  # frame id -> (stream, write count of its slot)
  for _ in range(num_steps):
    actions = rng.integers(0, 5, num_envs)
    next_timesteps = []
    active = []
    for e in range(num_envs):
      if timesteps[e].last():
        next_timesteps.append(env.reset_stream(e))
        active.append(False)
        continue
      active.append(True)
      new = env.step_stream(e)
      next_timesteps.append(new)
      positions[_ids(timesteps[e].observation)[-1]] = (e, writes[e])
      writes[e] += 1
      episodes[e].append((timesteps[e].observation, int(actions[e]),
                          new.reward, new.discount))
      if new.last():
        writes[e] += 1  # the end slot
        observations = [s[0] for s in episodes[e]] + [new.observation]
        for k, (observation, action, _, _) in enumerate(episodes[e]):
          m = min(N_STEP, len(episodes[e]) - k)
          ret, discount = 0.0, 1.0
          for _, _, r, d in episodes[e][k:k + m]:
            ret += discount * r
            discount *= GAMMA * d
          references[_ids(observation)[-1]] = (
              _ids(observation), action, ret, discount,
              _ids(observations[k + m]))
        episodes[e] = []
    state = add(state, jnp.asarray(np.stack([t.observation
                                             for t in timesteps])),
                jnp.asarray(actions, jnp.int32), _stacked(next_timesteps),
                N_STEP, jnp.asarray(active))
    timesteps = next_timesteps
  # Transitions of unfinished episodes, with all n steps seen.
  for e in range(num_envs):
    steps = episodes[e]
    for k in range(len(steps) - N_STEP):
      ret, discount = 0.0, 1.0
      for _, _, r, d in steps[k:k + N_STEP]:
        ret += discount * r
        discount *= GAMMA * d
      references[_ids(steps[k][0])[-1]] = (
          _ids(steps[k][0]), steps[k][1], ret, discount,
          _ids(steps[k + N_STEP][0]))
  return state, references, positions, writes


@pytest.mark.parametrize('slots', [40, 1000])  # wrapped around, and not
def test_every_start_slot_matches_the_brute_force_transition(slots):
  state, references, positions, writes = _run(3, slots, 120)
  num_leaves = state.tree.shape[0] // 2
  starts = np.flatnonzero(np.asarray(state.tree[num_leaves:]) > 0)
  batch = frame_replay.frame_replay_sample_at(
      state, jnp.asarray(starts), GAMMA, N_STEP, STACK)
  for i, start in enumerate(starts):
    observation = _ids(batch.observation[i])
    ids, action, ret, discount, next_ids = references[observation[-1]]
    assert observation == ids
    assert int(batch.action[i]) == action
    np.testing.assert_allclose(float(batch.reward[i]), ret, rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(float(batch.discount[i]), discount, rtol=1e-5)
    assert _ids(batch.next_observation[i]) == next_ids
  # The starts are exactly the transitions whose n slots after them are
  # written and whose slot and stack frames are not overwritten.
  expected = set()
  for frame_id, (e, p) in positions.items():
    if p + N_STEP + 1 <= writes[e] <= p + slots - STACK + 1:
      expected.add((e, p % slots))
  found = {(int(i) // slots, int(i) % slots) for i in starts}
  assert found == expected
  assert int(frame_replay.frame_replay_num_starts(state)) == len(expected)
  if slots == 1000:
    # Nothing overwritten: every transition with n slots written after it
    # (a transition near the end of a finished episode waits for them too).
    complete = [i for i in references
                if positions[i][1] + N_STEP + 1 <= writes[positions[i][0]]]
    assert len(found) == len(complete) > 250


def test_n_step_return_by_hand():
  # One stream: rewards 1, 2, 3, 4, the 4th step terminates.
  state = frame_replay.frame_replay_init(1, 20, (1, 1), 1, 3)
  for k, (reward, step_type, discount) in enumerate(
      [(1.0, 1, 1.0), (2.0, 1, 1.0), (3.0, 1, 1.0), (4.0, 2, 0.0),
       (0.0, 0, 1.0), (0.0, 1, 1.0), (0.0, 1, 1.0), (0.0, 1, 1.0)]):
    observation = jnp.full((1, 1, 1, 1), 10 + k, jnp.uint8)
    timestep = dm_env.TimeStep(jnp.array([step_type]), jnp.array([reward]),
                               jnp.array([discount]),
                               jnp.full((1, 1, 1, 1), 11 + k, jnp.uint8))
    active = jnp.array([k != 4])  # the step after LAST restarts
    state = frame_replay.frame_replay_add(state, observation,
                                          jnp.array([k]), timestep, 3, active)
  batch = frame_replay.frame_replay_sample_at(state, jnp.array([0, 2, 3]),
                                              0.5, 3, 1)
  # Slot 0: 1 + 0.5 * 2 + 0.25 * 3, bootstrap 0.125 from observation 13.
  # Slot 2: 3 + 0.5 * 4, discount 0 (terminated). Slot 3: 4, discount 0.
  np.testing.assert_allclose(batch.reward, [2.75, 5.0, 4.0])
  np.testing.assert_allclose(batch.discount, [0.125, 0.0, 0.0])
  np.testing.assert_array_equal(batch.next_observation[:, 0, 0, 0],
                                [13, 14, 14])


def test_priorities_sampling_and_errors():
  state, _, _, _ = _run(2, 60, 50, seed=3)
  transition, indices, weights = jax.jit(
      frame_replay.frame_replay_sample, static_argnums=(2, 5, 6))(
          state, jax.random.PRNGKey(0), 16, 0.45, GAMMA, N_STEP, STACK)
  assert transition.observation.shape == (16, 2, 3, STACK)
  assert transition.observation.dtype == jnp.uint8
  num_leaves = state.tree.shape[0] // 2
  assert np.all(np.asarray(state.tree[num_leaves:])[np.asarray(indices)] > 0)
  assert weights.shape == (16,)
  state = frame_replay.frame_replay_set_priorities(
      state, indices, jnp.full(16, 7.0))
  assert float(state.max_priority) == 7.0
  # A slot without priority (not a start) keeps none.
  empty = int(np.flatnonzero(np.asarray(state.tree[num_leaves:]) == 0)[0])
  state = frame_replay.frame_replay_set_priorities(
      state, jnp.array([empty]), jnp.array([3.0]))
  assert float(state.tree[num_leaves + empty]) == 0.0
  with pytest.raises(ValueError, match='`slots_per_env` must be an int >='):
    frame_replay.frame_replay_init(2, 5, (2, 3), STACK, N_STEP)
