"""numpy's legacy RandomState and float64 arithmetic in JAX, against numpy.

`pe_jax.envs.numpy_random` must draw numpy's numbers in numpy's order, and
`pe_jax.envs.exact` must round as numpy does; with and without jit. (The
test process compiles at level 0, where XLA makes none of the rewrites that
`exact` undoes: tests/suite_checks.py's `arithmetic` checks them at XLA's
defaults, from tests/test_suite_envs.py.)
"""

from absl.testing import absltest
from absl.testing import parameterized
import chex
import jax
import jax.numpy as jnp
import numpy as np

from pe_jax.envs import exact
from pe_jax.envs import numpy_random


def draws(function, stream, count):
  """`count` draws of `function(stream)` in a jitted scan."""
  return jax.jit(lambda s: jax.lax.scan(lambda s, _: function(s), s, None,
                                        length=count))(stream)


class StreamTest(parameterized.TestCase):

  @parameterized.parameters(0, 1, 42, 2**31)
  def test_doubles_and_words_equal_numpy_across_twists(self, seed):
    stream, doubles = draws(numpy_random.random_double,
                            numpy_random.from_seed(seed), 1000)  # 3 twists
    numpy_stream = np.random.RandomState(seed)
    np.testing.assert_array_equal(doubles, numpy_stream.random_sample(1000))
    _, words = draws(numpy_random.random_uint32, stream, 700)
    np.testing.assert_array_equal(
        words, numpy_stream.randint(0, 2**32, size=700, dtype=np.uint64))

  def test_a_stream_taken_mid_cycle_continues_as_numpy(self):
    numpy_stream = np.random.RandomState(5)
    numpy_stream.random_sample(123)  # position 246 of 624
    stream = numpy_random.from_numpy(numpy_stream)
    self.assertEqual(int(stream.position), 246)
    _, doubles = draws(numpy_random.random_double, stream, 800)
    np.testing.assert_array_equal(doubles, numpy_stream.random_sample(800))

  @chex.variants(with_jit=True, without_jit=True)
  def test_mixed_draws_equal_numpy_in_order(self):
    randint = self.variant(numpy_random.randint)
    normal = self.variant(numpy_random.standard_normal)
    binomial = self.variant(numpy_random.binomial_one_half)
    uniform = self.variant(lambda s: numpy_random.uniform(s, -0.05, 0.05))
    stream, numpy_stream = (numpy_random.from_seed(11),
                            np.random.RandomState(11))
    kinds = np.random.RandomState(0).randint(0, 6, size=60)
    for i, kind in enumerate(kinds):
      if kind == 0:
        high = int(np.random.RandomState(i).choice([1, 2, 5, 7, 64, 60000]))
        stream, value = randint(stream, high)
        expected = numpy_stream.randint(high)
      elif kind in (1, 2):  # pairs of Gaussians use the cached one
        stream, value = normal(stream)
        expected = numpy_stream.randn()
      elif kind == 3:
        stream, value = binomial(stream)
        expected = numpy_stream.binomial(1, 0.5)
      elif kind == 4:
        stream, value = uniform(stream)
        expected = numpy_stream.uniform(-0.05, 0.05)
      else:
        stream, value = randint(stream, 1)  # draws nothing
        expected = numpy_stream.randint(1)
      self.assertEqual(float(value), float(expected), f'draw {i}, kind {kind}')

  def test_vmapped_streams_are_independent_numpy_streams(self):
    seeds = [0, 1, 2, 3]
    with jax.enable_x64(True):
      streams = jax.tree_util.tree_map(
          lambda *leaves: jnp.stack(leaves),
          *[numpy_random.from_seed(s) for s in seeds])
    _, values = jax.jit(jax.vmap(lambda s: jax.lax.scan(
        lambda s, _: numpy_random.standard_normal(s), s, None,
        length=500)))(streams)
    for row, seed in enumerate(seeds):
      np.testing.assert_array_equal(values[row],
                                    np.random.RandomState(seed).randn(500))

  def test_blocks_of_words_equal_single_draws_across_cycles(self):
    for seed in range(3):
      stream, numpy_stream = (numpy_random.from_seed(seed),
                              np.random.RandomState(seed))
      for count in (227, 1, 100, 227, 227, 5, 226, 227, 227, 0, 227):
        stream, words = jax.jit(
            lambda s, n=count: numpy_random.random_uint32_block(s, n))(stream)
        np.testing.assert_array_equal(
            words, numpy_stream.randint(0, 2**32, size=count,
                                        dtype=np.uint64))
    with self.assertRaisesRegex(ValueError, r'`count` must be in \[0, 227\]'):
      numpy_random.random_uint32_block(stream, 228)

  @parameterized.parameters(0, 1, 3, 40, 113, 114, 300)
  def test_binomial_arrays(self, size):
    stream, numpy_stream = (numpy_random.from_seed(9),
                            np.random.RandomState(9))
    draw = jax.jit(lambda s: numpy_random.binomial_one_half_array(s, size))
    for _ in range(30):
      stream, bits = draw(stream)
      np.testing.assert_array_equal(bits,
                                    numpy_stream.binomial(1, 0.5, size))


class ExactArithmeticTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    rng = np.random.RandomState(0)
    count = 200_000
    self.a = rng.randn(count) * np.exp(rng.uniform(-40, 40, count))
    self.b = rng.randn(count) * np.exp(rng.uniform(-40, 40, count))
    self.c = rng.randn(count)

  @chex.variants(with_jit=True, without_jit=True)
  def test_products_and_sums_round_as_numpy(self):
    mul = self.variant(lambda a, b, c: c + exact.mul(a, b))
    with jax.enable_x64(True):
      np.testing.assert_array_equal(mul(self.a, self.b, self.c),
                                    self.c + self.a * self.b)
      # Constants and special values.
      special = np.array([0., -0., 1., -1., 0.1, 2.0**-1000, 1e300, np.inf])
      with np.errstate(invalid='ignore'):  # 0 * inf is NaN, as intended
        expected = special * special[::-1]
      np.testing.assert_array_equal(
          self.variant(exact.mul)(special, special[::-1]), expected)

  @chex.variants(with_jit=True, without_jit=True)
  def test_quotients_round_as_numpy(self):
    with jax.enable_x64(True):
      np.testing.assert_array_equal(self.variant(exact.div)(self.a, self.b),
                                    self.a / self.b)
      for constant in (3.0, 1.1, 100.0, 10.0, 255.0):
        np.testing.assert_array_equal(
            self.variant(lambda a: exact.div(a, constant))(self.a),
            self.a / constant, f'/ {constant}')
      integers = np.arange(1, 5000, dtype=np.float64)
      np.testing.assert_array_equal(
          self.variant(lambda a: exact.div(a, 1000.0))(integers),
          integers / 1000.0)


if __name__ == '__main__':
  absltest.main()
