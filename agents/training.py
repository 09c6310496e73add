"""Whole trainings as one compiled program: a pure agent on a JAX environment.

  agent = agents.make_pure('boot_dqn', obs_spec, action_spec)
  env = deep_sea.DeepSea(10)
  train = training.make_train(agent, env, episodes_per_call=100)
  carry = pure.jit_init(jax.vmap(train.init))(keys, mappings)   # S seeds
  carry, episodes = jax.jit(jax.vmap(train.run))(carry)   # 100 episodes each

Each call of `run` scans over `episodes_per_call` episodes of a fixed-length
environment (deep sea: N steps each; `make_train` says what the environment
provides, `make_train_steps` trains on episodes of any length); act,
environment step, replay and learning all happen inside the scan. Calling
`run` again continues the same trainings, so a driver can print progress
(and keep partial results) between calls while the training stays one
program.
"""

import functools
from typing import Any, Callable, NamedTuple

import dm_env
import jax
import jax.numpy as jnp

from agents import pure


class TrainCarry(NamedTuple):
  agent: pure.AgentState
  env: Any                  # the environment's state
  timestep: dm_env.TimeStep  # the first timestep of the next episode
  key: jnp.ndarray


class EpisodeStats(NamedTuple):
  """Per episode, as the environment's counters stand at its end."""
  episode_return: jnp.ndarray      # [E] float32
  total_bad_episodes: jnp.ndarray  # [E] int32, bsuite's regret count
  denoised_return: jnp.ndarray     # [E] float32, treasures so far
  actions: Any = None              # [E, L] int32 with `record_actions`
  # [E, L] int32 with `record_visits`: `env.state_action_index` of every
  # step, taken on the state the action was chosen in.
  state_actions: Any = None


class Train(NamedTuple):
  init: Callable  # (key, action_mapping, hyperparameters) -> TrainCarry
  run: Callable   # TrainCarry -> (TrainCarry, EpisodeStats[episodes_per_call])


def make_train(agent: pure.PureAgent, env, episodes_per_call: int,
               record_actions: bool = False,
               record_visits: bool = False) -> Train:
  """Training of `agent` on a fixed-length `env`, in chunks.

  Args:
    agent: a pure agent (`agents.make_pure`).
    env: a pure environment whose episodes all take `env.episode_length`
      steps (e.g. `pe_jax.envs.deep_sea.DeepSea`), with
      `reset(key, state=None, action_mapping=None)`, `step(state, action,
      key)`, `episode_counters(state) -> (total_bad_episodes,
      denoised_return)` (bsuite's counters, read after each episode) and,
      for `record_visits`, `state_action_index(state, action)` in
      [0, `num_state_actions`).
    episodes_per_call: episodes each `run` call scans over (>= 1).
    record_actions: also return every action taken.
    record_visits: also return every (cell, action) visited, as an index
      (the hyperparameter search counts distinct ones, paper Table 3).

  `init(key)` starts the agent from `agent.init(key)`, the state that
  `agents.make(..., seed=k)` starts from for `key = PRNGKey(k)`.
  """
  if not isinstance(episodes_per_call, int) or episodes_per_call < 1:
    raise ValueError('`episodes_per_call` must be an int >= 1, got '
                     f'{episodes_per_call!r}.')
  missing = [name for name in ('episode_length', 'reset', 'step',
                                'episode_counters')
             if not hasattr(env, name)]
  if record_visits and not hasattr(env, 'state_action_index'):
    missing.append('state_action_index')
  if missing:
    raise TypeError(
        f'`env` ({type(env).__name__}) lacks {missing}: make_train runs '
        'fixed-length episodes; for episodes of any length use '
        '`make_train_steps`.')
  episode_length = env.episode_length

  def init(key, action_mapping=None, hyperparameters=None) -> TrainCarry:
    env_key, rollout_key = jax.random.split(jax.random.fold_in(key, 2))
    env_state, timestep = env.reset(env_key, action_mapping=action_mapping)
    return TrainCarry(agent.init(key, hyperparameters), env_state, timestep,
                      rollout_key)

  def env_step(carry, _):
    agent_state, env_state, timestep, key = carry
    key, step_key = jax.random.split(key)
    agent_state, action = agent.act(agent_state, timestep)
    state_action = (env.state_action_index(env_state, action)
                    if record_visits else None)
    env_state, new_timestep = env.step(env_state, action, step_key)
    agent_state = agent.update(agent_state, timestep, action, new_timestep)
    return ((agent_state, env_state, new_timestep, key),
            (new_timestep.reward, action, state_action))

  def episode(carry: TrainCarry, _):
    (agent_state, env_state, _, key), (rewards, actions,
                                       state_actions) = jax.lax.scan(
        env_step, tuple(carry), None, length=episode_length)
    env_state, timestep = env.reset(None, env_state)
    stats = EpisodeStats(jnp.sum(rewards), *env.episode_counters(env_state),
                         actions if record_actions else None,
                         state_actions if record_visits else None)
    return TrainCarry(agent_state, env_state, timestep, key), stats

  def run(carry: TrainCarry):
    return jax.lax.scan(episode, carry, None, length=episodes_per_call)

  return Train(init, run)


