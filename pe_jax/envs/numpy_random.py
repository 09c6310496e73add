"""numpy's legacy `RandomState` (MT19937) as pure JAX functions.

bsuite's environments draw from `np.random.RandomState(seed)`; an exact port
must draw the same numbers in the same order. These functions carry the
generator's whole state (the 624-word Mersenne Twister key, its position and
the cached Gaussian of the polar method) as a pytree, so they jit, vmap and
run inside `lax.scan`:

  stream = numpy_random.from_seed(3)       # == np.random.RandomState(3)
  stream, u = numpy_random.random_double(stream)   # == rs.random_sample()
  stream, k = numpy_random.randint(stream, 5)      # == rs.randint(5)

Each function is numpy's algorithm (numpy/random/src/mt19937 and
legacy/legacy-distributions.c), step for step, in float64 arithmetic that
equals numpy's (`pe_jax.envs.exact`); callers need not enable x64. Pass
float64 parameters as JAX arrays or Python constants closed over: a NumPy
float64 argument of a jitted function is cast to float32 unless x64 is on.
"""

from typing import NamedTuple, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from pe_jax.envs.exact import mul
from pe_jax.envs.exact import x64

_N = 624
_M = 397
_MATRIX_A = np.uint32(0x9908b0df)
_UPPER = np.uint32(0x80000000)
_LOWER = np.uint32(0x7fffffff)


class RandomStream(NamedTuple):
  """A `RandomState`'s state, regenerated word by word.

  numpy twists all 624 words when its position reaches 624. Here each word
  is replaced by its next-cycle value as soon as it is drawn (word i of the
  next cycle needs words i and i + 1 of this one and word i + 397, which is
  this cycle's for i < 227 and the next cycle's, already made, after): the
  same numbers at O(1) cost a draw, where a whole twist under `vmap` would
  be paid at every draw. `key[:position]` holds next-cycle words,
  `key[position:]` this cycle's words not yet drawn.
  """
  key: jnp.ndarray        # [624] uint32
  position: jnp.ndarray   # [] int32, in [0, 624)
  has_gauss: jnp.ndarray  # [] int32, 0 or 1
  gauss: jnp.ndarray      # [] float64, the cached second Gaussian


def _next_word(key, i):
  """Word i of the next cycle (mt19937_gen's step for index i)."""
  y = (key[i] & _UPPER) | (key[(i + 1) % _N] & _LOWER)
  return key[(i + _M) % _N] ^ (y >> 1) ^ jnp.where(
      (y & 1) == 1, _MATRIX_A, np.uint32(0))


def _regenerated(key: np.ndarray, count: int) -> np.ndarray:
  """`key` with its first `count` words replaced by their next-cycle values,
  in draw order (host side; count 624 is numpy's whole twist)."""
  key = np.array(key, np.uint32)
  for i in range(count):
    y = (key[i] & _UPPER) | (key[(i + 1) % _N] & _LOWER)
    key[i] = key[(i + _M) % _N] ^ (y >> np.uint32(1)) ^ (
        _MATRIX_A if y & 1 else np.uint32(0))
  return key


@x64
def from_numpy(random_state: np.random.RandomState) -> RandomStream:
  """The stream of a numpy `RandomState` (which is left unchanged)."""
  name, key, position, has_gauss, gauss = random_state.get_state()
  if name != 'MT19937':
    raise ValueError(f'only MT19937 streams are ported, got {name!r}.')
  # numpy's drawn words (all of them at position 624) count as drawn here.
  key = _regenerated(key, min(position, _N))
  return RandomStream(jnp.asarray(key, jnp.uint32),
                      jnp.asarray(position % _N, jnp.int32),
                      jnp.asarray(has_gauss, jnp.int32),
                      jnp.asarray(gauss, jnp.float64))


def from_seed(seed) -> RandomStream:
  """The stream of `np.random.RandomState(seed)` (seed None: from the OS)."""
  return from_numpy(np.random.RandomState(seed))


def random_uint32(stream: RandomStream) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [] uint32): mt19937_next32."""
  position = stream.position
  y = _temper(stream.key[position])
  key = stream.key.at[position].set(_next_word(stream.key, position))
  return stream._replace(key=key, position=(position + 1) % _N), y


# A block of consecutive draws reads only words no draw of the block has
# regenerated when it is at most 227 words long: index i reads i + 1, and
# i + 397 or i - 227 (mod 624), none of them drawn before i in such a block.
BLOCK = _N - _M  # 227


def _temper(y):
  y ^= y >> 11
  y ^= (y << 7) & np.uint32(0x9d2c5680)
  y ^= (y << 15) & np.uint32(0xefc60000)
  return y ^ (y >> 18)


def random_uint32_block(stream: RandomStream, count: int
                        ) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [count] uint32): `count` <= 227 consecutive words at once,
  equal to `count` calls of `random_uint32`."""
  if not 0 <= count <= BLOCK:
    raise ValueError(f'`count` must be in [0, {BLOCK}], got {count}.')
  index = (stream.position + jnp.arange(count)) % _N
  key = stream.key
  y = (key[index] & _UPPER) | (key[(index + 1) % _N] & _LOWER)
  regenerated = key[(index + _M) % _N] ^ (y >> 1) ^ jnp.where(
      (y & 1) == 1, _MATRIX_A, np.uint32(0))
  words = _temper(key[index])
  return stream._replace(key=key.at[index].set(regenerated),
                         position=(stream.position + count) % _N), words


