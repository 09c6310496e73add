"""Networks: ensembles with priors, the one-hot lookup, the pixel torso."""

from absl.testing import absltest
import jax
import jax.numpy as jnp
import numpy as np

from pe_jax import networks


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


def _alternating_power_iteration(matrix, iterations):
  """Miyato et al.'s iterations in float64 NumPy: u = W v / |.|, v = W^T u /
  |.| from v = ones / sqrt(M); sigma = u^T W v, its gradient u v^T."""
  v = np.ones(matrix.shape[1]) / np.sqrt(matrix.shape[1])
  for _ in range(iterations):
    u = matrix @ v
    u /= np.linalg.norm(u)
    v = matrix.T @ u
    v /= np.linalg.norm(v)
  return u @ matrix @ v, np.outer(u, v)


class SpectralNormTest(absltest.TestCase):

  def test_equals_alternating_iterations_and_approaches_the_svd(self):
    rng = np.random.default_rng(0)
    # Conv3x3's [9 C_in, C_out] kernels (C_in 4, C_out 4; 32 and 32) and a
    # wide matrix.
    for shape in ((36, 4), (288, 32), (5, 7)):
      matrix = rng.normal(size=shape)
      sigma, grad = jax.jit(jax.value_and_grad(
          lambda w: networks.spectral_norm(w, 10)))(
              jnp.asarray(matrix, jnp.float32))
      want, want_grad = _alternating_power_iteration(matrix, 10)
      np.testing.assert_allclose(float(sigma), want, rtol=1e-5)
      np.testing.assert_allclose(grad, want_grad, rtol=1e-3, atol=1e-5)
      top = np.linalg.svd(matrix, compute_uv=False)[0]
      self.assertLessEqual(float(sigma), top * (1 + 1e-6))
      self.assertGreater(float(sigma), 0.99 * top)

  def test_one_iteration_and_refused_zero(self):
    matrix = np.random.default_rng(1).normal(size=(6, 3))
    np.testing.assert_allclose(
        float(networks.spectral_norm(jnp.asarray(matrix, jnp.float32), 1)),
        _alternating_power_iteration(matrix, 1)[0], rtol=1e-5)
    with self.assertRaisesRegex(ValueError, 'iterations must be >= 1'):
      networks.spectral_norm(jnp.ones((3, 3)), 0)


if __name__ == '__main__':
  absltest.main()
