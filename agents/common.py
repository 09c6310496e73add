"""What every agent shares: the bsuite wrapper, spec checks, schedules.

An agent module defines a frozen (hence hashable) config dataclass and three
module-level pure functions (`agents.pure.LearnerFns`):

  init(config, key, observation) -> state           # a pytree with an `rng`
  act(config, state, observation, episode) -> (action, rng)
  learn(config, state, batch, episode, weights=None)
      -> (state, metrics, [B] per-sample losses)

`agents.pure.build` turns them, with replay and counters, into an agent as a
value; `ReplayAgent` is the bsuite `base.Agent` adapter over it. Programs are
cached per (config, shapes), so equal agents reuse the compiled code.
"""

import dataclasses
import math
from typing import (Any, Callable, Dict, List, Mapping, NamedTuple, Optional,
                    Tuple, Type,
                    TypeVar)

from bsuite.baselines import base
import dm_env
from dm_env import specs
import jax
import jax.numpy as jnp
import numpy as np
import optax

from agents import pure
from pe_jax import networks


ConfigT = TypeVar('ConfigT')


def check_specs(obs_spec: specs.Array,
                action_spec: specs.DiscreteArray) -> Tuple[Tuple[int, ...], int]:
  """Returns (observation shape, number of actions) or raises a clear error."""
  if not isinstance(action_spec, specs.DiscreteArray):
    raise TypeError(
        '`action_spec` must be a dm_env.specs.DiscreteArray (these agents act '
        f'in discrete action spaces), got {action_spec!r}.')
  if action_spec.num_values < 1:
    raise ValueError(
        f'`action_spec` needs at least 1 action, got {action_spec.num_values}.')
  if not isinstance(obs_spec, specs.Array):
    raise TypeError(f'`obs_spec` must be a dm_env.specs.Array, got {obs_spec!r}.')
  return tuple(obs_spec.shape), int(action_spec.num_values)


def make_config(config_cls: Type[ConfigT], overrides: Mapping[str, Any],
                **defaults) -> ConfigT:
  """Builds a config from defaults and user overrides, naming unknown keys."""
  names = {f.name for f in dataclasses.fields(config_cls)}
  unknown = sorted(set(overrides) - names)
  if unknown:
    raise TypeError(
        f'Unknown hyperparameter(s) {unknown} for {config_cls.__name__}; valid '
        f'names: {sorted(names - {"num_actions"})}.')
  values = dict(defaults)
  fields = {f.name: f for f in dataclasses.fields(config_cls)}
  for key, value in overrides.items():
    _check_kind(key, value, fields[key], defaults.get(key, fields[key].default))
    # inf passes every `>= 0` check; no hyperparameter means it.
    for item in (value if isinstance(value, (list, tuple)) else [value]):
      if isinstance(item, float) and not math.isfinite(item):
        raise ValueError(f'`{key}` must be finite, got {value!r}.')
    if isinstance(value, list):
      value = tuple(value)  # Keep the config hashable.
    values[key] = value
  return config_cls(**values)


def _check_kind(name: str, value: Any, field: dataclasses.Field,
                default: Any) -> None:
  """A user's value of the kind its field holds: None only where the field
  allows it, a number (not a bool or a string) where the default is one, a
  non-empty sequence where the default is one. Arrays (per-agent values,
  `array_fields`) are checked by the agent."""
  optional = 'Optional' in str(field.type) or 'None' in str(field.type)
  if value is None:
    if not optional and default is not None:
      raise ValueError(f'`{name}` must be given (not None); its default is '
                       f'{default!r}.')
    return
  if isinstance(default, bool):
    if not isinstance(value, (bool, np.bool_)):
      raise ValueError(f'`{name}` must be a bool, got {value!r}.')
  elif isinstance(default, (int, float)) and not isinstance(default, bool):
    if isinstance(value, (bool, np.bool_, str, bytes)):
      kind = 'an int' if isinstance(default, int) else 'a number'
      raise ValueError(f'`{name}` must be {kind}, got {value!r}.')
  elif isinstance(default, tuple) and default:
    if isinstance(value, (str, bytes)) or (
        isinstance(value, (list, tuple)) and not value):
      raise ValueError(f'`{name}` must be a non-empty sequence like '
                       f'{default!r}, got {value!r}.')


