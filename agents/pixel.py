"""Agents on pixels from E environments at once (VizDoom, PE-DQN paper
Sec. 6.4, Table 5), as pure functions over one state pytree: PE-DQN
(`agents.pe_dqn`), BDQN+P (`agents.q_ensemble`, one head per episode and
environment), DLTV-QR (`agents.distributional`, its time t the frame
count) and IDS-C51 (`agents.ids_c51`), all with `torso='impala'`.

  agent = make_pixel_agent(config, settings)
  state = agent.init(key)
  state, actions = agent.act(state, observations)              # [E, ...]
  state, metrics = agent.update(state, observations, actions,
                                next_timesteps, active)

The state holds the learner (parameters, targets, optimiser, RNG), a frame
replay with priorities (`pe_jax.frame_replay`: each frame stored once), the
sampling key and the frame counter. Schedules count frames (environment
steps summed over the E environments, as the paper's 10M frames):
epsilon-greedy 1 -> 0.01 over `epsilon_decay_frames`; PE-DQN's beta moves
from `beta_init` to `beta_final` over the config's `beta_decay_episodes`,
which this agent reads as frames; the importance exponent of prioritized
replay anneals from `per_beta0` to 1 over the run's `total_frames`. One
learning step follows every vector step once `learning_starts` frames are
stored, sampling n-step transitions in proportion to their priorities,
(|loss| + 1e-6)^per_alpha of the sample's last loss; new transitions get the
largest priority seen.
"""

import dataclasses
from typing import Any, Callable, NamedTuple, Tuple

import dm_env
import jax
import jax.numpy as jnp

from agents import common
from agents import distributional
from agents import ids_c51
from agents import pe_dqn
from agents import pure
from agents import q_ensemble
from pe_jax import frame_replay
from pe_jax import prioritized


@dataclasses.dataclass(frozen=True)
class PixelSettings:
  """What the runner owns: environments, replay, schedules (in frames)."""
  num_envs: int = 32
  frame_shape: Tuple[int, int] = (42, 42)
  stack: int = 6
  replay_frames: int = 1_000_000
  n_step: int = 10
  learning_starts: int = 100_000
  epsilon_start: float = 1.0
  epsilon_final: float = 0.01
  epsilon_decay_frames: int = 500_000
  per_alpha: float = 0.5
  per_beta0: float = 0.45
  total_frames: int = 10_000_000
  # Table 5: the target network every 8,000 frames; App. B.2: beta decays
  # over a third of the run.
  target_update_frames: int = 8000
  beta_decay_fraction: float = 0.33

  def __post_init__(self):
    common.check_scalars(self)
    for name in ('num_envs', 'stack', 'n_step', 'replay_frames',
                 'total_frames', 'epsilon_decay_frames',
                 'target_update_frames'):
      common.require(isinstance(getattr(self, name), int) and
                     getattr(self, name) >= 1, name, 'an int >= 1',
                     getattr(self, name))
    common.require_nonnegative(self, 'learning_starts', 'per_alpha')
    common.require(
        self.replay_frames // self.num_envs >= self.stack + 2 * self.n_step + 2,
        'replay_frames', f'>= num_envs * (stack + 2 n_step + 2) = '
        f'{self.num_envs * (self.stack + 2 * self.n_step + 2)}',
        self.replay_frames)
    common.require(0.0 < self.beta_decay_fraction <= 1.0,
                   'beta_decay_fraction', 'in (0, 1]',
                   self.beta_decay_fraction)
    for name in ('epsilon_start', 'epsilon_final', 'per_beta0'):
      common.require(0.0 <= getattr(self, name) <= 1.0, name, 'in [0, 1]',
                     getattr(self, name))

  @property
  def slots_per_env(self) -> int:
    return self.replay_frames // self.num_envs

  @property
  def observation_shape(self) -> Tuple[int, int, int]:
    return tuple(self.frame_shape) + (self.stack,)