BATCHINGS = ('vmap', 'map')
# The flags' choices: 'auto' is the faster of the two on this platform.
BATCHING_CHOICES = ('auto',) + BATCHINGS


def resolve_batching(batching: str) -> str:
  """'auto' -> 'map' on CPU, 'vmap' on accelerators; others unchanged.

  On 2 CPU cores, `deep_sea_scaling --agents=boot_dqn --sizes=10 --seeds=8`
  ran at 489 env steps/s with 'map' against 291 with 'vmap' (whole
  process); on a GPU the batched products are the point.
  """
  if batching == 'auto':
    return 'map' if jax.default_backend() == 'cpu' else 'vmap'
  if batching not in BATCHINGS:
    raise ValueError(f'`batching` must be one of {BATCHING_CHOICES}, got '
                     f'{batching!r}.')
  return batching


def over_agents(fn: Callable, batching: str = 'vmap') -> Callable:
  """`fn` of one agent's carry, applied to carries with a leading agent axis.

  'vmap' runs the agents' steps as batched operations: the fast choice on a
  GPU and for small networks. 'map' (`lax.map`) runs each agent's whole chunk
  in turn inside the same program: on a CPU, large ensembles (PE-DQN,
  BDQN+P) run their learning steps faster one agent at a time than as
  products with an extra batch axis. Both give the same trainings.
  """
  if batching == 'vmap':
    return jax.vmap(fn)
  if batching == 'map':
    @functools.wraps(fn)  # Compiled programs keep `fn`'s name (the cache's).
    def each_agent(carry):
      return jax.lax.map(fn, carry)
    return each_agent
  raise ValueError(f'`batching` must be one of {BATCHINGS}, got '
                   f'{batching!r}.')



def _steps_until(step: Callable, carry, max_steps: int,
                 going: Callable):
  """`step` applied to `carry` up to `max_steps` times, while `going(carry)`.

  A loop that stops where the training ends, not a scan that selects the
  whole carry (replay included) between the stepped and the old one at every
  step: on a CPU that copy was most of a step's time (DQN on catch: 1,100
  against 12,500 env steps/s). Under vmap the loop runs until every training
  has stopped, each finished one's carry kept as it is.
  """
  def body(state):
    count, carry = state
    return count + 1, step(carry)

  return jax.lax.while_loop(
      lambda state: (state[0] < max_steps) & going(state[1]), body,
      (jnp.zeros((), jnp.int32), carry))[1]


class StepCarry(NamedTuple):
  """A training on episodes of any length, stepped `steps_per_call` at once."""
  agent: pure.AgentState
  env: Any
  timestep: dm_env.TimeStep  # the timestep the agent acts on next
  key: jnp.ndarray
  episodes: jnp.ndarray          # [] int32: episodes completed
  steps: jnp.ndarray             # [] int32: environment steps taken
  steps_at_episode: jnp.ndarray  # [max_episodes] int32: `steps` when each
                                 # episode ended (0 before)