def require(condition: bool, name: str, expected: str, value: Any) -> None:
  """Raises ValueError naming the hyperparameter and its allowed range."""
  if not condition or (isinstance(value, float) and not math.isfinite(value)):
    raise ValueError(f'`{name}` must be {expected}, got {value!r}.')


def require_one_of(config, name: str, allowed: Tuple[Any, ...]) -> None:
  """`require` hyperparameter `name` of `config` to be one of `allowed`."""
  value = getattr(config, name)
  require(value in allowed, name, f'one of {allowed}', value)


def require_positive_or_none(config, *names: str) -> None:
  """`require` each named hyperparameter of `config` to be > 0 or None."""
  for name in names:
    value = getattr(config, name)
    require(value is None or value > 0, name, '> 0 or None', value)


def require_nonnegative(config, *names: str) -> None:
  """`require` each named hyperparameter of `config` to be >= 0."""
  for name in names:
    value = getattr(config, name)
    require(value >= 0, name, '>= 0', value)


TORSOS = ('mlp', 'one_hot_mlp', 'impala')
# Acting before the first learning step: 'greedy' (the agent's rule on its
# untrained networks) or 'uniform' (uniformly random actions).
WARMUP_POLICIES = ('greedy', 'uniform')


@dataclasses.dataclass(frozen=True, kw_only=True)
class NetworkFields:
  """Network and optimiser fields every agent config shares (a base class).

  torso: 'mlp' (the config's `hidden_sizes`, bsuite), 'one_hot_mlp' (the
    same MLP for observations with at most one nonzero entry, as deep sea's:
    its first layer is a row lookup, `networks.OneHotDense`, with the same
    parameters and outputs and a fraction of the cost) or 'impala' (pixels,
    VizDoom: one IMPALA ResNet torso of `impala_channels` and an
    `impala_hidden` layer, shared by the members' heads, `spectral_norm` on
    its residual convolutions; PE-DQN paper Table 5, Fig. 8).
  max_grad_norm: clip gradients to this global norm (Table 5: 10); None: off.
  initializer: the MLP torsos' initialisation, one of
    `pe_jax.networks.INITIALIZERS` ('he': Table 4; 'haiku': bsuite's
    baselines; 'pytorch': the PE-DQN authors' code).
  """
  torso: str = 'mlp'
  initializer: str = 'he'
  impala_channels: Tuple[int, ...] = networks.IMPALA_CHANNELS
  impala_hidden: int = networks.IMPALA_HIDDEN
  spectral_norm: bool = True
  max_grad_norm: Optional[float] = None


def network(config: NetworkFields, num_networks: int, num_atoms: int):
  """The network module of `config.torso` with [A, num_atoms] outputs per
  network: one network's MLP ('mlp', 'one_hot_mlp'; stacked M times by
  `networks.init_ensemble`), or one IMPALA module with a head for each of
  the `num_networks` ('impala'; `networks.apply_heads`)."""
  if config.torso == 'impala':
    return networks.ImpalaEnsemble(num_networks, config.num_actions,
                                   num_atoms, config.impala_channels,
                                   config.impala_hidden, config.spectral_norm)
  return networks.DistributionalMLP(config.hidden_sizes, config.num_actions,
                                    num_atoms, config.torso == 'one_hot_mlp',
                                    config.initializer)


def apply_networks(config: NetworkFields, module, params, prior_params,
                   prior_scales, observation, prior_members=None,
                   batch_dims: int = 0):
  """[N, *batch, A, K] outputs of every network of an ensemble built by
  `network`, each with its scaled prior (`networks.apply_ensemble` or, for
  the shared 'impala' torso, `networks.apply_heads`)."""
  apply = (networks.apply_heads if config.torso == 'impala' else
           networks.apply_ensemble)
  return apply(module, params, prior_params, prior_scales, observation,
               prior_members=prior_members, batch_dims=batch_dims)


