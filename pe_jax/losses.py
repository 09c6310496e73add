"""Distributional losses (PE-DQN paper, Eqs. 11 and 12)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax

from pe_jax import checks
from pe_jax import projections
from pe_jax import sorting

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

  Leading dimensions are batch dimensions. Pass a batch directly rather than
  vmapping over it: with kappa = 0, from `sorting.SORT_NETWORK_MIN_ROWS` rows
  on, the loss sorts the locations with one sorting network vectorised over
  the rows, in O((K + N) log K) per row instead of O(K N).

  Args:
    locations: [..., K] predicted quantile locations, K >= 2.
    target_atoms: [..., N] target atoms, same leading shape.
    target_probs: [..., N] target probabilities.
    huber_param: kappa >= 0; 0 gives the plain quantile loss.

  Returns:
    [...] losses; NaN where a target probability is negative or NaN.
  """
  checks.check_min_rank(locations, 1, 'locations')
  checks.check_min_rank(target_atoms, 1, 'target_atoms')
  checks.check_same_shape(target_atoms, target_probs, 'target_atoms',
                          'target_probs')
  checks.check_min_size(locations, 2, 'locations')
  if jnp.shape(locations)[:-1] != jnp.shape(target_atoms)[:-1]:
    raise ValueError(
        '`locations` and `target_atoms` must have the same leading (batch) '
        f'shape, got {jnp.shape(locations)} and {jnp.shape(target_atoms)}.')
  checks.check_probs(target_probs, 'target_probs')
  if huber_param < 0:
    raise ValueError(f'`huber_param` must be >= 0, got {huber_param}.')
  locations = jnp.asarray(locations, jnp.result_type(locations, float))
  target_atoms = jax.lax.stop_gradient(target_atoms).astype(locations.dtype)
  target_probs = jax.lax.stop_gradient(target_probs).astype(locations.dtype)
  taus = projections.quantile_midpoints(locations.shape[-1]).astype(
      locations.dtype)
  if huber_param > 0:
    delta = target_atoms[..., None, :] - locations[..., :, None]  # [..., K, N]
    below = jax.lax.stop_gradient((delta < 0).astype(delta.dtype))
    weight = jnp.abs(taus[:, None] - below)
    # A matrix-vector product, not an elementwise product and full sum:
    # XLA's CPU backend runs the latter slowly inside larger programs.
    # optax's Huber loss is rlax.huber_loss op for op (same bits); importing
    # rlax would pull TFP into every script's start (about 2 s).
    per_location = (weight * optax.huber_loss(delta, delta=huber_param)
                   ) @ target_probs[..., None]  # [..., K, 1]
    loss = jnp.sum(per_location, (-2, -1))
  else:
    # With L = |.| the sum over target atoms has a closed form in the
    # target's CDF F and partial mean S below theta_k:
    #   sum_j p_j (tau_k - 1{z_j < theta_k}) (z_j - theta_k)
    #     = tau_k (E[Z] - theta_k) - S(theta_k) + theta_k F(theta_k),
    # whose gradient in theta_k is F(theta_k) - tau_k.
    cdf, partial_mean = _cdf_below(jax.lax.stop_gradient(locations),
                                   target_atoms, target_probs)
    total = jnp.sum(target_probs, -1, keepdims=True)
    mean = jnp.sum(target_probs * target_atoms, -1, keepdims=True)
    loss = jnp.sum(taus * (mean - locations * total) - partial_mean +
                   locations * cdf, -1)
  return checks.nan_unless(checks.probs_are_valid(target_probs, -1), loss)


