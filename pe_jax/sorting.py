"""Sorting and searching many short columns at once (CPU-friendly).

XLA's comparator sort runs one short row at a time on CPU. The distances and
losses here sort hundreds of rows of ~100-200 numbers per learning step, so
from `SORT_NETWORK_MIN_ROWS` rows on they use a sorting network vectorised
over the rows instead, with the rows on the minor (contiguous) axis.
"""

import chex
import jax
import jax.numpy as jnp

Array = chex.Array

# Rows from which the sorting network replaces XLA's sort: W1 of 101 vs 101
# atoms then takes ~6 us per pair instead of ~28 on 2 CPU cores
# (benchmark_core), at about a second more compile time.
SORT_NETWORK_MIN_ROWS = 64


# Jitted so that eager callers compile the network once per shape instead of
# dispatching its hundreds of small ops one by one; inlined under an outer jit.
@jax.jit
def _bitonic_sort(keys: Array, values: Array):
  """Sorts `keys` [n, R] along axis 0 (n a power of two); `values` follow.

  A bitonic sorting network (Batcher, 1968): log2(n) (log2(n) + 1) / 2
  compare-exchange stages, each an elementwise select over every column.
  With the rows on the minor axis each stage is one vectorised loop, which
  on CPU is several times faster than XLA's comparator-based sort. Equal keys
  are never swapped, so every key keeps its own value; the order among equal
  keys is unspecified.
  """
  n = keys.shape[0]
  pairs = jnp.stack([keys, values], 1)  # [n, 2, R]: one array, half the ops.
  shape = pairs.shape

  def exchange(a, b):
    swap = b[..., :1, :] < a[..., :1, :]
    return jnp.where(swap, b, a), jnp.where(swap, a, b)

  block = 2
  while block <= n:
    # Merge the sorted halves of each block: compare element i with the
    # mirror element of the other half, leaving two bitonic halves ...
    half = block // 2
    x = pairs.reshape((n // block, block) + shape[1:])
    low, high = exchange(x[:, :half], x[:, half:][:, ::-1])
    pairs = jnp.concatenate([low, high[:, ::-1]], 1).reshape(shape)
    # ... then sort each bitonic half with half-cleaners of shrinking stride.
    stride = half // 2
    while stride >= 1:
      x = pairs.reshape((n // (2 * stride), 2, stride) + shape[1:])
      low, high = exchange(x[:, 0], x[:, 1])
      pairs = jnp.stack([low, high], 1).reshape(shape)
      stride //= 2
    block *= 2
  return pairs[:, 0], pairs[:, 1]


def sort_columns(keys: Array, values: Array, fill_value=0):
  """Sorts each column of `keys` [n, R], carrying `values` [n, R] along.

  From `SORT_NETWORK_MIN_ROWS` columns on, n is padded up to a power of two
  P with copies of the column's largest key carrying `fill_value`. They sort
  to the end, in any order among the keys equal to that largest key, so
  callers give them a value that does no harm there (zero mass, an
  out-of-range index).

  Returns:
    (sorted keys, values), each [P, R] with P = n, or the padded size.
  """
  chex.assert_rank([keys, values], 2)
  chex.assert_equal_shape([keys, values])
  n, rows = keys.shape
  if rows < SORT_NETWORK_MIN_ROWS:
    return jax.lax.sort((keys, values), dimension=0, num_keys=1)
  size = 1 << (n - 1).bit_length()
  if size > n:
    pad = (size - n, rows)
    keys = jnp.concatenate([keys, jnp.broadcast_to(jnp.max(keys, 0), pad)])
    values = jnp.concatenate([values, jnp.full(pad, fill_value, values.dtype)])
  return _bitonic_sort(keys, values)


def count_not_greater(sorted_keys: Array, queries: Array) -> Array:
  """#{i : sorted_keys[i, r] <= queries[j, r]} for every query: [N, R] int32.

  A branch-free binary search, column by column: floor(log2(P)) + 1 rounds of
  one gather each, for sorted columns `sorted_keys` [P, R] and `queries`
  [N, R]. NaN queries count 0.
  """
  chex.assert_rank([sorted_keys, queries], 2)
  chex.assert_equal_shape_suffix([sorted_keys, queries], 1)
  size, rows = sorted_keys.shape
  # Flat indices: a 1-D gather runs faster on CPU than a 2-D one.
  flat_keys = sorted_keys.reshape(-1)
  columns = jnp.arange(rows, dtype=jnp.int32)
  count = jnp.zeros(queries.shape, jnp.int32)
  step = 1 << (size.bit_length() - 1)  # The largest power of two <= P.
  while step:
    candidate = count + step
    key = flat_keys[(jnp.minimum(candidate, size) - 1) * rows + columns]
    count = jnp.where((candidate <= size) & (key <= queries), candidate, count)
    step //= 2
  return count


def cumulative_sum(x: Array) -> Array:
  """Cumulative sum along axis 0 of x [P, ...], as a sequential scan.

  Each step adds one row over the whole minor extent. XLA's CPU `cumsum`
  (an associative scan of strided slices) is ~10x slower at the [~200, ~400]
  shapes of the distances and losses here.
  """
  def add_row(total, row):
    total = total + row
    return total, total
  return jax.lax.scan(add_row, jnp.zeros_like(x[0]), x)[1]