def init_networks(config: NetworkFields, module, key, num_networks: int,
                  observation):
  """Parameters of the `num_networks` networks of `network`: stacked
  ([N, ...] leaves) for an MLP, the one module's for 'impala'."""
  if config.torso == 'impala':
    return module.init(key, observation)
  return networks.init_ensemble(module, key, num_networks, observation)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReplayFields:
  """Optimiser, replay and target fields every agent config shares (a base
  class; defaults: PE-DQN paper Table 4, overridden by each agent's settings).

  adam_eps: None means 0.001 / batch_size (Table 4, `adam_epsilon`).
  min_replay_size: transitions stored before learning starts.
  target_update_period: learning steps between target network copies.
  """
  learning_rate: float = 1e-3
  adam_eps: Optional[float] = None
  batch_size: int = 128
  replay_capacity: int = 10_000
  min_replay_size: int = 128
  target_update_period: int = 4
  discount: float = 0.99


# bsuite's DQN baseline replay (batch 32, learning from 100 transitions),
# kept by the DQN, C51 and QR-DQN settings.
BSUITE_DQN_REPLAY = dict(batch_size=32, min_replay_size=100)
# Atoms (or quantiles) per action, K: the PE-DQN paper's K for every
# distributional model of its bsuite and VizDoom settings (Tables 4 and 5),
# and the 51 of C51 and QR-DQN as their papers and bsuite's baselines use.
PAPER_NUM_ATOMS = 101
SINGLE_MODEL_NUM_ATOMS = 51


def replay_fields(config) -> Dict[str, Any]:
  """`config`'s `ReplayFields` values, to build a component's config."""
  return {f.name: getattr(config, f.name)
          for f in dataclasses.fields(ReplayFields)}


def check_network_fields(config) -> None:
  require_one_of(config, 'torso', TORSOS)
  require_one_of(config, 'initializer', networks.INITIALIZERS)
  require_positive_or_none(config, 'max_grad_norm')
  require(config.impala_hidden >= 1, 'impala_hidden', '>= 1',
          config.impala_hidden)
  require(len(config.impala_channels) >= 1 and
          all(c >= 1 for c in config.impala_channels), 'impala_channels',
          'one or more ints >= 1', config.impala_channels)


# Field types that hold one number: a config's value for them must be a
# scalar (an array would reach the range checks as an ambiguous truth value).
SCALAR_TYPES = (bool, int, float, Optional[int], Optional[float])


def check_scalars(config) -> None:
  """Raises a one-line error naming a number field given as an array (or a
  string); per-agent values go to `init`, for the `ARRAY_FIELDS`."""
  per_agent_fields = getattr(type(config), 'ARRAY_FIELDS', ())
  for field in dataclasses.fields(config):
    value = getattr(config, field.name)
    if field.type not in SCALAR_TYPES or value is None:
      continue
    if isinstance(value, (str, bytes)) or np.ndim(value) != 0:
      shape = np.shape(value) if not isinstance(value, (str, bytes)) else ()
      hint = (f'; per-agent values go to the pure agent, '
              f'`init(key, {{{field.name!r}: array}})`'
              if field.name in per_agent_fields else '')
      raise ValueError(
          f'`{field.name}` must be one number, got '
          f'{"a string" if not shape else f"an array of shape {shape}"}: '
          f'{value!r}{hint}.')


