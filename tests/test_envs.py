"""JAX environments against bsuite's own, step by step."""

from absl.testing import absltest
from absl.testing import parameterized
from bsuite.environments import deep_sea
import jax
import jax.numpy as jnp
import numpy as np

from pe_jax.envs import deep_sea as jax_deep_sea


class DeepSeaTest(parameterized.TestCase):

  @parameterized.product(size=(1, 4, 10), mapping_seed=(0, 7),
                         jit=(False, True))
  def test_matches_bsuite_step_by_step(self, size, mapping_seed, jit):
    reference = deep_sea.DeepSea(size=size, mapping_seed=mapping_seed)
    env = jax_deep_sea.DeepSea(size, mapping_seed=mapping_seed)
    step = jax.jit(env.step) if jit else env.step
    reset = jax.jit(env.reset) if jit else env.reset
    rng = np.random.default_rng(size + 10 * mapping_seed)
    follow = 0.9  # Mostly the 'right' action, so treasures are found too.
    timestep = reference.reset()
    state, jax_timestep = reset(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(jax_timestep.observation,
                                  timestep.observation)
    for t in range(40 * size + 20):
      if rng.random() < follow:
        row = min(reference._row, size - 1)
        action = int(reference._action_mapping[row, reference._column])
      else:
        action = int(rng.integers(0, 2))
      timestep = reference.step(action)
      state, jax_timestep = step(state, action)
      message = f'step {t}'
      np.testing.assert_array_equal(jax_timestep.observation,
                                    timestep.observation, err_msg=message)
      self.assertAlmostEqual(float(jax_timestep.reward), timestep.reward,
                             places=6, msg=message)
      self.assertEqual(float(jax_timestep.discount), timestep.discount)
      self.assertEqual(int(jax_timestep.step_type), int(timestep.step_type))
      info = reference.bsuite_info()
      self.assertEqual(int(state.total_bad_episodes),
                       info['total_bad_episodes'], message)
      self.assertEqual(float(state.denoised_return), info['denoised_return'])
      if timestep.last():
        timestep = reference.reset()
        state, jax_timestep = reset(None, state)
        np.testing.assert_array_equal(jax_timestep.observation,
                                      timestep.observation)
    self.assertGreater(info['denoised_return'], 0)  # Treasure was reached.
    if size > 1:
      self.assertGreater(info['total_bad_episodes'], 0)

  def test_mapping_is_bsuites(self):
    reference = deep_sea.DeepSea(size=6, mapping_seed=3)
    np.testing.assert_array_equal(
        jax_deep_sea.bsuite_action_mapping(6, 3), reference._action_mapping)
    env = jax_deep_sea.DeepSea(6, mapping_seed=3)
    state, _ = env.reset(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(state.action_mapping,
                                  reference._action_mapping)

  def test_stochastic_law(self):
    # 'right' fails w.p. 1/N; the end cells of the last row add N(0, 1).
    size, n = 4, 20000
    env = jax_deep_sea.DeepSea(size, deterministic=False, mapping_seed=0)
    state, _ = env.reset(jax.random.PRNGKey(0))
    right = state.action_mapping[0, 0]
    keys = jax.random.split(jax.random.PRNGKey(1), n)
    moved, _ = jax.vmap(lambda k: env.step(state, right, k))(keys)
    failure_rate = 1.0 - float(jnp.mean(moved.column))
    self.assertAlmostEqual(failure_rate, 1.0 / size, delta=0.015)
    # Last row, column 0, 'left': reward is pure noise.
    corner = state._replace(row=jnp.int32(size - 1), column=jnp.int32(0))
    left = 1 - corner.action_mapping[size - 1, 0]
    _, timesteps = jax.vmap(lambda k: env.step(corner, left, k))(keys)
    self.assertAlmostEqual(float(jnp.mean(timesteps.reward)), 0.0, delta=0.04)
    self.assertAlmostEqual(float(jnp.std(timesteps.reward)), 1.0, delta=0.04)
    # Bsuite's stochastic variant, same statistics from its own rng.
    reference = deep_sea.DeepSea(size=size, deterministic=False, seed=0,
                                 mapping_seed=0)
    failures = 0
    for _ in range(4000):
      reference.reset()
      reference.step(int(reference._action_mapping[0, 0]))
      failures += reference._column == 0
    self.assertAlmostEqual(failures / 4000, failure_rate, delta=0.03)

  def test_vmaps_over_mappings(self):
    env = jax_deep_sea.DeepSea(5)
    mappings = jnp.stack([jax_deep_sea.bsuite_action_mapping(5, s)
                          for s in range(3)])
    states, timesteps = jax.vmap(
        lambda m: env.reset(jax.random.PRNGKey(0), action_mapping=m))(mappings)
    np.testing.assert_array_equal(states.action_mapping, mappings)
    self.assertEqual(timesteps.observation.shape, (3, 5, 5))

  def test_bad_size(self):
    with self.assertRaisesRegex(ValueError, 'size'):
      jax_deep_sea.DeepSea(0)


if __name__ == '__main__':
  absltest.main()
