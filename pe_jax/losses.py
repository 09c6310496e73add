"""Distributional losses (PE-DQN paper, Eqs. 11 and 12)."""

import chex
import jax
import jax.numpy as jnp
import rlax

from pe_jax import checks
from pe_jax import projections

Array = chex.Array


def quantile_regression_loss(locations: Array,
                             target_atoms: Array,
                             target_probs: Array,
                             huber_param: float = 0.0) -> Array:
  """Importance-weighted quantile (Huber) regression loss (Eq. 11).

  loss = sum_k E_{Z ~ target}[rho^kappa_{tau_k}(Z - theta_k)]
       = sum_k sum_j p_j |tau_k - 1{z_j < theta_k}| L_kappa(z_j - theta_k),

  with tau_k = (2k-1)/(2K), L_0 = |.|, and L_kappa the Huber loss. Weighting
  target atom j by p_j is Eq. 11's importance ratio K p_j up to the constant
  1/K, so non-uniform targets (e.g. PE-DQN's quantile/categorical mixture) are
  regressed correctly. With uniform `target_probs` this is exactly
  `rlax.quantile_regression_loss(locations, taus, target_atoms, huber_param)`.
  No gradient flows into the target.

  Args:
    locations: [K] predicted quantile locations, K >= 2.
    target_atoms: [N] target atoms.
    target_probs: [N] target probabilities.
    huber_param: kappa >= 0; 0 gives the plain quantile loss.

  Returns:
    Scalar loss.
  """
  checks.check_rank(locations, 1, 'locations')
  checks.check_rank(target_atoms, 1, 'target_atoms')
  checks.check_same_shape(target_atoms, target_probs, 'target_atoms',
                          'target_probs')
  checks.check_min_size(locations, 2, 'locations')
  checks.check_probs(target_probs, 'target_probs')
  if huber_param < 0:
    raise ValueError(f'`huber_param` must be >= 0, got {huber_param}.')
  target_atoms = jax.lax.stop_gradient(target_atoms)
  target_probs = jax.lax.stop_gradient(target_probs)
  taus = projections.quantile_midpoints(locations.shape[0])
  if huber_param > 0:
    delta = target_atoms[None, :] - locations[:, None]  # [K, N]
    below = jax.lax.stop_gradient((delta < 0).astype(delta.dtype))
    weight = jnp.abs(taus[:, None] - below)
    # A matrix-vector product, not an elementwise product and full sum:
    # XLA's CPU backend runs the latter slowly inside larger programs.
    loss = jnp.sum((weight * rlax.huber_loss(delta, huber_param))
                   @ target_probs)
  else:
    # With L = |.| the sum over target atoms has a closed form in the
    # target's CDF F and partial mean S below theta_k:
    #   sum_j p_j (tau_k - 1{z_j < theta_k}) (z_j - theta_k)
    #     = tau_k (E[Z] - theta_k) - S(theta_k) + theta_k F(theta_k),
    # whose gradient in theta_k is F(theta_k) - tau_k. One comparison and
    # one matrix product instead of a chain of [K, N] elementwise passes.
    below = (target_atoms[None, :] < locations[:, None]).astype(
        locations.dtype)  # [K, N]
    moments = jax.lax.stop_gradient(below) @ jnp.stack(
        [target_probs, target_probs * target_atoms], axis=-1)  # [K, 2]
    cdf, partial_mean = moments[:, 0], moments[:, 1]
    total = jnp.sum(target_probs)
    mean = jnp.sum(target_probs * target_atoms)
    loss = jnp.sum(taus * (mean - locations * total) - partial_mean +
                   locations * cdf)
  return checks.nan_unless(checks.probs_are_valid(target_probs), loss)


def categorical_cross_entropy_loss(logits: Array, support: Array,
                                   target_atoms: Array,
                                   target_probs: Array) -> Array:
  """Cross-entropy to the Cramér-projected target (Eq. 12).

  Minimising it minimises KL(Pi_C target || softmax(logits)). No gradient
  flows into the target.

  Args:
    logits: [K] predicted logits on `support`.
    support: [K] strictly increasing support.
    target_atoms: [N] target atoms.
    target_probs: [N] target probabilities.

  Returns:
    Scalar loss.
  """
  checks.check_rank(logits, 1, 'logits')
  checks.check_same_shape(logits, support, 'logits', 'support')
  projected = projections.categorical_projection(target_atoms, target_probs,
                                                 support)
  projected = jax.lax.stop_gradient(projected)
  return -jnp.sum(projected * jax.nn.log_softmax(logits))