def check_common(config) -> None:
  """Checks the hyperparameters that most agents share (when present)."""
  check_scalars(config)
  get = lambda name: getattr(config, name, None)
  if isinstance(config, NetworkFields):
    check_network_fields(config)
  if get('learning_rate') is not None:
    require(config.learning_rate > 0, 'learning_rate', '> 0',
            config.learning_rate)
  if get('discount') is not None:
    require(0.0 <= config.discount <= 1.0, 'discount', 'in [0, 1]',
            config.discount)
  if get('batch_size') is not None:
    require(isinstance(config.batch_size, int) and config.batch_size >= 1,
            'batch_size', 'an int >= 1', config.batch_size)
  if get('replay_capacity') is not None:
    require(isinstance(config.replay_capacity, int) and
            config.replay_capacity >= 1, 'replay_capacity', 'an int >= 1',
            config.replay_capacity)
  if get('batch_size') is not None and get('replay_capacity') is not None:
    require(config.batch_size <= config.replay_capacity, 'batch_size',
            f'<= replay_capacity={config.replay_capacity}', config.batch_size)
  if get('min_replay_size') is not None:
    require(1 <= config.min_replay_size <= config.replay_capacity,
            'min_replay_size', f'in [1, replay_capacity={config.replay_capacity}]',
            config.min_replay_size)
  if get('target_update_period') is not None:
    require(isinstance(config.target_update_period, int) and
            config.target_update_period >= 1, 'target_update_period',
            'an int >= 1', config.target_update_period)
  if get('hidden_sizes') is not None:
    require(all(isinstance(h, int) and h >= 1 for h in config.hidden_sizes),
            'hidden_sizes', 'a sequence of positive ints', config.hidden_sizes)
  if get('num_atoms') is not None:
    require(isinstance(config.num_atoms, int) and config.num_atoms >= 2,
            'num_atoms', 'an int >= 2', config.num_atoms)
  if get('v_min') is not None and get('v_max') is not None:
    require(config.v_min < config.v_max, 'v_min',
            f'< v_max={config.v_max}', config.v_min)
  if get('adam_eps') is not None:
    require(config.adam_eps > 0, 'adam_eps', '> 0', config.adam_eps)
  if get('num_ensemble') is not None:
    require(isinstance(config.num_ensemble, int) and config.num_ensemble >= 1,
            'num_ensemble', 'an int >= 1', config.num_ensemble)
  if get('huber_param') is not None:
    require(config.huber_param >= 0, 'huber_param', '>= 0', config.huber_param)


ADAM_EPS_NUMERATOR = 1e-3  # Table 4: Adam epsilon = 0.001 / batch size.
VIZDOOM_ADAM_EPS_NUMERATOR = 5e-3  # Table 5: 0.005 / batch size.

# Table 5's settings shared by every VizDoom agent: the IMPALA torso (its
# channels, hidden width and spectral norm are `NetworkFields`' defaults),
# Huber TD losses, discount 0.997, batch 512, gradients clipped to norm 10.
VIZDOOM_SHARED = dict(torso='impala', huber_param=1.0, discount=0.997,
                      batch_size=512, max_grad_norm=10.0)


def adam_eps_for_batch(batch_size: int,
                       numerator: float = ADAM_EPS_NUMERATOR) -> float:
  """The papers' Adam epsilon: a numerator over the batch size."""
  return numerator / batch_size


def adam_epsilon(config) -> float:
  """Adam's epsilon: `config.adam_eps`, or 0.001 / batch size when None.

  The one place that derives Table 4's epsilon, so `batch_size=32` gets
  0.001 / 32 rather than keeping the epsilon of 128.
  """
  if config.adam_eps is not None:
    return config.adam_eps
  return adam_eps_for_batch(config.batch_size)


def epsilon_greedy(action, epsilon, explore_key, random_key,
                   num_actions: int) -> jnp.ndarray:
  """`action`, or with probability `epsilon` a uniformly random one."""
  explore = jax.random.uniform(explore_key) < epsilon
  return jnp.where(explore, jax.random.randint(random_key, (), 0, num_actions),
                   action)


class TrainState(NamedTuple):
  """What every learner trains: online and target parameters, the fixed
  randomized priors (None: none), the optimiser state, the SGD steps taken
  and the acting and sampling RNG; and what one learner adds (None in the
  others)."""
  params: Any
  target_params: Any
  prior_params: Any
  opt_state: Any
  steps: jnp.ndarray
  rng: jnp.ndarray
  # Q ensembles: fixed, draws the acting member of each episode.
  episode_key: Any = None
  # Q ensembles with target_prior='distinct': the target networks' own
  # prior; None: they add the online members' `prior_params`.
  target_prior_params: Any = None
  # PE-DQN with normalize_intrinsic: running count, mean and sum of squared
  # deviations of w(s, a) over the sampled batches ([3]).
  intrinsic_moments: Any = None


def init_train_state(config, params, prior_params, rng,
                     **extra) -> TrainState:
  """A learner's first state: targets equal to `params`, a fresh optimiser
  (`optimizer(config)`), no steps; `extra`: its own fields."""
  return TrainState(params=params, target_params=params,
                    prior_params=prior_params,
                    opt_state=optimizer(config).init(params),
                    steps=jnp.zeros((), jnp.int32), rng=rng, **extra)


