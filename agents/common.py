"""What every agent shares: the bsuite wrapper, spec checks, schedules.

An agent module defines a frozen (hence hashable) config dataclass and three
module-level pure functions:

  init(config, key, observation) -> state           # a pytree with an `rng`
  act(config, state, observation, episode) -> (action, rng)
  learn(config, state, batch, episode) -> (state, metrics)

`ReplayAgent` wraps them as a bsuite `base.Agent`. The functions are jitted
once at module level with the config as a static argument, so every agent
built from an equal config and equal shapes reuses the compiled programs.
"""

import dataclasses
import math
from typing import Any, Callable, Mapping, Optional, Tuple, Type, TypeVar

from bsuite.baselines import base
import dm_env
from dm_env import specs
import jax
import jax.numpy as jnp
import numpy as np
import optax

from pe_jax import replay

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
  for key, value in overrides.items():
    if isinstance(value, list):
      value = tuple(value)  # Keep the config hashable.
    values[key] = value
  return config_cls(**values)


def require(condition: bool, name: str, expected: str, value: Any) -> None:
  """Raises ValueError naming the hyperparameter and its allowed range."""
  if not condition:
    raise ValueError(f'`{name}` must be {expected}, got {value!r}.')


def check_common(config) -> None:
  """Checks the hyperparameters that most agents share (when present)."""
  get = lambda name: getattr(config, name, None)
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


def learn_then_act(learn_fn: Callable, act_fn: Callable) -> Callable:
  """Fuses one learning step with acting on the next observation.

  bsuite's loop calls `update(t)` and then `select_action` on the same new
  observation, so both can run as one jitted call per environment step:
  the action uses the updated parameters, exactly as in two calls.
  """

  def learn_act(config, state, batch, episode, next_observation):
    state, metrics = learn_fn(config, state, batch, episode)
    action, rng = act_fn(config, state, next_observation, episode)
    return state._replace(rng=rng), metrics, action

  return learn_act


def batch_forward(apply_fn: Callable[..., jnp.ndarray]):
  """vmaps a single-observation function over a leading batch axis."""
  return jax.vmap(apply_fn, in_axes=(None, 0))


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
  """A bsuite agent around pure `init / act / learn` functions and replay.

  Args:
    obs_spec: the environment's observation spec.
    action_spec: the environment's discrete action spec.
    config: a frozen, hashable config with at least `batch_size`,
      `replay_capacity`, `min_replay_size` and `discount`.
    init_fn, act_fn, learn_fn: jitted pure functions (config static).
    seed: the only source of randomness (network init, acting, sampling).
    n_step: length of the returns sampled from replay.
    learn_act_fn: optional jitted `learn_then_act(learn, act)`: one call per
      step instead of two.
  """

  def __init__(self, obs_spec, action_spec, config, init_fn, act_fn, learn_fn,
               seed: int = 0, n_step: int = 1, learn_act_fn=None):
    self._observation_shape, self._num_actions = check_specs(obs_spec,
                                                             action_spec)
    self._config = config
    self._act_fn = act_fn
    self._learn_fn = learn_fn
    self._learn_act_fn = learn_act_fn
    self._pending = None  # (timestep, action) computed by the fused call.
    key = jax.random.PRNGKey(seed)
    dummy = jnp.zeros(self._observation_shape, jnp.float32)
    self._state = init_fn(config, key, dummy)
    self._replay = replay.ReplayBuffer(
        config.replay_capacity, self._observation_shape,
        discount_factor=config.discount, n_step=n_step)
    self._sample_rng = np.random.default_rng(seed)
    self.episode = 0
    self.total_steps = 0
    self.metrics = {}

  @property
  def state(self):
    """The agent's current state pytree (parameters, optimiser, rng)."""
    return self._state

  @property
  def config(self):
    return self._config

  def select_action(self, timestep: dm_env.TimeStep) -> base.Action:
    if self._pending is not None and self._pending[0] is timestep:
      action = self._pending[1]
      self._pending = None
      return int(action)
    self._pending = None
    observation = np.asarray(timestep.observation, np.float32)
    action, rng = self._act_fn(self._config, self._state, observation,
                               np.int32(self.episode))
    self._state = self._state._replace(rng=rng)
    return int(action)

  def update(self, timestep: dm_env.TimeStep, action: base.Action,
             new_timestep: dm_env.TimeStep) -> None:
    self._replay.add(timestep.observation, action, new_timestep.reward,
                     new_timestep.discount, new_timestep.observation)
    self.total_steps += 1
    if new_timestep.last():
      self.episode += 1
    self._pending = None
    if self._replay.num_sampleable >= self._config.min_replay_size:
      batch = self._replay.sample(self._config.batch_size, self._sample_rng)
      if self._learn_act_fn is not None and not new_timestep.last():
        observation = np.asarray(new_timestep.observation, np.float32)
        self._state, self.metrics, action = self._learn_act_fn(
            self._config, self._state, batch, np.int32(self.episode),
            observation)
        self._pending = (new_timestep, action)
      else:
        self._state, self.metrics = self._learn_fn(
            self._config, self._state, batch, np.int32(self.episode))
