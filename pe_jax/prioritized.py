"""Prioritized replay (Schaul et al., 2016) as pure functions on a sum tree.

  tree = sum_tree_init(capacity)
  tree = sum_tree_set(tree, indices, priorities)        # [B], [B]
  indices, weights = prioritized_sample(tree, key, batch_size, beta, size)

The tree is one flat array: node 1 is the root, node i has children 2i and
2i + 1, and the `L` leaves (L the power of two >= capacity) are nodes L to
2L - 1. Every operation is vectorised over a batch of indices and loops only
over the tree's log2(L) levels (static), so it jits, vmaps and scans; a
million leaves take 20 levels.
"""

from typing import Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np


def _num_leaves(capacity: int) -> int:
  return 1 << max(int(capacity) - 1, 0).bit_length()


def sum_tree_init(capacity: int) -> jnp.ndarray:
  """An all-zero tree with room for `capacity` priorities: [2L] float32."""
  if not isinstance(capacity, (int, np.integer)) or capacity < 1:
    raise ValueError(f'`capacity` must be an int >= 1, got {capacity!r}.')
  return jnp.zeros(2 * _num_leaves(capacity), jnp.float32)


def _depth(tree: jnp.ndarray) -> int:
  return (tree.shape[-1] // 2).bit_length() - 1


def sum_tree_total(tree: jnp.ndarray) -> jnp.ndarray:
  """Sum of all priorities: []."""
  return tree[1]


def sum_tree_get(tree: jnp.ndarray, indices: jnp.ndarray) -> jnp.ndarray:
  """Priorities of leaves `indices` [B]: [B]."""
  return tree[tree.shape[-1] // 2 + indices]


def sum_tree_set(tree: jnp.ndarray, indices: jnp.ndarray,
                 priorities: jnp.ndarray) -> jnp.ndarray:
  """Sets leaves `indices` [B] to `priorities` [B] (>= 0) and their sums.

  Where an index repeats, one of its priorities is kept; every sum above it
  is recomputed from its two children, so the tree stays consistent.
  """
  chex.assert_rank([indices, priorities], 1)
  chex.assert_equal_shape([indices, priorities])
  num_leaves = tree.shape[-1] // 2
  nodes = num_leaves + indices
  tree = tree.at[nodes].set(priorities.astype(tree.dtype))
  for _ in range(_depth(tree)):
    nodes = nodes // 2
    tree = tree.at[nodes].set(tree[2 * nodes] + tree[2 * nodes + 1])
  return tree


def sum_tree_find(tree: jnp.ndarray, targets: jnp.ndarray) -> jnp.ndarray:
  """Leaf indices [B] whose cumulative priority interval holds `targets` [B].

  Leaf i holds [sum_{j<i} p_j, sum_{j<=i} p_j). A walk never enters a
  subtree of sum 0, so rounding near the total still lands on a leaf of
  positive priority (when the total is positive).
  """
  chex.assert_rank(targets, 1)
  nodes = jnp.ones(targets.shape, jnp.int32)
  for _ in range(_depth(tree)):
    left = 2 * nodes
    left_sum = tree[left]
    right_sum = tree[left + 1]
    go_right = ((targets >= left_sum) & (right_sum > 0)) | (left_sum <= 0)
    targets = jnp.where(go_right, targets - left_sum, targets)
    nodes = jnp.where(go_right, left + 1, left)
  return nodes - tree.shape[-1] // 2


def prioritized_sample(tree: jnp.ndarray, key: chex.PRNGKey, batch_size: int,
                       beta, size) -> Tuple[jnp.ndarray, jnp.ndarray]:
  """Stratified proportional sampling and importance weights.

  Args:
    tree: the sum tree; only leaves < size may have positive priority.
    key: PRNG key.
    batch_size: B, the number of indices.
    beta: importance-sampling exponent in [0, 1] (annealed to 1 by callers).
    size: [] the number N of stored transitions.
  Returns:
    indices [B] int32, one drawn from each of B equal slices of the total
    (P(i) = p_i / sum p), and weights [B] float32, (N P(i))^-beta divided by
    the largest weight of the batch (so they are at most 1).
  """
  total = sum_tree_total(tree)
  offsets = jax.random.uniform(key, (batch_size,))
  targets = (jnp.arange(batch_size) + offsets) * (total / batch_size)
  indices = sum_tree_find(tree, targets)
  probabilities = sum_tree_get(tree, indices) / total
  weights = (jnp.asarray(size, jnp.float32) * probabilities) ** (-beta)
  return indices, weights / jnp.max(weights)


def priorities_from_losses(losses: jnp.ndarray, alpha, epsilon: float = 1e-6
                           ) -> jnp.ndarray:
  """Priority (|loss| + epsilon)^alpha of per-sample losses [B]: [B]."""
  return (jnp.abs(losses) + epsilon) ** alpha
