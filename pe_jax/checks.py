"""Input checks shared by the core functions.

Shape and rank problems are found while tracing and raise at once. Value
problems (a support that is not strictly increasing, negative probabilities)
can only be seen on concrete arrays: those raise when the function is called
eagerly, and under `jax.jit` the affected output is NaN instead, so a bad input
never turns into a plausible finite number.
"""

from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np


def is_concrete(x: Any) -> bool:
  """True when `x` holds real values (not a tracer inside jit/vmap/grad)."""
  return not isinstance(x, jax.core.Tracer)


def check_rank(x: chex.Array, rank: int, name: str) -> None:
  if jnp.ndim(x) != rank:
    raise ValueError(
        f'`{name}` must have rank {rank}, got shape {jnp.shape(x)}.')


def check_min_rank(x: chex.Array, rank: int, name: str) -> None:
  if jnp.ndim(x) < rank:
    raise ValueError(
        f'`{name}` must have rank >= {rank}, got shape {jnp.shape(x)}.')


def check_same_shape(x: chex.Array, y: chex.Array, x_name: str,
                     y_name: str) -> None:
  if jnp.shape(x) != jnp.shape(y):
    raise ValueError(
        f'`{x_name}` and `{y_name}` must have the same shape, got '
        f'{jnp.shape(x)} and {jnp.shape(y)}.')


def check_min_size(x: chex.Array, minimum: int, name: str, axis: int = -1):
  size = jnp.shape(x)[axis]
  if size < minimum:
    raise ValueError(
        f'`{name}` needs at least {minimum} entries along axis {axis}, '
        f'got {size} (shape {jnp.shape(x)}).')


def check_positive_int(value: Any, minimum: int, name: str) -> int:
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
    raise TypeError(f'`{name}` must be an int >= {minimum}, got {value!r}.')
  if value < minimum:
    raise ValueError(f'`{name}` must be an int >= {minimum}, got {value}.')
  return int(value)


def support_is_valid(support: chex.Array) -> chex.Array:
  """Boolean scalar: `support` is strictly increasing."""
  return jnp.all(jnp.diff(support) > 0)


def probs_are_valid(probs: chex.Array, axis=None) -> chex.Array:
  """No negative probabilities along `axis` (all axes for None).

  NaN is left to propagate.
  """
  return jnp.logical_not(jnp.any(probs < 0, axis=axis))


def check_support(support: chex.Array, name: str = 'support') -> None:
  """Raises for a concrete support that is not strictly increasing."""
  if is_concrete(support):
    values = np.asarray(support)
    if np.all(np.isfinite(values)) and not np.all(np.diff(values) > 0):
      raise ValueError(
          f'`{name}` must be strictly increasing, got {values.tolist()[:8]}'
          f'{"..." if values.size > 8 else ""}.')


def check_probs(probs: chex.Array, name: str = 'probs') -> None:
  """Raises for concrete probabilities with a negative entry."""
  if is_concrete(probs):
    values = np.asarray(probs)
    if np.any(values < 0):
      raise ValueError(
          f'`{name}` must be non-negative, got minimum {values.min()}.')


def nan_unless(valid: chex.Array, value: chex.Array) -> chex.Array:
  """`value` where `valid`, NaN elsewhere (for checks that run under jit)."""
  return jnp.where(valid, value, jnp.nan)
