"""Replay buffer and network helpers."""

from absl.testing import absltest
from absl.testing import parameterized
import chex
import jax
import jax.numpy as jnp
import numpy as np

from pe_jax import networks
from pe_jax import replay


class ReplayTest(absltest.TestCase):

  def _filled(self, n_step, steps, capacity=100, discounts=None):
    buffer = replay.ReplayBuffer(capacity, (2,), discount_factor=0.5,
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
      replay.ReplayBuffer(0, (2,))
    with self.assertRaisesRegex(ValueError, 'n_step'):
      replay.ReplayBuffer(4, (2,), n_step=5)


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
    reference = replay.ReplayBuffer(capacity, (3,), discount_factor=0.9,
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


class NetworksTest(absltest.TestCase):

  def test_ensemble_equals_members_one_by_one(self):
    net = networks.DistributionalMLP((16,), num_actions=3, num_atoms=5)
    obs = jnp.arange(6.0).reshape(2, 3)
    params = networks.init_ensemble(net, jax.random.PRNGKey(0), 4, obs)
    prior = networks.init_ensemble(net, jax.random.PRNGKey(1), 4, obs)
    scales = jnp.array([0.0, 1.0, 2.0, 3.0])
    out = networks.apply_ensemble(net, params, prior, scales, obs)
    self.assertEqual(out.shape, (4, 3, 5))
    self.assertEqual(networks.num_members(params), 4)
    for m in range(4):
      member = jax.tree_util.tree_map(lambda x, m=m: x[m], params)
      member_prior = jax.tree_util.tree_map(lambda x, m=m: x[m], prior)
      want = net.apply(member, obs) + scales[m] * net.apply(member_prior, obs)
      np.testing.assert_allclose(out[m], want, rtol=1e-5, atol=1e-5)
    # Members differ: they were initialised from different keys.
    self.assertGreater(float(jnp.abs(out[0] - out[1]).max()), 1e-3)

  def test_prior_members_match_zero_scales(self):
    net = networks.DistributionalMLP((16,), num_actions=3, num_atoms=5)
    obs = jnp.arange(6.0).reshape(2, 3)
    params = networks.init_ensemble(net, jax.random.PRNGKey(0), 4, obs)
    prior = networks.init_ensemble(net, jax.random.PRNGKey(1), 4, obs)
    dense = networks.apply_ensemble(net, params, prior,
                                    jnp.array([0.0, 2.0, 0.0, 3.0]), obs)
    kept = jax.tree_util.tree_map(lambda x: x[np.array([1, 3])], prior)
    sparse = networks.apply_ensemble(net, params, kept, jnp.array([2.0, 3.0]),
                                     obs, prior_members=(1, 3))
    np.testing.assert_allclose(sparse, dense, rtol=1e-6, atol=1e-6)
    # Members 0 and 2 carry no prior at all.
    plain = networks.apply_ensemble(net, params, None, None, obs)
    np.testing.assert_array_equal(sparse[np.array([0, 2])],
                                  plain[np.array([0, 2])])
    self.assertGreater(float(jnp.abs(sparse[1] - plain[1]).max()), 1e-3)

  def test_batch_dims_match_one_observation_at_a_time(self):
    net = networks.DistributionalMLP((16,), num_actions=3, num_atoms=5)
    batch = jnp.arange(60.0).reshape(2, 5, 2, 3) / 60.0  # batch_shape (2, 5)
    params = networks.init_ensemble(net, jax.random.PRNGKey(0), 4, batch[0, 0])
    prior = networks.init_ensemble(net, jax.random.PRNGKey(1), 2, batch[0, 0])
    scales = jnp.array([2.0, 3.0])
    got = networks.apply_ensemble(net, params, prior, scales, batch,
                                  prior_members=(1, 3), batch_dims=2)
    self.assertEqual(got.shape, (4, 2, 5, 3, 5))
    for i in range(2):
      for j in range(5):
        want = networks.apply_ensemble(net, params, prior, scales,
                                       batch[i, j], prior_members=(1, 3))
        np.testing.assert_allclose(got[:, i, j], want, rtol=1e-5, atol=1e-6)
    self.assertGreater(float(jnp.abs(got[:, 0, 0] - got[:, 1, 4]).max()),
                       1e-3)

  def test_no_gradient_into_prior(self):
    net = networks.DistributionalMLP((8,), num_actions=2, num_atoms=1)
    obs = jnp.ones(3)
    params = net.init(jax.random.PRNGKey(0), obs)
    prior = net.init(jax.random.PRNGKey(1), obs)
    grad = jax.grad(lambda pp: jnp.sum(networks.apply_with_prior(
        net, params, pp, 5.0, obs)))(prior)
    for leaf in jax.tree_util.tree_leaves(grad):
      np.testing.assert_array_equal(leaf, 0.0)

  def test_he_initialisation_scale(self):
    net = networks.MLP((), output_size=4000)
    params = net.init(jax.random.PRNGKey(0), jnp.ones(500))
    kernel = params['params']['Dense_0']['kernel']
    # Truncated normal at 2 std keeps the He variance 2 / fan_in.
    np.testing.assert_allclose(jnp.var(kernel), 2.0 / 500, rtol=0.05)
    self.assertLessEqual(float(jnp.abs(kernel).max()),
                         2.0 * np.sqrt(2.0 / 500) / .87962566103423978 + 1e-6)


if __name__ == '__main__':
  absltest.main()


class OneHotInputTest(chex.TestCase):
  """The 'one_hot_mlp' torso against flax's own `nn.Dense` MLP."""

  def _inputs(self):
    grid = np.zeros((5, 25), np.float32)
    grid[0, 7] = 1.0     # one-hot
    grid[1, 0] = 1.0     # first entry
    grid[2, 24] = 1.0    # last entry
    grid[3, 11] = 3.0    # one nonzero entry, not 1
    return jnp.asarray(grid)  # grid[4]: all zeros (deep sea's last obs)

  @chex.variants(with_jit=True, without_jit=True)
  def test_outputs_and_gradients_equal_dense(self):
    dense = networks.DistributionalMLP((16, 8), num_actions=2, num_atoms=3)
    lookup = networks.DistributionalMLP((16, 8), num_actions=2, num_atoms=3,
                                        one_hot_input=True)
    x = self._inputs()
    params = dense.init(jax.random.PRNGKey(0), x[0])
    # Same parameter tree and initial values from the same key.
    chex.assert_trees_all_equal(params,
                                lookup.init(jax.random.PRNGKey(0), x[0]))

    def loss(module, params):
      out = jax.vmap(module.apply, in_axes=(None, 0))(params, x)
      return jnp.sum(jnp.sin(out)), out

    grad = lambda module: self.variant(jax.grad(
        lambda p: loss(module, p), has_aux=True))(params)
    (g_dense, out_dense), (g_lookup, out_lookup) = grad(dense), grad(lookup)
    # Forward: the product's other terms are exact zeros.
    np.testing.assert_array_equal(out_lookup, out_dense)
    # Gradients: sums over the batch, in another order.
    chex.assert_trees_all_close(g_lookup, g_dense, rtol=1e-6, atol=1e-6)
    first_kernel = g_lookup['params']['MLP_0']['Dense_0']['kernel']
    # Rows of inputs the batch never had get no gradient.
    untouched = np.setdiff1d(np.arange(25), [0, 7, 11, 24])
    np.testing.assert_array_equal(first_kernel[untouched], 0.0)

  def test_each_learner_module_builds_the_lookup_for_the_torso(self):
    # Through the one builder every learner uses (`common.network`), from
    # each learner's own config: the 'one_hot_mlp' config must give the
    # lookup (same outputs on one-hot input, and the lookup's telltale on a
    # dense input, where only the product is right).
    import agents  # pylint: disable=g-import-not-at-top
    from agents import common  # pylint: disable=g-import-not-at-top
    from bsuite.environments import deep_sea  # pylint: disable=g-import-not-at-top
    env = deep_sea.DeepSea(4)
    one_hot = jnp.zeros((4, 4)).at[1, 2].set(1.0)
    dense = jnp.arange(16, dtype=jnp.float32).reshape(4, 4) / 16.0
    for name in ('boot_dqn', 'c51', 'pe_dqn'):
      modules = {}
      for torso in ('mlp', 'one_hot_mlp'):
        config = agents.make_pure(name, env.observation_spec(),
                                  env.action_spec(), torso=torso).config
        modules[torso] = common.network(config, 1,
                                        getattr(config, 'num_atoms', 1))
      params = modules['mlp'].init(jax.random.PRNGKey(0), one_hot)
      apply = lambda torso, x: modules[torso].apply(params, x)
      np.testing.assert_array_equal(apply('one_hot_mlp', one_hot),
                                    apply('mlp', one_hot), err_msg=name)
      # A dense input reads one kernel row (entry 1, the first nonzero).
      self.assertFalse(np.allclose(apply('one_hot_mlp', dense),
                                   apply('mlp', dense)), name)
      np.testing.assert_allclose(
          apply('one_hot_mlp', dense),
          apply('mlp', jnp.zeros(16).at[1].set(1 / 16).reshape(4, 4)),
          rtol=1e-6, atol=1e-6, err_msg=name)

  def test_config_torso_gives_the_lookup(self):
    import agents  # pylint: disable=g-import-not-at-top
    from agents import common  # pylint: disable=g-import-not-at-top
    self.assertIn('one_hot_mlp', common.TORSOS)
    kwargs = agents.for_jax_deep_sea('boot_dqn', {}, 'deep_sea', 10)
    self.assertEqual(kwargs['torso'], 'one_hot_mlp')
    kwargs = agents.for_jax_deep_sea('pe_dqn', {'torso': 'mlp'}, 'deep_sea',
                                     10)
    self.assertEqual(kwargs['torso'], 'mlp')
    self.assertIn('v_min', kwargs)


class PixelNetworkTest(chex.TestCase):
  """IMPALA torso, spectral normalisation and the shared-torso ensemble."""

  def test_spectral_norm_equals_numpy_power_iteration(self):
    matrix = np.random.default_rng(0).normal(size=(27, 8)).astype(np.float32)
    for iterations in (1, 3, 30):
      v = np.ones(8) / np.sqrt(8)
      for _ in range(iterations):
        u = matrix @ v
        u /= np.linalg.norm(u)
        v = matrix.T @ u
        v /= np.linalg.norm(v)
      expected = u @ matrix @ v
      got = networks.spectral_norm(jnp.asarray(matrix), iterations)
      np.testing.assert_allclose(float(got), expected, rtol=1e-5)
    # Enough iterations reach the largest singular value.
    np.testing.assert_allclose(
        float(networks.spectral_norm(jnp.asarray(matrix), 100)),
        np.linalg.svd(matrix, compute_uv=False)[0], rtol=1e-4)

  def test_spectral_conv_kernel_has_unit_norm(self):
    conv = networks.Conv3x3(6, spectral=True, power_iterations=100)
    x = jnp.asarray(np.random.default_rng(1).normal(size=(5, 5, 4)),
                    jnp.float32)
    params = conv.init(jax.random.PRNGKey(0), x)
    kernel = np.asarray(params['params']['kernel']).reshape(-1, 6)
    sigma = np.linalg.svd(kernel, compute_uv=False)[0]
    # The convolution is linear in its kernel: dividing the kernel by its
    # largest singular value divides the output (less the bias) by it.
    y = conv.apply(params, x)
    plain = networks.Conv3x3(6).apply(params, x)
    bias = np.asarray(params['params']['bias'])
    np.testing.assert_allclose(np.asarray(y) - bias,
                               (np.asarray(plain) - bias) / sigma, rtol=1e-4,
                               atol=1e-5)

  @chex.variants(with_jit=True, without_jit=True)
  def test_apply_heads_adds_each_members_prior_head(self):
    network = networks.ImpalaEnsemble(num_heads=3, num_actions=2, num_atoms=4,
                                      channels=(4,), hidden_size=8)
    batch = jnp.asarray(np.random.default_rng(3).integers(
        0, 256, (5, 12, 12, 2)), jnp.float32)
    params = network.init(jax.random.PRNGKey(0), batch[0])
    prior = network.init(jax.random.PRNGKey(1), batch[0])
    plain = np.stack([network.apply(params, o) for o in batch], 1)
    prior_out = np.stack([network.apply(prior, o) for o in batch], 1)
    # Members 0 and 2 carry priors (scales 2 and 0.5); member 1 none.
    got = self.variant(networks.apply_heads, static_argnums=(0, 5, 6))(
        network, params, prior, jnp.array([2.0, 0.5]), batch, (0, 2), 1)
    self.assertEqual(got.shape, (3, 5, 2, 4))  # [N, B, A, K]
    want = plain + np.array([2.0, 0.0, 0.5])[:, None, None, None] * prior_out
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # Every member's prior (prior_members None), and no prior at all.
    every = networks.apply_heads(network, params, prior,
                                 jnp.array([1.0, 1.0, 1.0]), batch[2])
    np.testing.assert_allclose(every, plain[:, 2] + prior_out[:, 2],
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        networks.apply_heads(network, params, None, None, batch, batch_dims=1),
        plain, rtol=1e-5, atol=1e-5)

  def test_impala_ensemble_shapes_and_independent_heads(self):
    network = networks.ImpalaEnsemble(num_heads=4, num_actions=5, num_atoms=7,
                                      channels=(4, 8), hidden_size=16,
                                      spectral=True)
    observation = jnp.asarray(np.random.default_rng(2).integers(
        0, 256, (42, 42, 6)), jnp.uint8)
    params = network.init(jax.random.PRNGKey(0), observation)
    out = jax.jit(network.apply)(params, observation)
    self.assertEqual(out.shape, (4, 5, 7))
    self.assertTrue(np.all(np.isfinite(np.asarray(out))))
    # Heads differ at initialisation; the torso's features are shared.
    self.assertGreater(float(jnp.std(out[0] - out[1])), 0.0)
    torso = networks.ImpalaTorso((4, 8), 16, True)
    features = torso.apply({'params': params['params']['ImpalaTorso_0']},
                           observation)
    self.assertEqual(features.shape, (16,))
    # 42 -> 21 -> 11 after two stride-2 pools: the dense layer's fan-in.
    self.assertEqual(
        params['params']['ImpalaTorso_0']['Dense_0']['kernel'].shape,
        (11 * 11 * 8, 16))
