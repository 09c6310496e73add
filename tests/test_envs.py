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


class MountainCarTest(parameterized.TestCase):
  """The JAX mountain car against bsuite's, from the same start position."""

  @parameterized.parameters(False, True)
  def test_matches_bsuite_step_by_step(self, jit):
    from bsuite.environments import mountain_car  # pylint: disable=g-import-not-at-top
    from pe_jax.envs import mountain_car as jax_mountain_car  # pylint: disable=g-import-not-at-top
    env = jax_mountain_car.MountainCar(max_steps=300)
    step = jax.jit(env.step) if jit else env.step
    reference = mountain_car.MountainCar(max_steps=300, seed=0)
    rng = np.random.default_rng(1)
    episode_lengths = {'bsuite': [], 'jax': []}
    state = None
    for episode in range(3):
      # Given the previous state, the raw return carries over.
      state, jax_timestep = env.reset(jax.random.PRNGKey(episode), state)
      reference.reset()
      # bsuite's start from the JAX reset key's position.
      reference._position = float(state.position)  # pylint: disable=protected-access
      timestep = reference._get_observation()  # pylint: disable=protected-access
      np.testing.assert_allclose(jax_timestep.observation, timestep,
                                 rtol=1e-6)
      jax_done = bsuite_done = None
      for t in range(300):
        # Pump energy (push along the velocity) on two episodes, random on one:
        # the pumping ones reach the goal, the random one hits max_steps.
        if episode < 2:
          action = 2 if reference._velocity >= 0 else 0  # pylint: disable=protected-access
        else:
          action = int(rng.integers(0, 3))
        if bsuite_done is None:
          reference_step = reference.step(action)
          if reference_step.last():
            bsuite_done = t + 1
        if jax_done is None:
          state, jax_timestep = step(state, action)
          if bsuite_done is None or t + 1 == bsuite_done:
            np.testing.assert_allclose(jax_timestep.observation,
                                       reference_step.observation,
                                       atol=1e-4, err_msg=f'step {t}')
            self.assertEqual(float(jax_timestep.reward), -1.0)
          if int(jax_timestep.step_type) == 2:
            jax_done = t + 1
            self.assertEqual(float(jax_timestep.discount), 0.0)
          else:
            self.assertEqual(float(jax_timestep.discount), 1.0)
        if jax_done and bsuite_done:
          break
      episode_lengths['bsuite'].append(bsuite_done)
      episode_lengths['jax'].append(jax_done)
    self.assertEqual(episode_lengths['jax'], episode_lengths['bsuite'])
    self.assertLess(max(episode_lengths['jax'][:2]), 300)  # Goal reached.
    self.assertEqual(episode_lengths['jax'][2], 300)       # Time limit.
    self.assertEqual(float(state.raw_return), -sum(episode_lengths['jax']))

  def test_start_positions_and_vmap(self):
    from pe_jax.envs import mountain_car as jax_mountain_car  # pylint: disable=g-import-not-at-top
    env = jax_mountain_car.MountainCar()
    keys = jax.random.split(jax.random.PRNGKey(0), 500)
    states, timesteps = jax.vmap(lambda k: env.reset(k))(keys)
    self.assertTrue(np.all((states.position >= -0.6) &
                           (states.position <= -0.4)))
    self.assertGreater(float(np.std(states.position)), 0.05)
    self.assertEqual(timesteps.observation.shape, (500, 1, 3))
    states, timesteps = jax.vmap(env.step)(states, jnp.full(500, 2))
    np.testing.assert_array_equal(timesteps.step_type, 1)
    with self.assertRaisesRegex(ValueError, '`max_steps` must be an int >= 1'):
      jax_mountain_car.MountainCar(max_steps=0)


if __name__ == '__main__':
  absltest.main()