class StepTrain(NamedTuple):
  init: Callable  # (key, hyperparameters=None) -> StepCarry
  run: Callable   # StepCarry -> StepCarry after `steps_per_call` more steps


def make_train_steps(agent: pure.PureAgent, env, max_episodes: int,
                     steps_per_call: int) -> StepTrain:
  """Training on an environment whose episodes end at different steps.

  Each `run` call scans over `steps_per_call` steps of bsuite's loop (act,
  step, update, and a reset after a last timestep). Once `max_episodes`
  episodes have ended, the training stops where it is: its later steps leave
  the carry unchanged, so agents of one vmapped program can finish at
  different steps and each ends exactly as if trained alone.

  Args:
    agent: a pure agent.
    env: a pure environment with `reset(key, state=None)` and `step(state,
      action, key)` (e.g. `pe_jax.envs.mountain_car.MountainCar`).
    max_episodes: episodes to train for (>= 1).
    steps_per_call: steps each `run` call scans over (>= 1).
  """
  for name, value in (('max_episodes', max_episodes),
                      ('steps_per_call', steps_per_call)):
    if not isinstance(value, int) or value < 1:
      raise ValueError(f'`{name}` must be an int >= 1, got {value!r}.')

  def init(key, hyperparameters=None) -> StepCarry:
    env_key, rollout_key = jax.random.split(jax.random.fold_in(key, 2))
    env_state, timestep = env.reset(env_key)
    zero = jnp.zeros((), jnp.int32)
    return StepCarry(agent.init(key, hyperparameters), env_state, timestep,
                     rollout_key, zero, zero,
                     jnp.zeros((max_episodes,), jnp.int32))

  def step(carry: StepCarry) -> StepCarry:
    key, step_key, reset_key = jax.random.split(carry.key, 3)
    agent_state, action = agent.act(carry.agent, carry.timestep)
    env_state, new_timestep = env.step(carry.env, action, step_key)
    agent_state = agent.update(agent_state, carry.timestep, action,
                               new_timestep)
    last = new_timestep.step_type == int(dm_env.StepType.LAST)
    reset_state, first = env.reset(reset_key, env_state)
    pick = lambda a, b: jax.tree_util.tree_map(
        lambda x, y: jnp.where(last, x, y), a, b)
    steps = carry.steps + 1
    stepped = StepCarry(
        agent_state, pick(reset_state, env_state), pick(first, new_timestep),
        key, carry.episodes + last.astype(jnp.int32), steps,
        carry.steps_at_episode.at[carry.episodes].set(jnp.where(
            last, steps, carry.steps_at_episode[carry.episodes])))
    return stepped

  def run(carry: StepCarry) -> StepCarry:
    return _steps_until(step, carry, steps_per_call,
                        lambda c: c.episodes < max_episodes)

  return StepTrain(init, run)


class EpisodeLog(NamedTuple):
  """What bsuite's `wrappers.Logging` would log after each episode: [E]
  arrays (index e: after episode e + 1; zeros for episodes not run)."""
  steps: jnp.ndarray           # int32: steps so far (FIRST steps uncounted)
  total_return: jnp.ndarray    # float64: the rewards so far, summed in order
  episode_len: jnp.ndarray     # int32
  episode_return: jnp.ndarray  # float64
  info: Any                    # {name: [E]}: the environment's bsuite_info


class BsuiteCarry(NamedTuple):
  """A training on a bsuite port, in bsuite's loop."""
  agent: pure.AgentState
  env: Any
  timestep: dm_env.TimeStep   # what the agent acts on next (float32 fields)
  episodes: jnp.ndarray       # [] int32: episodes completed
  steps: jnp.ndarray          # [] int32: bsuite's step count
  total_return: jnp.ndarray   # [] float64
  episode_len: jnp.ndarray    # [] int32
  episode_return: jnp.ndarray  # [] float64
  log: EpisodeLog


def _for_agent(timestep: dm_env.TimeStep) -> dm_env.TimeStep:
  """A port's timestep as the bsuite adapter hands it to the agent
  (`pure.as_arrays`): float32 reward and discount."""
  with jax.enable_x64(True):
    return timestep._replace(reward=timestep.reward.astype(jnp.float32),
                             discount=timestep.discount.astype(jnp.float32))


