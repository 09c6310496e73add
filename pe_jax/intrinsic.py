"""The intrinsic reward of a projection ensemble.

Members of different projections (quantile: K locations of weight 1/K;
categorical: K logits on a fixed support) are read from raw network outputs
by `member_distributions`; their average pairwise 1-Wasserstein distance
w_avg(s, a) (PE-DQN Sec. 5, Eq. 15; Prop. 9) is the intrinsic reward
(`per_action_disagreement`); `running_moments` keeps what divides it by its
running standard deviation (Burda et al., 2019; PE-DQN Table 5, VizDoom).

Members are ordered quantile first: `num_quantile` counts them.
"""

import chex
import jax
import jax.numpy as jnp
import numpy as np

from pe_jax import distances
from pe_jax import projections

Array = chex.Array


def member_distributions(outputs: Array, num_quantile: int,
                         support: Array):
  """Raw outputs [M, ..., K] -> atoms, probs [M, ..., K].

  The first `num_quantile` members' outputs are their atoms (each of weight
  1/K); the others' are logits on `support` [K].
  """
  chex.assert_rank(support, 1)
  chex.assert_axis_dimension(outputs, -1, support.shape[0])
  mask = (np.arange(outputs.shape[0]) < num_quantile).reshape(
      (-1,) + (1,) * (outputs.ndim - 1))
  uniform = jnp.full_like(outputs, 1.0 / outputs.shape[-1])
  atoms = jnp.where(mask, outputs, jnp.broadcast_to(support, outputs.shape))
  probs = jnp.where(mask, uniform, jax.nn.softmax(outputs, axis=-1))
  return atoms, probs


def project_quantile_members(atoms: Array, probs: Array, num_quantile: int,
                             support: Array):
  """[M, ..., K] members with the first `num_quantile` Cramér-projected onto
  `support` [K] (Rowland et al., 2018), so that all members share it."""
  if num_quantile == 0:
    return atoms, probs
  q = num_quantile
  flat = lambda x: x[:q].reshape(-1, x.shape[-1])
  projected = jax.vmap(projections.categorical_projection,
                       in_axes=(0, 0, None))(flat(atoms), flat(probs), support)
  probs = jnp.concatenate([projected.reshape(probs[:q].shape), probs[q:]])
  atoms = jnp.concatenate(
      [jnp.broadcast_to(support, atoms[:q].shape), atoms[q:]])
  return atoms, probs


def per_action_disagreement(atoms: Array, probs: Array, num_quantile: int,
                            support: Array, projected: bool) -> Array:
  """[M, ..., A, K] members -> [..., A] w_avg of each action (Eq. 15).

  One batched W1 call over every (state, action). `projected` (the
  authors' estimate): the quantile members are first projected onto
  `support` and W1 needs no sort; otherwise the 2K atoms of each pair are
  sorted (`distances.ensemble_disagreement`).
  """
  chex.assert_equal_shape([atoms, probs])
  if projected:
    _, probs = project_quantile_members(atoms, probs, num_quantile, support)
    return distances.ensemble_disagreement_on_support(
        jnp.moveaxis(probs, 0, -2), support)
  return distances.ensemble_disagreement(jnp.moveaxis(atoms, 0, -2),
                                         jnp.moveaxis(probs, 0, -2))

