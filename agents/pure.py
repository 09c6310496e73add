"""An agent as a value: three pure functions over one state pytree.

  agent = agents.make_pure('pe_dqn', obs_spec, action_spec)
  state = agent.init(key)
  state, action = agent.act(state, timestep)
  state = agent.update(state, timestep, action, new_timestep)

The state (`AgentState`) holds everything: the learner's parameters, targets,
optimiser state and RNG, the replay buffer (a JAX ring buffer), the key that
draws replay samples and the step and episode counters. Learning starts when
the buffer holds `min_replay_size` sampleable transitions: a `lax.cond` on
the counter, so all three functions jit, vmap over a batch of agents and run
inside `lax.scan`.

`timestep`s are `dm_env.TimeStep`s whose fields are arrays (`as_arrays`
converts bsuite's, whose first reward and discount are None).

Shape-free hyperparameters (learning rate, discount, prior scales, beta,
epsilon: the config class's `ARRAY_FIELDS`) can be given per agent:

  state = agent.init(key, {'learning_rate': 1e-3, 'beta_init': 2.0})
  states = jax.vmap(agent.init)(keys, {'learning_rate': lrs})  # [N] each

The given values live in the state (`state.hyperparameters`) and replace
the config's numbers in every program, so one compiled program trains agents
with different values side by side. Fields not given stay compiled-in
constants. Check concrete values before a vmap with `agent.check(values)`.
"""

import functools
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

import dm_env
import jax
import jax.numpy as jnp
import numpy as np

from agents import per_agent
from pe_jax import replay


# `init` runs once per training, so LLVM's optimisation of its random
# initialisers buys nothing, and costs ~1.5 s of a 2 s compilation on CPU
# (dqn, 8 seeds). Level 0 may round an initial weight 1 ulp differently, so
# every program that starts agents uses `jit_init`: the adapter, the
# lockstep and the jitted runners start from the same bits.
INIT_COMPILER_OPTIONS = {'xla_backend_optimization_level': 0}


def jit_init(init_fn: Callable, **jit_kwargs) -> Callable:
  """`jax.jit` of a function that starts agents (e.g. `vmap(agent.init)`),
  compiled without LLVM optimisation (`INIT_COMPILER_OPTIONS`)."""
  return jax.jit(init_fn, compiler_options=INIT_COMPILER_OPTIONS,
                 **jit_kwargs)


class LearnerFns(NamedTuple):
  """A learner's pure functions; their first argument is the learner's
  frozen config, or a `per_agent.Configured` view of it holding per-agent
  array hyperparameters (read alike: `config.learning_rate`).

  init(config, key, observation) -> learner state (a pytree with `rng`)
  act(config, state, observation, episode) -> (action, rng)
  learn(config, state, batch, episode, weights=None)
      -> (state, metrics, [B] per-sample losses)
  observe(config, state, observation, action) -> state   (optional: sees
    every step's observation and action, before learning; e.g. visit counts)
  metrics: the names of learn's metrics, each a float32 scalar.
  """
  init: Callable
  act: Callable
  learn: Callable
  observe: Optional[Callable] = None
  metrics: Tuple[str, ...] = ('loss',)


def zero_metrics(names: Tuple[str, ...]) -> Dict[str, jnp.ndarray]:
  """The metrics an agent holds before its first learning step: zeros, by
  name rather than from a trace of `learn` (which would cost as much as
  tracing the learning step itself, each time an agent starts)."""
  return {name: jnp.zeros((), jnp.float32) for name in names}


class AgentState(NamedTuple):
  learner: Any                # parameters, targets, optimiser state, rng
  replay: replay.ReplayState
  sample_key: jnp.ndarray     # draws the replay batches
  episode: jnp.ndarray        # [] int32: episodes completed
  total_steps: jnp.ndarray    # [] int32: transitions seen
  metrics: Any                # the last learning step's metrics (0 before)
  hyperparameters: Any = None  # {name: [] float32} given to init, or None


class PureAgent(NamedTuple):
  """Mirrors bsuite's `base.Agent` as pure functions."""
  init: Callable    # (key, hyperparameters=None) -> AgentState
  act: Callable     # (state, timestep) -> (state, action)
  update: Callable  # (state, timestep, action, new_timestep) -> state
  config: Any = None  # the frozen config the agent was built from

  @property
  def array_fields(self) -> Tuple[str, ...]:
    """Hyperparameters `init` accepts as per-agent arrays."""
    return per_agent.array_fields(self.config)

  def check(self, hyperparameters, num_agents: Optional[int] = None) -> None:
    """Raises a clear error for names or values the config rejects (with
    `num_agents`: for shapes other than [] and [num_agents] too)."""
    per_agent.check_values(self.config, hyperparameters or {}, num_agents)


def as_arrays(timestep: dm_env.TimeStep) -> dm_env.TimeStep:
  """A bsuite timestep with array fields (reward 0, discount 1 if None)."""
  reward = 0.0 if timestep.reward is None else timestep.reward
  discount = 1.0 if timestep.discount is None else timestep.discount
  return dm_env.TimeStep(step_type=np.int32(timestep.step_type),
                         reward=np.float32(reward),
                         discount=np.float32(discount),
                         observation=np.asarray(timestep.observation))


def _is_last(timestep: dm_env.TimeStep) -> jnp.ndarray:
  return jnp.asarray(timestep.step_type) == int(dm_env.StepType.LAST)


