"""Shape-free hyperparameters given per agent as arrays.

A config class lists in `ARRAY_FIELDS` the numeric fields that enter its
programs only through arithmetic (learning rate, discount, prior scales,
beta, epsilon, ...). `with_values` returns a copy of a config in which some
of them are (traced) arrays, so one compiled program serves agents with
different values, vmapped side by side. What a field switches on or off (a
prior network exists, epsilon-greedy draws are made) is decided by the
config's own number (`static_value`): a class lists such fields with their
"off" value in `SWITCH_FIELDS`; built at that value, the feature is compiled
out and per-agent values must keep it off.
"""

import dataclasses
from typing import Any, Dict, Mapping, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np

_STATIC = '_static_config'


def array_fields(config) -> Tuple[str, ...]:
  return tuple(getattr(type(config), 'ARRAY_FIELDS', ()))


def check_values(config, values: Mapping[str, Any],
                 num_agents: Optional[int] = None) -> None:
  """Raises a clear error for names or concrete values a config rejects;
  with `num_agents`, also for a value that is neither one number nor one
  per agent ([num_agents])."""
  allowed = array_fields(config)
  unknown = sorted(set(values) - set(allowed))
  if unknown:
    raise ValueError(
        f'{type(config).__name__} takes no per-agent array for {unknown}; '
        f'array hyperparameters: {list(allowed)}.')
  for name, value in values.items():
    if num_agents is not None and np.shape(value) not in ((), (num_agents,)):
      raise ValueError(
          f'`{name}`: {np.shape(value)} values for {num_agents} agents; give '
          f'one number or one per agent, shape ({num_agents},).')
    if isinstance(value, jax.core.Tracer):
      continue  # Checked by the caller before vmap, where concrete.
    for number in np.ravel(np.asarray(value, np.float64)):
      off = getattr(type(config), 'SWITCH_FIELDS', {}).get(name)
      if off is not None and getattr(config, name) == off and number != off:
        raise ValueError(
            f'`{name}` was built as {off!r}, which compiles its feature out; '
            f'build the agent with another `{name}` to give per-agent values '
            f'(got {float(number)!r}).')
      # Runs the config's own range checks on each value.
      dataclasses.replace(config, **{name: float(number)})


def with_values(config, values: Optional[Mapping[str, Any]]):
  """A copy of `config` whose fields `values` are arrays (no checks run)."""
  if not values:
    return config
  copy = object.__new__(type(config))
  for field in dataclasses.fields(config):
    object.__setattr__(copy, field.name, getattr(config, field.name))
  for name, value in values.items():
    object.__setattr__(copy, name, jnp.asarray(value, jnp.float32))
  object.__setattr__(copy, _STATIC, getattr(config, _STATIC, config))
  return copy


def static_value(config, name: str):
  """The number `name` had when the agent was built (never an array)."""
  return getattr(getattr(config, _STATIC, config), name)


def as_float32(values: Optional[Mapping[str, Any]],
               count: Optional[int] = None) -> Optional[Dict[str, jnp.ndarray]]:
  """Array hyperparameter values as float32 arrays (the agents' dtype), or
  None for none; with `count`, each broadcast to [count] (one per agent)."""
  if not values:
    return None
  arrays = {name: jnp.asarray(value, jnp.float32)
            for name, value in sorted(values.items())}
  if count is not None:
    arrays = {name: jnp.broadcast_to(value, (count,))
              for name, value in arrays.items()}
  return arrays