def sgd_step(config, state: TrainState, grads, **updates) -> TrainState:
  """`state` after one optimiser step on `grads` and the periodic target
  update (`apply_sgd_step`); `updates`: other fields the learner changes."""
  params, target_params, opt_state, steps = apply_sgd_step(
      optimizer(config), state.params, state.target_params, state.opt_state,
      state.steps, grads, config.target_update_period)
  return state._replace(params=params, target_params=target_params,
                        opt_state=opt_state, steps=steps, **updates)


def explore(state: TrainState, action, num_actions: int, epsilon=None,
            uniform_warmup: bool = False):
  """(action, next rng): the greedy `action`, made random with probability
  `epsilon` (None: the learner has no epsilon rule; a Python 0: the rule is
  off and draws nothing), and uniformly random before the first learning
  step with `uniform_warmup`.

  A learner with an epsilon rule splits its rng three ways at every act
  (next, explore, random key; the warm-up reuses the random key); one
  without splits it in two only to warm up. Each learner keeps the draws
  its results were computed with.
  """
  if epsilon is None:
    if not uniform_warmup:
      return action, state.rng
    rng, random_key = jax.random.split(state.rng)
  else:
    rng, explore_key, random_key = jax.random.split(state.rng, 3)
    if not (isinstance(epsilon, (int, float)) and epsilon == 0):
      action = epsilon_greedy(action, epsilon, explore_key, random_key,
                              num_actions)
  if uniform_warmup:
    action = jnp.where(state.steps == 0,
                       jax.random.randint(random_key, (), 0, num_actions),
                       action)
  return action, rng


def agent_settings(agent_table: Mapping[str, Mapping[str, Any]],
                   name: str) -> Dict[str, Any]:
  """A copy of `agent_table[name]`, naming the table's agents otherwise."""
  if name not in agent_table:
    raise ValueError(f'Unknown agent {name!r} of this learner; valid: '
                     f'{sorted(agent_table)}.')
  return dict(agent_table[name])


def default_agent_fn(agent_class, config_class,
                     agent_table: Mapping[str, Any], default_name: str,
                     horizon_settings: Optional[Callable] = None,
                     agent_options: Tuple[str, ...] = ()) -> Callable:
  """A learner module's `default_agent` (bsuite baselines' entry point):

    default_agent(obs_spec, action_spec, seed=0, num_episodes=None,
                  agent_name=default_name, **overrides) -> agent_class

  The config is `agent_table[agent_name]` (the settings that make that
  agent out of the learner, the module's `AGENTS`) over `config_class`'s
  defaults, then `horizon_settings(num_episodes, settings)` (the schedules
  a training horizon sets, e.g. beta over its first third; `settings`
  include the overrides), then `overrides` (any config field).
  `agent_options` are keyword arguments of `agent_class` itself rather than
  config fields.

  `default_agent.pure(obs_spec, action_spec, num_episodes=None,
  agent_name=default_name, **overrides)` is the same agent as a value
  (`agents.pure.PureAgent`), built from the config and the learner's
  functions (`agent_class.LEARNER`) without the adapter;
  `agent_class.check_pure_options(options)` refuses the adapter's options
  that a pure agent cannot have.
  """

  def config_and_options(obs_spec, action_spec, num_episodes, agent_name,
                         overrides):
    _, num_actions = check_specs(obs_spec, action_spec)
    options = {k: overrides.pop(k) for k in agent_options if k in overrides}
    settings = agent_settings(agent_table, agent_name)
    if horizon_settings is not None:
      settings.update(horizon_settings(num_episodes,
                                       {**settings, **overrides}))
    config = make_config(config_class, overrides, num_actions=num_actions,
                         **settings)
    return config, options

  def default_agent(obs_spec, action_spec, seed: int = 0,
                    num_episodes: Optional[int] = None,
                    agent_name: str = default_name, **overrides):
    config, options = config_and_options(obs_spec, action_spec, num_episodes,
                                         agent_name, overrides)
    return agent_class(obs_spec, action_spec, config, seed=seed, **options)

  def default_pure(obs_spec, action_spec, num_episodes: Optional[int] = None,
                   agent_name: str = default_name, **overrides):
    config, options = config_and_options(obs_spec, action_spec, num_episodes,
                                         agent_name, overrides)
    agent_class.check_pure_options(options)
    shape, _ = check_specs(obs_spec, action_spec)
    return pure.build(config, agent_class.LEARNER, shape,
                      np.dtype(obs_spec.dtype))

  default_agent.__doc__ = (
      f'{agent_class.__name__} as one of its module\'s `AGENTS` (default '
      f'{default_name!r}); any `{config_class.__name__}` field overrides '
      'it. See `agents.common.default_agent_fn`.')
  default_agent.pure = default_pure
  return default_agent