@functools.lru_cache(maxsize=16)
def build(config, fns: LearnerFns, observation_shape: Tuple[int, ...],
          observation_dtype=np.float32, n_step: int = 1) -> PureAgent:
  """The pure agent of a learner and its config.

  Args:
    config: the learner's frozen config, with `batch_size`,
      `replay_capacity`, `min_replay_size` and `discount` (and, if it has
      one, `update_period`: environment steps per learning step).
    fns: the learner's pure functions.
    observation_shape: shape of one observation.
    observation_dtype: the dtype observations are stored in.
    n_step: length of the returns sampled from replay.

  Equal arguments return the same `PureAgent` (cached), so their jitted
  programs are compiled once. The cache keeps the 16 most recent agents:
  each holds 10-30 MB of compiled CPU code, and an unbounded cache grew a
  test worker by ~30 MB per config until XLA crashed while compiling.
  """
  observation_shape = tuple(observation_shape)
  observation_dtype = np.dtype(observation_dtype)
  update_period = getattr(config, 'update_period', 1)

  def observation_of(timestep):
    return jnp.asarray(timestep.observation, jnp.float32).reshape(
        observation_shape)

  def configured(state_or_values):
    """The config with this agent's array hyperparameters in it."""
    values = getattr(state_or_values, 'hyperparameters', state_or_values)
    return per_agent.configured(config, values)

  def init(key, hyperparameters=None) -> AgentState:
    if hyperparameters:
      per_agent.check_values(config, hyperparameters)
      per_agent.check_one_agent(hyperparameters)
    hyperparameters = per_agent.as_float32(hyperparameters)
    cfg = configured(hyperparameters)
    dummy = jnp.zeros(observation_shape, jnp.float32)
    learner = fns.init(cfg, key, dummy)
    buffer = replay.replay_init(config.replay_capacity, observation_shape,
                                observation_dtype)
    sample_key = jax.random.fold_in(key, 1)
    return AgentState(learner, buffer, sample_key, jnp.zeros((), jnp.int32),
                      jnp.zeros((), jnp.int32), zero_metrics(fns.metrics),
                      hyperparameters)

  def act(state: AgentState, timestep) -> Tuple[AgentState, jnp.ndarray]:
    action, rng = fns.act(configured(state), state.learner,
                          observation_of(timestep), state.episode)
    learner = state.learner._replace(rng=rng)
    return state._replace(learner=learner), jnp.asarray(action, jnp.int32)

  def update(state: AgentState, timestep, action, new_timestep) -> AgentState:
    buffer = replay.replay_add(
        state.replay, timestep.observation, action, new_timestep.reward,
        new_timestep.discount, new_timestep.observation)
    episode = state.episode + _is_last(new_timestep).astype(jnp.int32)
    cfg = configured(state)
    learner = state.learner
    if fns.observe is not None:
      learner = fns.observe(cfg, learner, observation_of(timestep), action)

    def learn(operands):
      learner, sample_key, _ = operands
      sample_key, key = jax.random.split(sample_key)
      batch = replay.replay_sample(buffer, key, config.batch_size,
                                   cfg.discount, n_step)
      learner, metrics, _ = fns.learn(cfg, learner, batch, episode)
      return learner, sample_key, metrics

    # Only the learner goes through the cond: under vmap it becomes a select,
    # which must not copy the replay buffer every step.
    ready = (replay.replay_num_sampleable(buffer, n_step) >=
             config.min_replay_size)
    if update_period > 1:  # Chen et al.'s "update frequency": every k-th step.
      ready = ready & ((state.total_steps + 1) % update_period == 0)
    learner, sample_key, metrics = jax.lax.cond(
        ready, learn, lambda operands: operands,
        (learner, state.sample_key, state.metrics))
    return AgentState(learner, buffer, sample_key, episode,
                      state.total_steps + 1, metrics, state.hyperparameters)

  return PureAgent(init, act, update, config)


class Jitted(NamedTuple):
  """Jitted single-agent programs of a `PureAgent` (state donated)."""
  init: Callable
  act: Callable
  update_act: Callable  # update, then act on new_timestep unless it is last


@functools.lru_cache(maxsize=16)
def jitted(agent: PureAgent) -> Jitted:
  """Compiled once per `PureAgent` (bounded like `build`'s cache).

  bsuite's loop calls `update` and then `select_action` on the new
  timestep, so the two run as one program; after a last timestep the next
  action is taken on the reset timestep instead, so that step only updates
  (a `lax.cond`: one program holds the learning step, not two).
  """

  def update_act(state, timestep, action, new_timestep):
    state = agent.update(state, timestep, action, new_timestep)

    def act_on_new_timestep(learner):
      # `act` changes only the learner (its rng).
      acted, next_action = agent.act(state._replace(learner=learner),
                                     new_timestep)
      return acted.learner, next_action

    def skip(learner):
      return learner, jnp.zeros((), jnp.int32)

    learner, next_action = jax.lax.cond(_is_last(new_timestep), skip,
                                        act_on_new_timestep, state.learner)
    return state._replace(learner=learner), next_action

  return Jitted(init=jit_init(agent.init),
                act=jax.jit(agent.act, donate_argnums=0),
                update_act=jax.jit(update_act, donate_argnums=0))