class PixelState(NamedTuple):
  learner: Any                          # the learner's train state
  replay: frame_replay.FrameReplayState
  key: jnp.ndarray                      # acting and sampling
  frames: jnp.ndarray                   # [] int32: environment steps
  metrics: Any                          # the last learning step's
  heads: jnp.ndarray                    # [E] int32: acting head per env


class PixelLearner(NamedTuple):
  """A learner's own functions (`scores` and `learn` as on bsuite, with the
  frame count as their clock) and how many heads act."""
  init: Callable       # (config, key, observation) -> learner state
  scores: Callable     # (config, learner, observation, frames, head) -> [A]
  learn: Callable      # (config, learner, batch, frames, weights) ->
                       #  (learner, metrics, [B] sample losses)
  num_heads: Callable  # (config) -> heads drawn per episode
  metrics: Tuple[str, ...]  # learn's (`pure.LearnerFns.metrics`)


LEARNERS = {
    pe_dqn.PEDQNConfig: PixelLearner(pe_dqn.init, pe_dqn.scores,
                                     pe_dqn.learn, lambda c: 1,
                                     pe_dqn.LEARNER.metrics),
    q_ensemble.QEnsembleConfig: PixelLearner(
        q_ensemble.init, q_ensemble.scores, q_ensemble.learn,
        lambda c: c.num_ensemble, q_ensemble.LEARNER.metrics),
    distributional.DistributionalConfig: PixelLearner(
        distributional.init, distributional.scores, distributional.learn,
        lambda c: 1, distributional.LEARNER.metrics),
    ids_c51.IDSConfig: PixelLearner(ids_c51.init, ids_c51.scores,
                                    ids_c51.learn, lambda c: 1,
                                    ids_c51.LEARNER.metrics),
}


class PixelAgent(NamedTuple):
  """Pure functions of the agent.

  `update` = `observe`, then `learn` where `ready` (a `lax.cond`), for use
  inside one compiled program. XLA's CPU backend runs the convolutions of a
  conditional's branch about 7x slower than at top level (batch 32: 4.2 s
  against 0.55 s a learning step), so a Python loop that knows its frame
  count calls `observe` and `learn` as separate programs instead.
  """
  init: Callable     # (key) -> PixelState
  act: Callable      # (state, observations [E, H, W, S]) -> (state, [E])
  update: Callable   # (state, observations, actions, next_timesteps,
                     #  active [E]) -> (state, metrics)
  observe: Callable  # (state, observations, actions, next_timesteps,
                     #  active) -> state: store the step, count frames
  learn: Callable    # (state) -> (state, metrics): one learning step
  ready: Callable    # (state) -> []: learning has started
  config: Any
  settings: PixelSettings


