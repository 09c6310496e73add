"""float64 arithmetic that equals numpy's, operation for operation.

bsuite's environments compute in float64 Python/numpy scalars. Two things
keep a compiled JAX program from giving the same bits:
- JAX's default is float32: `x64` traces a function with 64-bit types on,
  whatever the caller's setting, so the agents around it stay float32.
- XLA's CPU compiler always allows fused multiply-adds: `a + b * c` becomes
  one `fma` (one rounding) where numpy rounds the product first, in about
  one sum in five. No flag turns this off for one computation, and LLVM
  sees through the usual barriers (an optimisation barrier, `nextafter(x,
  x)` on a value it can prove is not NaN, `x + 0.0`). `mul` computes the
  correctly rounded product with integer operations, which no compiler
  fuses with the sum that follows.

Use `mul` for every product whose result is added to or subtracted from;
products that only feed products, divisions or functions need nothing.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np


def x64(function):
  """`function` traced with 64-bit types enabled."""
  @functools.wraps(function)
  def wrapped(*args, **kwargs):
    with jax.enable_x64(True):
      return function(*args, **kwargs)
  return wrapped


_FRACTION = np.uint64((1 << 52) - 1)
_HIDDEN = np.uint64(1 << 52)
_LOW32 = np.uint64(0xFFFFFFFF)
_SIGN = np.uint64(1 << 63)


def _parts(a, b):
  """(a, b) as broadcast float64, the result's sign bit, the biased
  exponents and the 53-bit mantissas (hidden bit set) of a and b."""
  a = jnp.asarray(a, jnp.float64)
  b = jnp.asarray(b, jnp.float64)
  a, b = jnp.broadcast_arrays(a, b)
  bits_a = jax.lax.bitcast_convert_type(a, jnp.uint64)
  bits_b = jax.lax.bitcast_convert_type(b, jnp.uint64)
  exponent = lambda bits: ((bits >> 52) & np.uint64(0x7FF)).astype(jnp.int64)
  mantissa = lambda bits: (bits & _FRACTION) | _HIDDEN
  return (a, b, (bits_a ^ bits_b) & _SIGN, exponent(bits_a),
          exponent(bits_b), mantissa(bits_a), mantissa(bits_b))


def _assembled(sign, exponent, mantissa, exponent_a, exponent_b, fallback):
  """The float64 of `sign`, biased `exponent` and 53-bit `mantissa` where
  the inputs and the result are normal numbers, `fallback` elsewhere."""
  bits = sign | (exponent.astype(jnp.uint64) << 52) | (mantissa & _FRACTION)
  exact = jax.lax.bitcast_convert_type(bits, jnp.float64)
  normal = ((exponent_a > 0) & (exponent_a < 2047) & (exponent_b > 0) &
            (exponent_b < 2047) & (exponent > 0) & (exponent < 2047))
  return jnp.where(normal, exact, fallback)


@x64
def mul(a, b) -> jnp.ndarray:
  """a * b in float64, rounded to nearest even as IEEE 754 (and numpy) say,
  by integer arithmetic: [...] float64, the shapes of a and b broadcast.

  Normal inputs with a normal result are computed exactly so; zeros,
  subnormals, infinities, NaNs and results outside the normal range take
  the float multiply (exact for zeros; the others do not arise in bsuite's
  environments).
  """
  a, b, sign, exponent_a, exponent_b, mantissa_a, mantissa_b = _parts(a, b)
  # The 106-bit product high * 2^64 + low of the two 53-bit mantissas.
  a_low, a_high = mantissa_a & _LOW32, mantissa_a >> 32
  b_low, b_high = mantissa_b & _LOW32, mantissa_b >> 32
  low_low = a_low * b_low
  low_high = a_low * b_high
  high_low = a_high * b_low
  middle = (low_low >> 32) + (low_high & _LOW32) + (high_low & _LOW32)
  low = (low_low & _LOW32) | (middle << 32)
  high = (a_high * b_high + (low_high >> 32) + (high_low >> 32)
          + (middle >> 32))
  # The product lies in [2^104, 2^106): keep its top 53 bits.
  carry = (high >> 41).astype(jnp.int64)           # 1 iff >= 2^105
  shift = (52 + carry).astype(jnp.uint64)
  kept = (high << (np.uint64(64) - shift)) | (low >> shift)
  dropped = low & ((np.uint64(1) << shift) - np.uint64(1))
  half = np.uint64(1) << (shift - np.uint64(1))
  round_up = (dropped > half) | ((dropped == half) &
                                 ((kept & np.uint64(1)) == 1))
  kept = kept + round_up.astype(jnp.uint64)
  overflow = (kept >> 53).astype(jnp.int64)        # rounded up to 2^53
  kept = jnp.where(overflow == 1, kept >> 1, kept)
  exponent = exponent_a + exponent_b - 1023 + carry + overflow
  return _assembled(sign, exponent, kept, exponent_a, exponent_b, a * b)


@x64
def div(a, b) -> jnp.ndarray:
  """a / b in float64, rounded to nearest even, by integer long division:
  [...] float64.

  XLA's CPU compiler turns a division by a constant into a multiplication
  by its reciprocal, which is off by one unit in the last place in about a
  third of quotients; this never is. Normal inputs with a normal quotient
  are computed so; the others (zeros, subnormals, infinities, NaNs, results
  outside the normal range) take the float division.
  """
  a, b, sign, exponent_a, exponent_b, numerator, denominator = _parts(a, b)
  # Scale the numerator into [denominator, 2 denominator): a 53-bit quotient
  # whose first bit is 1.
  smaller = numerator < denominator
  remainder = jnp.where(smaller, numerator << 1, numerator)
  quotient = jnp.zeros_like(numerator)
  for _ in range(53):
    bit = remainder >= denominator
    quotient = (quotient << 1) | bit.astype(jnp.uint64)
    remainder = jnp.where(bit, remainder - denominator, remainder) << 1
  # remainder is now twice what is left: compare it with the denominator.
  round_up = (remainder > denominator) | ((remainder == denominator) &
                                          ((quotient & np.uint64(1)) == 1))
  quotient = quotient + round_up.astype(jnp.uint64)
  overflow = (quotient >> 53).astype(jnp.int64)
  quotient = jnp.where(overflow == 1, quotient >> 1, quotient)
  exponent = (exponent_a - exponent_b + 1023 - smaller.astype(jnp.int64)
              + overflow)
  return _assembled(sign, exponent, quotient, exponent_a, exponent_b, a / b)