def _cdf_below(points: Array, atoms: Array, probs: Array):
  """F(x) = sum_j p_j 1{z_j < x} and S(x) = sum_j p_j z_j 1{z_j < x}.

  For points [..., K] against atoms [..., N]. Below
  `sorting.SORT_NETWORK_MIN_ROWS` rows (e.g. one row under `vmap`), one
  [K, N] comparison and a matrix product. From there on, O((K + N) log K)
  per row instead of O(K N): sort the points, count for every atom the
  points not above it (binary search), add its mass to that count's bin and
  take cumulative sums over the bins; the k-th smallest point collects every
  atom whose count is <= k (~1.7x faster at 256 rows of K = 101, N = 202).

  Returns:
    (F, S), each [..., K] in the order of `points`.
  """
  weights = jnp.stack([probs, probs * atoms], -1)  # [..., N, 2]
  batch_shape = points.shape[:-1]
  num_points, num_atoms = points.shape[-1], atoms.shape[-1]
  rows = int(np.prod(batch_shape))
  if rows < sorting.SORT_NETWORK_MIN_ROWS:
    below = (atoms[..., None, :] < points[..., :, None]).astype(points.dtype)
    moments = below @ weights  # [..., K, 2]
    return moments[..., 0], moments[..., 1]
  points = points.reshape(rows, num_points).T  # Rows on the minor axis.
  atoms = atoms.reshape(rows, num_atoms).T
  weights = jnp.swapaxes(weights.reshape(rows, num_atoms, 2), 0, 1)
  sorted_points, order = sorting.sort_columns(
      points, jnp.broadcast_to(
          jnp.arange(num_points, dtype=points.dtype)[:, None], points.shape),
      fill_value=num_points)  # Padding points carry an out-of-range index.
  size = sorted_points.shape[0]
  counts = sorting.count_not_greater(sorted_points, atoms)  # [N, R]
  columns = jnp.arange(rows)
  bins = jnp.zeros((size + 1, rows, 2), points.dtype).at[
      counts, columns].add(weights)
  sorted_moments = sorting.cumulative_sum(bins[:size])  # [P, R, 2]
  # Back to the points' own order; padding points (index K) are dropped.
  moments = jnp.zeros((num_points, rows, 2), points.dtype).at[
      order.astype(jnp.int32), columns].set(sorted_moments, mode='drop')
  moments = jnp.swapaxes(moments, 0, 1).reshape(batch_shape + (num_points, 2))
  return moments[..., 0], moments[..., 1]


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


def projection_ensemble_loss(models, num_quantile: int,
                             huber_param: float = 0.0) -> Array:
  """Loss of each sample, summed over the members of projection ensembles
  whose first `num_quantile` members are quantile members (Eq. 11) and the
  rest categorical (Eq. 12): the sum of PE-DQN's member losses.

  Args:
    models: a sequence of (outputs [B, M, K], target_atoms [B, M, N],
      target_probs [B, M, N], support [K]), one per ensemble (PE-DQN: the
      value and the bonus model), every one with the same M and
      `num_quantile`; a quantile member's outputs are its locations, a
      categorical member's its logits on `support`.
    num_quantile: static number of quantile members, in [0, M].
    huber_param: kappa of the quantile members' loss (0: Eq. 11's).

  Returns:
    [B] each sample's summed loss.

  All the ensembles' quantile members share one batched quantile loss call,
  whose sort then vectorises over B x (quantile members) rows; each
  ensemble's categorical members share one cross-entropy call on its
  support.
  """
  for model in models:
    checks.check_rank(model[0], 3, 'outputs')
  num_members = models[0][0].shape[1]
  if any(model[0].shape[1] != num_members for model in models):
    raise ValueError('Every ensemble in `models` must have the same number '
                     f'of members, got {[m[0].shape[1] for m in models]}.')
  if not 0 <= num_quantile <= num_members:
    raise ValueError(f'`num_quantile` must be in [0, {num_members}], got '
                     f'{num_quantile}.')
  outputs = models[0][0]
  loss = jnp.zeros(outputs.shape[:1], outputs.dtype)
  if num_quantile:
    stack = lambda i: jnp.concatenate(
        [model[i][:, :num_quantile] for model in models], 1)
    loss += jnp.sum(quantile_regression_loss(stack(0), stack(1), stack(2),
                                             huber_param), axis=1)
  if num_quantile < num_members:
    cross_entropy = jax.vmap(jax.vmap(
        categorical_cross_entropy_loss, in_axes=(0, None, 0, 0)),
                             in_axes=(0, None, 0, 0))
    for model_outputs, atoms, probs, support in models:
      loss += jnp.sum(cross_entropy(model_outputs[:, num_quantile:], support,
                                    atoms[:, num_quantile:],
                                    probs[:, num_quantile:]), axis=1)
  return loss