def make_pixel_agent(config, settings: PixelSettings) -> PixelAgent:
  """Pure functions of the agent of `config` (a PE-DQN or Q-ensemble config
  with torso='impala') over E environments."""
  if type(config) not in LEARNERS:
    raise TypeError(f'No pixel learner for {type(config).__name__}; known: '
                    f'{[c.__name__ for c in LEARNERS]}.')
  rule = {q_ensemble.QEnsembleConfig: 'sample_member',
          distributional.DistributionalConfig: 'dltv'}.get(type(config))
  if rule is not None and config.action_rule != rule:
    raise ValueError(f'{type(config).__name__} on pixels acts with '
                     f'action_rule={rule!r}, got {config.action_rule!r}.')
  common.require(config.torso == 'impala', 'torso', "'impala' for pixels",
                 config.torso)
  fns = LEARNERS[type(config)]
  num_heads = fns.num_heads(config)
  n_step, stack = settings.n_step, settings.stack

  def init(key) -> PixelState:
    learner_key, heads_key, key = jax.random.split(key, 3)
    observation = jnp.zeros(settings.observation_shape, jnp.float32)
    learner = fns.init(config, learner_key, observation)
    replay = frame_replay.frame_replay_init(
        settings.num_envs, settings.slots_per_env, settings.frame_shape,
        stack, n_step)
    frames = jnp.zeros((), jnp.int32)
    metrics = pure.zero_metrics(fns.metrics)
    heads = jax.random.randint(heads_key, (settings.num_envs,), 0, num_heads)
    return PixelState(learner, replay, key, frames, metrics, heads)

  def epsilon(frames):
    return common.linear_decay(settings.epsilon_start, frames,
                               settings.epsilon_decay_frames,
                               settings.epsilon_final)

  def act(state: PixelState, observations):
    # Each environment's observation scored with its own acting head.
    batch_scores = jax.vmap(fns.scores, in_axes=(None, None, 0, None, 0))
    greedy = jnp.argmax(batch_scores(config, state.learner,
                                     jnp.asarray(observations), state.frames,
                                     state.heads), axis=-1)
    key, explore_key, action_key = jax.random.split(state.key, 3)
    num_envs = observations.shape[0]
    explore = jax.random.uniform(explore_key, (num_envs,)) < epsilon(
        state.frames)
    random_actions = jax.random.randint(action_key, (num_envs,), 0,
                                        config.num_actions)
    actions = jnp.where(explore, random_actions, greedy).astype(jnp.int32)
    return state._replace(key=key), actions

  def observe(state: PixelState, observations, actions, next_timesteps,
              active) -> PixelState:
    replay = frame_replay.frame_replay_add(
        state.replay, observations, actions, next_timesteps, n_step, active)
    frames = state.frames + jnp.sum(active).astype(jnp.int32)
    # A new acting head for each environment whose episode ended.
    key, heads_key = jax.random.split(state.key)
    ended = jnp.asarray(active) & (jnp.asarray(next_timesteps.step_type) ==
                                   int(dm_env.StepType.LAST))
    heads = jnp.where(ended, jax.random.randint(
        heads_key, ended.shape, 0, num_heads), state.heads)
    return state._replace(replay=replay, frames=frames, key=key, heads=heads)

  def learn(state: PixelState):
    key, sample_key = jax.random.split(state.key)
    fraction = jnp.clip(state.frames / settings.total_frames, 0.0, 1.0)
    per_beta = settings.per_beta0 + (1.0 - settings.per_beta0) * fraction
    batch, indices, weights = frame_replay.frame_replay_sample(
        state.replay, sample_key, config.batch_size, per_beta,
        config.discount, n_step, stack)
    learner, metrics, sample_losses = fns.learn(
        config, state.learner, batch, state.frames, weights)
    replay = frame_replay.frame_replay_set_priorities(
        state.replay, indices, prioritized.priorities_from_losses(
            sample_losses, settings.per_alpha))
    return state._replace(learner=learner, replay=replay, key=key,
                          metrics=metrics), metrics

  def ready(state: PixelState):
    return ((state.frames >= settings.learning_starts) &
            (prioritized.sum_tree_total(state.replay.tree) > 0))

  def update(state: PixelState, observations, actions, next_timesteps,
             active):
    state = observe(state, observations, actions, next_timesteps, active)
    return jax.lax.cond(ready(state), learn,
                        lambda state: (state, state.metrics), state)

  return PixelAgent(init, act, update, observe, learn, ready, config,
                    settings)


def truncate_episodes(state: PixelState, observations, step_types,
                      n_step: int) -> PixelState:
  """Cuts the episodes in progress at `observations` [E, ...] before the
  environments restart (e.g. at a checkpoint): each is stored as ended
  there and its last transitions bootstrap from it, as at a truncation.
  Streams whose `step_types` [E] is FIRST or LAST have nothing to cut."""
  ongoing = jnp.asarray(step_types) == int(dm_env.StepType.MID)
  replay = frame_replay.frame_replay_end_episodes(
      state.replay, jnp.asarray(observations), ongoing, n_step)
  return state._replace(replay=replay)
