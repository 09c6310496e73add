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
  """A `RandomState`'s state: `get_state()`'s fields."""
  key: jnp.ndarray        # [624] uint32
  position: jnp.ndarray   # [] int32, in [0, 624]
  has_gauss: jnp.ndarray  # [] int32, 0 or 1
  gauss: jnp.ndarray      # [] float64, the cached second Gaussian


@x64
def from_numpy(random_state: np.random.RandomState) -> RandomStream:
  """The stream of a numpy `RandomState` (which is left unchanged)."""
  name, key, position, has_gauss, gauss = random_state.get_state()
  if name != 'MT19937':
    raise ValueError(f'only MT19937 streams are ported, got {name!r}.')
  return RandomStream(jnp.asarray(key, jnp.uint32),
                      jnp.asarray(position, jnp.int32),
                      jnp.asarray(has_gauss, jnp.int32),
                      jnp.asarray(gauss, jnp.float64))


def from_seed(seed) -> RandomStream:
  """The stream of `np.random.RandomState(seed)` (seed None: from the OS)."""
  return from_numpy(np.random.RandomState(seed))


def to_numpy(stream: RandomStream) -> np.random.RandomState:
  """A numpy `RandomState` in `stream`'s state (for checks and adapters)."""
  random_state = np.random.RandomState()
  random_state.set_state(('MT19937', np.asarray(stream.key, np.uint32),
                          int(stream.position), int(stream.has_gauss),
                          float(stream.gauss)))
  return random_state


def _twist(key: jnp.ndarray) -> jnp.ndarray:
  """The next 624 words (mt19937_gen), in four vectorised pieces: word i
  reads word i + 397, which is old for i < 227 and new from then on."""
  def mix(upper, lower, far):
    y = (upper & _UPPER) | (lower & _LOWER)
    return far ^ (y >> 1) ^ jnp.where((y & 1) == 1, _MATRIX_A, np.uint32(0))
  first = mix(key[:_N - _M], key[1:_N - _M + 1], key[_M:])          # 0..226
  second = mix(key[_N - _M:2 * (_N - _M)], key[_N - _M + 1:2 * (_N - _M) + 1],
               first)                                                # 227..453
  third = mix(key[2 * (_N - _M):_N - 1], key[2 * (_N - _M) + 1:],
              second[:_N - 1 - 2 * (_N - _M)])                      # 454..622
  last = mix(key[_N - 1:], first[:1], second[_N - 1 - 2 * (_N - _M):
                                              _N - 2 * (_N - _M)])  # 623
  return jnp.concatenate([first, second, third, last])


def random_uint32(stream: RandomStream) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [] uint32): mt19937_next32."""
  key = jax.lax.cond(stream.position >= _N, _twist, lambda k: k, stream.key)
  position = jnp.where(stream.position >= _N, 0, stream.position)
  y = key[position]
  y ^= y >> 11
  y ^= (y << 7) & np.uint32(0x9d2c5680)
  y ^= (y << 15) & np.uint32(0xefc60000)
  y ^= y >> 18
  return stream._replace(key=key, position=position + 1), y


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


# binomial(1, p)'s inversion constants for p = 1/2 (random_binomial_inversion:
# q = 1 - p, qn = exp(n log q), bound = min(n, n p + 10 sqrt(n p q + 1))).
_HALF_QN = float(np.exp(1 * np.log(0.5)))
_HALF_BOUND = int(min(1, 0.5 + 10.0 * np.sqrt(0.5 * 0.5 + 1)))


@x64
def binomial_one_half(stream: RandomStream
                      ) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [] int32 in {0, 1}): `binomial(1, 0.5)` by numpy's inversion
  (a new uniform whenever the count passes its bound)."""
  qn = jnp.asarray(_HALF_QN, jnp.float64)

  def searching(carry):
    _, _, u, px = carry
    return u > px

  def search(carry):
    stream, x, u, px = carry
    x = x + 1

    def restart(_):
      new_stream, new_u = random_double(stream)
      return new_stream, jnp.zeros((), jnp.int32), new_u, qn

    def advance(_):
      # px = ((n - X + 1) p px) / (X q), with n = 1, p = q = 1/2.
      new_px = ((1 - x + 1) * 0.5 * px) / (x * 0.5)
      return stream, x, u - px, new_px

    return jax.lax.cond(x > _HALF_BOUND, restart, advance, None)

  stream, u = random_double(stream)
  stream, x, _, _ = jax.lax.while_loop(
      searching, search, (stream, jnp.zeros((), jnp.int32), u, qn))
  return stream, x


def binomial_one_half_array(stream: RandomStream, size: int
                            ) -> Tuple[RandomStream, jnp.ndarray]:
  """(stream, [size] int32): `binomial(1, 0.5, size)`, drawn in order."""
  if size == 0:
    return stream, jnp.zeros((0,), jnp.int32)
  return jax.lax.scan(lambda s, _: binomial_one_half(s), stream, None,
                      length=size)