@x64
def random_double(stream: RandomStream) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [] float64 in [0, 1)): `random_sample()`, 53 bits from two
  words."""
  stream, a = random_uint32(stream)
  stream, b = random_uint32(stream)
  a = (a >> 5).astype(jnp.float64)
  b = (b >> 6).astype(jnp.float64)
  return stream, (a * 67108864.0 + b) / 9007199254740992.0


@x64
def uniform(stream: RandomStream, low, high
            ) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [] float64): `uniform(low, high)`, low + (high - low) * u."""
  stream, u = random_double(stream)
  low = jnp.asarray(low, jnp.float64)
  return stream, low + mul(jnp.asarray(high, jnp.float64) - low, u)


def randint(stream: RandomStream, high) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [] int32 in [0, high)): `randint(high)` for 1 <= high < 2^31
  (traced or static): masked rejection, one word per try; `randint(1)`
  draws nothing."""
  bound = jnp.asarray(high, jnp.uint32) - np.uint32(1)   # numpy's rng
  mask = bound
  for shift in (1, 2, 4, 8, 16):
    mask = mask | (mask >> shift)

  def draw(carry):
    stream, _ = carry
    stream, word = random_uint32(stream)
    return stream, word & mask

  def rejected(carry):
    return carry[1] > bound

  drawn = jax.lax.while_loop(rejected, draw, draw((stream, bound)))
  stream = jax.tree_util.tree_map(
      lambda new, old: jnp.where(bound == 0, old, new), drawn[0], stream)
  return stream, jnp.where(bound == 0, 0, drawn[1]).astype(jnp.int32)


@x64
def standard_normal(stream: RandomStream
                    ) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [] float64): `randn()`, the polar method (legacy_gauss): a
  pair per accepted point, the second cached for the next call."""
  def draw(carry):
    stream, _, _, _ = carry
    stream, u1 = random_double(stream)
    stream, u2 = random_double(stream)
    x1, x2 = 2.0 * u1 - 1.0, 2.0 * u2 - 1.0
    return stream, x1, x2, mul(x1, x1) + mul(x2, x2)

  def rejected(carry):
    r2 = carry[3]
    return (r2 >= 1.0) | (r2 == 0.0)

  def fresh(stream):
    one = jnp.ones((), jnp.float64)
    stream, x1, x2, r2 = jax.lax.while_loop(
        rejected, draw, (stream, one, one, one))
    f = jnp.sqrt(-2.0 * jnp.log(r2) / r2)
    return stream._replace(has_gauss=jnp.ones((), jnp.int32),
                           gauss=f * x1), f * x2

  def cached(stream):
    return stream._replace(has_gauss=jnp.zeros((), jnp.int32),
                           gauss=jnp.zeros((), jnp.float64)), stream.gauss

  return jax.lax.cond(stream.has_gauss == 1, cached, fresh, stream)


# binomial(1, p) by numpy's inversion (random_binomial_inversion) with p = 1/2:
# qn = exp(n log q) = 1/2 and bound = min(n, n p + 10 sqrt(n p q + 1)) = 1.
# Its loop: X = 0, px = qn, U uniform; while U > px: X += 1, U -= px (px
# stays 1/2). U > 1/2 gives X = 1 and U - 1/2 < 1/2 ends the loop: X is
# [U > 1/2], one uniform, and the restart at X > bound never happens.
_HALF_QN = float(np.exp(1 * np.log(0.5)))
_HALF_BOUND = int(min(1, 0.5 + 10.0 * np.sqrt(0.5 * 0.5 + 1)))
assert _HALF_QN == 0.5 and _HALF_BOUND == 1, (_HALF_QN, _HALF_BOUND)


@x64
def binomial_one_half(stream: RandomStream
                      ) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [] int32 in {0, 1}): `binomial(1, 0.5)`."""
  stream, u = random_double(stream)
  return stream, (u > _HALF_QN).astype(jnp.int32)


@x64
def binomial_one_half_array(stream: RandomStream, size: int
                            ) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [size] int32): `binomial(1, 0.5, size)`, drawn in order (in
  blocks of words: one uniform of two words each)."""
  bits = []
  while size > 0:
    count = min(size, BLOCK // 2)
    stream, words = random_uint32_block(stream, 2 * count)
    a = (words[0::2] >> 5).astype(jnp.float64)
    b = (words[1::2] >> 6).astype(jnp.float64)
    u = (a * 67108864.0 + b) / 9007199254740992.0
    bits.append((u > _HALF_QN).astype(jnp.int32))
    size -= count
  return stream, (jnp.concatenate(bits) if bits else
                  jnp.zeros((0,), jnp.int32))
