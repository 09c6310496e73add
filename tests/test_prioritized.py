"""Sum tree and prioritized sampling against brute-force NumPy."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pe_jax import prioritized


def _priorities(capacity, seed=0):
  rng = np.random.default_rng(seed)
  priorities = rng.exponential(1.0, capacity).astype(np.float32)
  priorities[rng.random(capacity) < 0.2] = 0.0  # some empty leaves
  return priorities


class SumTreeTest(chex.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  def test_sums_equal_their_children_after_repeated_indices(self):
    capacity = 37  # not a power of two: 64 leaves
    tree = prioritized.sum_tree_init(capacity)
    self.assertEqual(tree.shape, (128,))
    priorities = _priorities(capacity)
    tree = self.variant(prioritized.sum_tree_set)(
        tree, jnp.arange(capacity), jnp.asarray(priorities))
    # A batch with a repeated index (same value, as from one transition).
    indices = jnp.array([3, 5, 3, 36])
    values = jnp.array([2.0, 0.5, 2.0, 1.5])
    tree = self.variant(prioritized.sum_tree_set)(tree, indices, values)
    priorities[[3, 5, 36]] = [2.0, 0.5, 1.5]
    tree = np.asarray(tree)
    np.testing.assert_allclose(tree[64:64 + capacity], priorities)
    np.testing.assert_allclose(tree[1:64], tree[2:128:2] + tree[3:128:2],
                               rtol=1e-6)
    np.testing.assert_allclose(tree[1], priorities.sum(), rtol=1e-5)

  @chex.variants(with_jit=True, without_jit=True)
  def test_find_equals_searchsorted_on_the_cumulative_sum(self):
    capacity = 100
    priorities = _priorities(capacity, seed=1)
    tree = prioritized.sum_tree_set(prioritized.sum_tree_init(capacity),
                                    jnp.arange(capacity),
                                    jnp.asarray(priorities))
    cumulative = np.cumsum(priorities.astype(np.float64))
    # Targets away from interval edges, where float32 sums may round.
    rng = np.random.default_rng(2)
    targets = rng.uniform(0, cumulative[-1], 2000)
    edges = np.abs(targets[:, None] - cumulative[None, :]).min(axis=1)
    targets = targets[edges > 1e-3]
    expected = np.searchsorted(cumulative, targets, side='right')
    found = self.variant(prioritized.sum_tree_find)(
        tree, jnp.asarray(targets, jnp.float32))
    np.testing.assert_array_equal(np.asarray(found), expected)
    # At and beyond the total, the walk stays on a leaf of positive priority.
    last = self.variant(prioritized.sum_tree_find)(
        tree, jnp.array([cumulative[-1], 2 * cumulative[-1]], jnp.float32))
    assert np.all(priorities[np.asarray(last)] > 0)
    assert int(last[0]) == np.flatnonzero(priorities)[-1]

  def test_capacity_must_be_positive(self):
    with pytest.raises(ValueError, match='`capacity` must be an int >= 1'):
      prioritized.sum_tree_init(0)
    tree = prioritized.sum_tree_set(prioritized.sum_tree_init(1),
                                    jnp.array([0]), jnp.array([3.0]))
    self.assertEqual(int(prioritized.sum_tree_find(tree, jnp.array([2.9]))[0]),
                     0)


class PrioritizedSampleTest(chex.TestCase):

  @chex.variants(with_jit=True, without_jit=True)
  def test_frequencies_are_proportional_to_priorities(self):
    capacity, size, batch = 50, 40, 64
    priorities = np.zeros(capacity, np.float32)
    priorities[:size] = _priorities(size, seed=3)
    tree = prioritized.sum_tree_set(prioritized.sum_tree_init(capacity),
                                    jnp.arange(capacity),
                                    jnp.asarray(priorities))
    sample = self.variant(jax.vmap(
        lambda key: prioritized.prioritized_sample(tree, key, batch, 0.45,
                                                   size)))
    indices, weights = sample(jax.random.split(jax.random.PRNGKey(0), 2000))
    indices, weights = np.asarray(indices), np.asarray(weights)
    frequencies = np.bincount(indices.ravel(), minlength=capacity) / indices.size
    expected = priorities / priorities.sum()
    assert frequencies[priorities == 0].sum() == 0
    # 128,000 stratified draws: within 3 binomial standard deviations.
    std = np.sqrt(expected * (1 - expected) / indices.size)
    assert np.all(np.abs(frequencies - expected) <= 3 * std + 1e-4)
    # Importance weights: (N P(i))^-beta over the batch's largest.
    raw = (size * expected[indices]) ** -0.45
    np.testing.assert_allclose(weights, raw / raw.max(axis=1, keepdims=True),
                               rtol=1e-4)
    assert np.all(weights <= 1.0 + 1e-6)

  def test_stratified_sampling_takes_one_index_per_slice(self):
    # Equal priorities and a batch the size of the buffer: every index once.
    tree = prioritized.sum_tree_set(prioritized.sum_tree_init(16),
                                    jnp.arange(16), jnp.ones(16))
    indices, weights = prioritized.prioritized_sample(
        tree, jax.random.PRNGKey(1), 16, 1.0, 16)
    np.testing.assert_array_equal(np.sort(np.asarray(indices)), np.arange(16))
    np.testing.assert_allclose(weights, 1.0)

  def test_priorities_from_losses(self):
    losses = jnp.array([-2.0, 0.0, 0.5])
    np.testing.assert_allclose(
        prioritized.priorities_from_losses(losses, 0.5, 1e-6),
        (np.abs([-2.0, 0.0, 0.5]) + 1e-6) ** 0.5, rtol=1e-6)
