"""Shape-free hyperparameters given per agent as arrays.

A config class lists in `ARRAY_FIELDS` the numeric fields that enter its
programs only through arithmetic (learning rate, discount, prior scales,
beta, epsilon, ...). `configured` pairs a config with arrays for some of
them (a `Configured` pytree: the arrays are its leaves, the config its
static part), so one compiled program serves agents with different values,
vmapped side by side; the learners' functions take it where they take a
config and read fields from it alike. What a field switches on or off (a
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


def check_one_agent(values: Mapping[str, Any]) -> None:
  """Raises a clear error for a value that is not one number: `init` starts
  one agent (under `vmap`, each agent sees its own element)."""
  for name, value in values.items():
    if np.ndim(value) != 0:
      raise ValueError(
          f'`{name}`: init starts one agent and takes one number, got shape '
          f'{np.shape(value)}; for one agent per value, '
          f'`jax.vmap(agent.init)(keys, {{{name!r}: values}})`.')


@jax.tree_util.register_pytree_node_class
class Configured:
  """A learner's config with some of its `ARRAY_FIELDS` given as arrays.

  A pytree: its leaves are the given arrays (`values`), its static part the
  frozen config, so it crosses `jit`, `vmap` and `lax.scan` as an argument
  like any other. Reading a field gives the array if one was given and the
  config's number otherwise; the config's properties (derived settings) are
  evaluated on the view, so they see the arrays too.
  """
  __slots__ = ('config', 'values')

  def __init__(self, config, values: Mapping[str, Any]):
    object.__setattr__(self, 'config', config)
    object.__setattr__(self, 'values', dict(values))

  def __getattr__(self, name):
    values = object.__getattribute__(self, 'values')
    if name in values:
      return values[name]
    config = object.__getattribute__(self, 'config')
    derived = getattr(type(config), name, None)
    if isinstance(derived, property):
      return derived.fget(self)
    return getattr(config, name)

  def __setattr__(self, name, value):
    raise dataclasses.FrozenInstanceError(f'cannot assign to field {name!r}')

  def __repr__(self):
    return f'Configured({self.config!r}, values={sorted(self.values)})'

  def tree_flatten(self):
    return (self.values,), self.config

  @classmethod
  def tree_unflatten(cls, config, children):
    return cls(config, children[0])


def configured(config, values: Optional[Mapping[str, Any]]):
  """`config` with the fields `values` as arrays (a `Configured`), or
  `config` itself for no values (no checks run: see `check_values`)."""
  if not values:
    return config
  return Configured(config, {name: jnp.asarray(value, jnp.float32)
                             for name, value in values.items()})


def static_value(config, name: str):
  """The number `name` had when the agent was built (never an array)."""
  if isinstance(config, Configured):
    config = config.config
  return getattr(config, name)


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
