"""Distances between discrete return distributions."""

import chex
import jax
import jax.numpy as jnp

from pe_jax import checks

Array = chex.Array


def wasserstein1(atoms_a: Array, probs_a: Array, atoms_b: Array,
                 probs_b: Array) -> Array:
  """Exact 1-Wasserstein distance between two discrete distributions.

  W1 = integral |F_a(x) - F_b(x)| dx. The merged atoms are sorted once; the
  CDF difference is constant between consecutive merged atoms, so the
  integral is a finite sum. Atoms may be unsorted, tied, or carry zero mass,
  and the two atom sets may differ in size. Between a quantile member
  (locations, 1/K) and a categorical member (support, softmax) this is the
  exact disagreement PE-DQN uses (Sec. 5.1), with no projection first.

  Args:
    atoms_a: [N] atoms of the first distribution.
    probs_a: [N] its probabilities (non-negative, summing to 1).
    atoms_b: [L] atoms of the second distribution.
    probs_b: [L] its probabilities.

  Returns:
    Scalar W1 distance.
  """
  checks.check_rank(atoms_a, 1, 'atoms_a')
  checks.check_rank(atoms_b, 1, 'atoms_b')
  checks.check_same_shape(atoms_a, probs_a, 'atoms_a', 'probs_a')
  checks.check_same_shape(atoms_b, probs_b, 'atoms_b', 'probs_b')
  checks.check_probs(probs_a, 'probs_a')
  checks.check_probs(probs_b, 'probs_b')
  dtype = jnp.result_type(atoms_a, atoms_b, float)
  atoms = jnp.concatenate([atoms_a, atoms_b]).astype(dtype)
  signed_mass = jnp.concatenate([probs_a, -probs_b]).astype(dtype)
  # Sort the masses along with their atoms: one sort, no gather (gathers are
  # slow on CPU and get fused into consumers).
  atoms, signed_mass = jax.lax.sort((atoms, signed_mass), num_keys=1)
  cdf_difference = jnp.cumsum(signed_mass)[:-1]
  gaps = jnp.diff(atoms)
  distance = jnp.sum(jnp.abs(cdf_difference) * gaps)
  # Sorting puts NaN atoms last, where a zero CDF difference could hide them.
  poisoned = jnp.any(jnp.isnan(atoms)) | jnp.any(jnp.isnan(signed_mass))
  valid = (checks.probs_are_valid(probs_a) & checks.probs_are_valid(probs_b)
           & jnp.logical_not(poisoned))
  return checks.nan_unless(valid, distance)


def ensemble_disagreement(atoms: Array, probs: Array) -> Array:
  """Average pairwise W1 between ensemble members (PE-DQN's w_avg).

  w_avg = 1 / (M (M - 1)) * sum_{i != j} W1(member i, member j).

  Args:
    atoms: [M, K] atoms of each member, M >= 2.
    probs: [M, K] probabilities of each member.

  Returns:
    Scalar w_avg.
  """
  checks.check_rank(atoms, 2, 'atoms')
  checks.check_same_shape(atoms, probs, 'atoms', 'probs')
  checks.check_min_size(atoms, 2, 'atoms', axis=0)
  num_members = atoms.shape[0]
  # Each unordered pair once (W1 is symmetric): pairs (i, i + d) for each
  # offset d, as slices. Index arrays would become gathers, which XLA fuses
  # into the sort loops and runs slowly on CPU.
  total = 0.0
  for offset in range(1, num_members):
    total += jnp.sum(jax.vmap(wasserstein1)(atoms[:-offset], probs[:-offset],
                                            atoms[offset:], probs[offset:]))
  return 2.0 * total / (num_members * (num_members - 1))