def adam(config) -> optax.GradientTransformation:
  """Adam at `config.learning_rate` (a number, or an array per agent)."""
  return optax.adam(config.learning_rate, b2=getattr(config, 'adam_b2', 0.999),
                    eps=adam_epsilon(config))


def optimizer(config) -> optax.GradientTransformation:
  """`adam(config)`, after clipping gradients to `config.max_grad_norm`
  (global norm) where the config has one that is not None."""
  max_norm = getattr(config, 'max_grad_norm', None)
  if max_norm is None:
    return adam(config)
  return optax.chain(optax.clip_by_global_norm(max_norm), adam(config))


def linear_decay(initial: float, episode: jnp.ndarray,
                 decay_episodes: Optional[float],
                 final: float = 0.0) -> jnp.ndarray:
  """`initial` -> `final` linearly over `decay_episodes`, then constant."""
  if decay_episodes is None:
    return jnp.asarray(initial, jnp.float32)
  fraction = jnp.clip(episode / decay_episodes, 0.0, 1.0)
  return initial + (final - initial) * fraction


def decay_horizon(num_episodes: Optional[int],
                  fraction: float = 1.0 / 3.0) -> Optional[float]:
  """Episodes over which a bonus decays: a third of the horizon by default."""
  if num_episodes is None:
    return None
  require(isinstance(num_episodes, int) and num_episodes >= 1, 'num_episodes',
          'an int >= 1 or None', num_episodes)
  return max(1.0, math.ceil(num_episodes * fraction))


def apply_sgd_step(optimizer, params, target_params, opt_state, steps, grads,
                   target_update_period: int):
  """One optimiser step and the periodic hard target update (step size 1).

  Returns (params, target_params, opt_state, steps) after the step.
  """
  updates, opt_state = optimizer.update(grads, opt_state)
  params = optax.apply_updates(params, updates)
  steps = steps + 1
  target_params = optax.periodic_update(params, target_params, steps,
                                        target_update_period)
  return params, target_params, opt_state, steps


def run_episode(agent: base.Agent, env: dm_env.Environment):
  """One episode of bsuite's agent-environment loop (as `experiment.run`).

  Returns:
    (undiscounted return, number of steps, the last timestep).
  """
  timestep = env.reset()
  episode_return, steps = 0.0, 0
  while not timestep.last():
    action = agent.select_action(timestep)
    new_timestep = env.step(action)
    agent.update(timestep, action, new_timestep)
    timestep = new_timestep
    episode_return += timestep.reward
    steps += 1
  return episode_return, steps, timestep


