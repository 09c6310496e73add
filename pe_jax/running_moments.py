"""Running moments of a stream of values, for normalising a signal by its
standard deviation (as Burda et al., 2019, normalise intrinsic rewards).

The state is a [3] array (count, mean, M2); batches merge into it with Chan
et al.'s parallel update, so it is a pytree leaf that jits, vmaps and
checkpoints like any parameter.
"""

import chex
import jax
import jax.numpy as jnp

Array = chex.Array


def merge(moments: Array, values: Array) -> Array:
  """[3] (count, mean, M2) after adding `values` (any shape).

  Chan, Golub and LeVeque (1979): the batch's own mean and M2 are combined
  with the running ones, exact in any batching.
  """
  chex.assert_shape(moments, (3,))
  count, mean, m2 = moments
  n = jnp.asarray(values.size, jnp.float32)
  batch_mean = jnp.mean(values)
  batch_m2 = jnp.sum(jnp.square(values - batch_mean))
  total = count + n
  delta = batch_mean - mean
  return jnp.stack([total, mean + delta * n / total,
                    m2 + batch_m2 + jnp.square(delta) * count * n / total])


def mean(moments: Array) -> Array:
  """[] mean of what `moments` has seen (0 before anything)."""
  chex.assert_shape(moments, (3,))
  return moments[1]


def inverse_std(moments: Array, epsilon: float = 1e-8) -> Array:
  """[] 1 / sqrt(sample variance + epsilon) of what `moments` has seen; 1
  until two values have been seen (no spread to divide by)."""
  chex.assert_shape(moments, (3,))
  count, _, m2 = moments
  variance = m2 / jnp.maximum(count - 1.0, 1.0)
  return jnp.where(count > 1.0, jax.lax.rsqrt(variance + epsilon), 1.0)
