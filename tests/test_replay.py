"""The replay buffers, NumPy and JAX: n-step returns, capacity, sampling."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
import jax.numpy as jnp
import numpy as np

from pe_jax import replay
from tests import numpy_replay


class ReplayTest(absltest.TestCase):

  def _filled(self, n_step, steps, capacity=100, discounts=None):
    buffer = numpy_replay.ReplayBuffer(capacity, (2,), discount_factor=0.5,
                                 n_step=n_step)
    for t in range(steps):
      d = 1.0 if discounts is None else discounts[t]
      buffer.add(np.full(2, t), t % 3, float(t), d, np.full(2, t + 1))
    return buffer

  def test_one_step_sample(self):
    buffer = self._filled(1, 10)
    batch = buffer.sample(64, np.random.default_rng(0))
    np.testing.assert_array_equal(batch.reward, batch.observation[:, 0])
    np.testing.assert_array_equal(batch.next_observation[:, 0],
                                  batch.observation[:, 0] + 1)
    np.testing.assert_allclose(batch.discount, 0.5)
    self.assertEqual(batch.observation.shape, (64, 2))

  def test_ring_overwrites_oldest(self):
    buffer = self._filled(1, 25, capacity=10)
    self.assertLen(buffer, 10)
    batch = buffer.sample(500, np.random.default_rng(1))
    self.assertEqual(set(batch.reward.astype(int)), set(range(15, 25)))

  def test_n_step_returns_by_hand(self):
    # Rewards 0..5, episode ends after step 3 (discount 0 there).
    buffer = self._filled(3, 6, discounts=[1, 1, 1, 0, 1, 1])
    batch = buffer.sample(400, np.random.default_rng(2))
    expected = {
        0: (0 + 0.5 * 1 + 0.25 * 2, 0.125, 3),
        1: (1 + 0.5 * 2 + 0.25 * 3, 0.0, 4),
        2: (2 + 0.5 * 3, 0.0, 5),
        3: (3.0, 0.0, 6),
    }
    # The window never runs past the newest transition: starts 4, 5 excluded.
    self.assertEqual(set(batch.observation[:, 0].astype(int)), set(expected))
    for start, (ret, disc, nxt) in expected.items():
      rows = batch.observation[:, 0] == start
      np.testing.assert_allclose(batch.reward[rows], ret)
      np.testing.assert_allclose(batch.discount[rows], disc)
      np.testing.assert_allclose(batch.next_observation[rows, 0], nxt)

  def test_reproducible(self):
    buffer = self._filled(1, 50)
    a = buffer.sample(8, np.random.default_rng(3))
    b = buffer.sample(8, np.random.default_rng(3))
    np.testing.assert_array_equal(a.observation, b.observation)

  def test_errors(self):
    buffer = self._filled(3, 2)
    with self.assertRaisesRegex(ValueError, 'holds 2.*3-step'):
      buffer.sample(4, np.random.default_rng(0))
    with self.assertRaisesRegex(ValueError, 'capacity'):
      numpy_replay.ReplayBuffer(0, (2,))
    with self.assertRaisesRegex(ValueError, 'n_step'):
      numpy_replay.ReplayBuffer(4, (2,), n_step=5)


class _FixedPositions:
  """Stands in for a NumPy Generator: `integers` returns given positions."""

  def __init__(self, positions):
    self._positions = np.asarray(positions)

  def integers(self, low, high, size):
    assert low == 0 and np.all(self._positions < high), (self._positions, high)
    assert size == len(self._positions)
    return self._positions


class JaxReplayTest(parameterized.TestCase):
  """The pure JAX ring buffer against the NumPy `ReplayBuffer`."""

  def _both(self, n_step, steps, capacity, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    reference = numpy_replay.ReplayBuffer(capacity, (3,), discount_factor=0.9,
                                    n_step=n_step)
    state = replay.replay_init(capacity, (3,), dtype)
    add = jax.jit(replay.replay_add)
    for _ in range(steps):
      observation = rng.integers(0, 5, 3).astype(np.float32)
      next_observation = rng.integers(0, 5, 3).astype(np.float32)
      action = int(rng.integers(0, 4))
      reward = float(rng.normal())
      discount = float(rng.random() < 0.8)  # Episode ends: discount 0.
      reference.add(observation, action, reward, discount, next_observation)
      state = add(state, observation, action, reward, discount,
                  next_observation)
    return reference, state

  @parameterized.product(n_step=(1, 3), steps=(5, 17, 40), jit=(False, True))
  def test_same_samples_as_numpy(self, n_step, steps, jit):
    reference, state = self._both(n_step, steps, capacity=12, seed=steps)
    available = reference.num_sampleable
    self.assertEqual(int(replay.replay_num_sampleable(state, n_step)),
                     available)
    self.assertEqual(int(state.size), len(reference))
    positions = np.random.default_rng(0).integers(0, available, 64)
    expected = reference.sample(64, _FixedPositions(positions))
    sample_at = replay.replay_sample_at
    if jit:
      sample_at = jax.jit(sample_at, static_argnums=(2, 3))
    got = sample_at(state, jnp.asarray(positions), 0.9, n_step)
    for name, want, have in zip(replay.Transition._fields, expected, got):
      np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-6,
                                 err_msg=name)

  def test_stores_observations_in_their_dtype(self):
    _, state = self._both(1, 20, capacity=8, seed=1, dtype=np.uint8)
    self.assertEqual(state.observation.dtype, jnp.uint8)
    batch = replay.replay_sample(state, jax.random.PRNGKey(0), 4, 0.9)
    self.assertEqual(batch.observation.dtype, jnp.float32)

  def test_sample_draws_only_sampleable_positions(self):
    # 3-step returns over 5 stored transitions: only the oldest 3 start one.
    state = replay.replay_init(10, (1,))
    for t in range(5):
      state = replay.replay_add(state, np.array([t]), 0, float(t), 1.0,
                                np.array([t + 1]))
    batch = replay.replay_sample(state, jax.random.PRNGKey(0), 500, 1.0, 3)
    self.assertEqual(set(np.asarray(batch.observation[:, 0]).astype(int)),
                     {0, 1, 2})
    np.testing.assert_allclose(batch.reward, 3 * batch.observation[:, 0] + 3)

  def test_vmaps_over_buffers(self):
    states = jax.vmap(lambda _: replay.replay_init(6, (2,)))(jnp.arange(3))
    add = jax.vmap(replay.replay_add)
    observations = jnp.arange(6.).reshape(3, 2)
    states = add(states, observations, jnp.array([0, 1, 2]), jnp.ones(3),
                 jnp.ones(3), observations + 1)
    np.testing.assert_array_equal(states.size, [1, 1, 1])
    np.testing.assert_array_equal(states.observation[:, 0], observations)

  def test_bad_capacity(self):
    with self.assertRaisesRegex(ValueError, 'capacity'):
      replay.replay_init(0, (2,))


if __name__ == '__main__':
  absltest.main()