class ReplayAgent(base.Agent):
  """A bsuite `base.Agent` that holds an `agents.pure` state.

  A thin adapter: one jitted call per environment step (update, then act on
  the new observation; the action is kept for bsuite's next
  `select_action`).

  Args:
    obs_spec: the environment's observation spec.
    action_spec: the environment's discrete action spec.
    config: a frozen, hashable config with at least `batch_size`,
      `replay_capacity`, `min_replay_size` and `discount`.
    seed: the only source of randomness (network init, acting, sampling).
  """

  # The learner's pure functions (`agents.pure.LearnerFns`), set by each
  # learner's subclass.
  LEARNER: pure.LearnerFns = None

  def __init__(self, obs_spec, action_spec, config, seed: int = 0):
    self._observation_shape, self._num_actions = check_specs(obs_spec,
                                                             action_spec)
    self._config = config
    pure_agent = pure.build(config, self.LEARNER, self._observation_shape,
                            np.dtype(obs_spec.dtype))
    self._pure = pure_agent
    self._jitted = pure.jitted(pure_agent)
    self._seed = seed
    # Started on first use: an agent built to read its config or specs
    # compiles and runs nothing.
    self._started_state = None
    self._pending = None  # (timestep, action) computed by the fused call.

  @property
  def _full_state(self):
    if self._started_state is None:
      self._started_state = self._jitted.init(jax.random.PRNGKey(self._seed))
    return self._started_state

  @_full_state.setter
  def _full_state(self, state) -> None:
    self._started_state = state

  @property
  def pure(self) -> pure.PureAgent:
    """The agent as a value: its `init`, `act` and `update` functions."""
    return self._pure

  @classmethod
  def check_pure_options(cls, options: Mapping[str, Any]) -> None:
    """Raises ValueError for adapter options (`agent_options`) that the
    pure agent cannot have; every option is fine by default."""
    del options

  @property
  def state(self):
    """The learner's state pytree (parameters, optimiser, rng)."""
    return self._full_state.learner

  def _set_learner_state(self, learner) -> None:
    self._full_state = self._full_state._replace(learner=learner)

  @property
  def agent_state(self):
    """The whole `agents.pure.AgentState` (learner, replay, counters)."""
    return self._full_state

  def restore_agent_state(self, agent_state) -> None:
    """Continues from `agent_state` (e.g. a checkpoint of `agent_state`),
    at an episode boundary."""
    self._full_state = jax.tree_util.tree_map(jnp.asarray, agent_state)
    self._pending = None

  @property
  def config(self):
    return self._config

  @property
  def episode(self) -> int:
    return int(self._full_state.episode)

  @property
  def total_steps(self) -> int:
    return int(self._full_state.total_steps)

  @property
  def metrics(self):
    """The last learning step's metrics (zeros before learning starts)."""
    return self._full_state.metrics

  def select_action(self, timestep: dm_env.TimeStep) -> base.Action:
    if self._pending is not None and self._pending[0] is timestep:
      action = self._pending[1]
      self._pending = None
      return int(action)
    self._pending = None
    self._full_state, action = self._jitted.act(self._full_state,
                                                pure.as_arrays(timestep))
    return int(action)

  def update(self, timestep: dm_env.TimeStep, action: base.Action,
             new_timestep: dm_env.TimeStep) -> None:
    self._pending = None
    args = (pure.as_arrays(timestep), np.int32(action),
            pure.as_arrays(new_timestep))
    self._full_state, next_action = self._jitted.update_act(
        self._full_state, *args)
    if not new_timestep.last():  # Else the next action is on a reset.
      self._pending = (new_timestep, next_action)


@jax.jit
def _leaves_finite(leaves):
  return jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves])


def non_finite_leaves(tree) -> List[str]:
  """Paths of the floating-point leaves of `tree` that hold a NaN or inf
  (one fused reduction: cheap enough for every progress line or chunk)."""
  floats = [(path, leaf) for path, leaf in
            jax.tree_util.tree_flatten_with_path(tree)[0]
            if jnp.issubdtype(jnp.result_type(leaf), jnp.inexact)]
  if not floats:
    return []
  finite = np.asarray(_leaves_finite([leaf for _, leaf in floats]))
  return [jax.tree_util.keystr(path)
          for (path, _), ok in zip(floats, finite) if not ok]


def check_finite_per_agent(tree, wheres) -> None:
  """`check_finite` of a tree whose leaves stack agents on axis 0, with one
  reduction over all of them; `wheres[k]` names agent k in the error."""
  if non_finite_leaves(tree):
    for index, where in enumerate(wheres):
      check_finite(jax.tree_util.tree_map(lambda x, i=index: x[i], tree),
                   where)


def check_finite(tree, where: str) -> None:
  """Raises FloatingPointError naming the non-finite leaves of `tree`.

  Args:
    tree: an agent state (or any pytree of arrays).
    where: the run and step, for the message ('deep_sea/0 [dqn] after
      episode 40').
  """
  bad = non_finite_leaves(tree)
  if bad:
    shown = ', '.join(bad[:4]) + (f' and {len(bad) - 4} more'
                                  if len(bad) > 4 else '')
    raise FloatingPointError(
        f'{where}: non-finite values (NaN or inf) in {shown}. Training '
        'diverged (a learning rate too large?) or the environment returned '
        'a non-finite reward; the run is not marked finished.')