def make_train_bsuite(agent: pure.PureAgent, env, num_episodes: int,
                      steps_per_call: int) -> StepTrain:
  """Training on a bsuite port (`pe_jax.envs.load`) as bsuite's loop runs
  it (`agents.common.run_episode` over `wrappers.Logging`), logging what
  bsuite's logger logs after every episode.

  Each episode starts with `env.reset`; the agent acts on each timestep and
  updates on (timestep, action, next timestep), the reward cast to float32
  as the bsuite adapter casts it. bsuite's counters (steps, returns in
  float64, the environment's `info`) are kept per episode in `log`. Once
  `num_episodes` episodes have ended the carry stays as it is, so seeds of
  one vmapped program can finish at different steps.

  Args:
    agent: a pure agent built for the port's observation shape and actions.
    env: a port (`pe_jax.envs.suite.base.Environment`).
    num_episodes: episodes to train for (>= 1).
    steps_per_call: steps each `run` call scans over (>= 1).

  Returns:
    `init(key, env_state, hyperparameters=None) -> BsuiteCarry` (env_state:
    `env.init()`) and `run(carry) -> carry`.
  """
  for name, value in (('num_episodes', num_episodes),
                      ('steps_per_call', steps_per_call)):
    if not isinstance(value, int) or value < 1:
      raise ValueError(f'`{name}` must be an int >= 1, got {value!r}.')

  def init(key, env_state, hyperparameters=None) -> BsuiteCarry:
    env_state, first = env.reset(env_state)
    with jax.enable_x64(True):
      zero, zero64 = jnp.zeros((), jnp.int32), jnp.zeros((), jnp.float64)
      info = env.info(env_state)
      log = EpisodeLog(
          jnp.zeros((num_episodes,), jnp.int32),
          jnp.zeros((num_episodes,), jnp.float64),
          jnp.zeros((num_episodes,), jnp.int32),
          jnp.zeros((num_episodes,), jnp.float64),
          {name: jnp.zeros((num_episodes,), value.dtype)
           for name, value in info.items()})
    return BsuiteCarry(agent.init(key, hyperparameters), env_state,
                       _for_agent(first), zero, zero, zero64, zero,
                       zero64, log)

  def step(carry: BsuiteCarry) -> BsuiteCarry:
    agent_state, action = agent.act(carry.agent, carry.timestep)
    env_state, new = env.step(carry.env, action)
    agent_state = agent.update(agent_state, carry.timestep, action,
                               _for_agent(new))
    last = new.step_type == int(dm_env.StepType.LAST)
    reset_state, first = env.reset(env_state)
    with jax.enable_x64(True):
      steps = carry.steps + 1
      episode_len = carry.episode_len + 1
      episode_return = carry.episode_return + new.reward
      total_return = carry.total_return + new.reward
      index = carry.episodes
      info = env.info(env_state)

      def logged(old, value):
        # One element written (itself when no episode ended): in place.
        return old.at[index].set(jnp.where(last, value, old[index]))

      log = EpisodeLog(
          logged(carry.log.steps, steps),
          logged(carry.log.total_return, total_return),
          logged(carry.log.episode_len, episode_len),
          logged(carry.log.episode_return, episode_return),
          {name: logged(carry.log.info[name], value)
           for name, value in info.items()})
      pick = lambda a, b: jax.tree_util.tree_map(
          lambda x, y: jnp.where(last, x, y), a, b)
      stepped = BsuiteCarry(
          agent_state, pick(reset_state, env_state),
          pick(_for_agent(first), _for_agent(new)),
          carry.episodes + last.astype(jnp.int32), steps, total_return,
          jnp.where(last, 0, episode_len),
          jnp.where(last, 0.0, episode_return), log)
      return stepped

  def run(carry: BsuiteCarry) -> BsuiteCarry:
    return _steps_until(step, carry, steps_per_call,
                        lambda c: c.episodes < num_episodes)

  return StepTrain(init, run)
