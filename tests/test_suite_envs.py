"""The exact bsuite ports (`pe_jax.envs.load`) against bsuite's own classes.

For the same actions, a port's timesteps (step type, reward, discount,
observation values and shape) and `bsuite_info()` counters must equal
bsuite's environment seeded as the bsuite-loop runner seeds it
(`results.load_seeded`), step by step, across episodes and resets; under
`jit`, `vmap` over ids and seeds, and through `as_dm_env` in a Python
loop; and `as_dm_env` passes dm_env's `EnvironmentTestMixin`.
"""

import os
import tempfile

from absl.testing import absltest
from absl.testing import parameterized
from bsuite import sweep
from dm_env import test_utils
import jax
import jax.numpy as jnp
import numpy as np

from experiments.lib import results
from pe_jax import envs
from pe_jax.envs.suite import mnist
from pe_jax.envs.suite import registry
from tests import agent_testing
from tests import bsuite_offline

EXPERIMENTS = sorted({bsuite_id.split('/')[0] for bsuite_id in sweep.SWEEP})


def setUpModule():
  global _MNIST
  _MNIST = tempfile.TemporaryDirectory()
  bsuite_offline.write_fake_mnist(_MNIST.name)
  bsuite_offline.datasets_load_mnist_from(_MNIST.name)
  mnist.DEFAULT_DIRECTORY = _MNIST.name


def tearDownModule():
  bsuite_offline.restore_datasets_load_mnist()
  _MNIST.cleanup()


def at_xla_defaults(check: str, *args) -> str:
  """Runs `tests.suite_checks.<check>(*args)` in a child process compiling
  at XLA's defaults (as experiments do); its output, or a failure with its
  error."""
  done = agent_testing.run_code(
      'import ast, sys; from tests import suite_checks; '
      f'suite_checks.{check}(*ast.literal_eval(sys.argv[1]))', repr(args))
  if done.returncode:
    raise AssertionError(f'{check}{args}:\n{done.stderr[-3000:]}')
  return done.stdout


class EqualToBsuiteTest(parameterized.TestCase):

  @parameterized.parameters(*EXPERIMENTS)
  def test_random_actions_give_bsuite_s_timesteps(self, experiment):
    self.assertIn('6 rollouts equal', at_xla_defaults('random_actions',
                                                      experiment))

  @parameterized.parameters(('cartpole/0', 1001), ('cartpole_noise/7', 1001),
                            ('cartpole_swingup/11', None),
                            ('mountain_car/3', None),
                            ('mountain_car_noise/9', None))
  def test_scripted_lockstep_through_the_dm_env_adapter(self, bsuite_id,
                                                        length):
    printed = at_xla_defaults('lockstep', bsuite_id)
    lengths = [int(n) for n in
               printed.strip().splitlines()[-1].strip('[]').split(',')]
    self.assertGreaterEqual(len(lengths), 2)
    if length is not None:  # balanced to bsuite's float64 time limit
      self.assertEqual(lengths[0], length)
    elif bsuite_id.startswith('mountain_car'):
      self.assertLess(max(lengths), 1000)  # the goal, not the time limit

  def test_float64_arithmetic_and_streams_at_xla_defaults(self):
    self.assertIn('arithmetic equal', at_xla_defaults('arithmetic'))


class LoadTest(parameterized.TestCase):

  def test_every_id_has_bsuite_s_specs_and_episode_count(self):
    self.assertLen(sweep.SWEEP, 468)
    for bsuite_id in sweep.SWEEP:
      ours, theirs = envs.load(bsuite_id), results.load_seeded(bsuite_id, 0)
      self.assertEqual(ours.num_episodes, theirs.bsuite_num_episodes,
                       bsuite_id)
      self.assertEqual(ours.observation_shape,
                       theirs.observation_spec().shape, bsuite_id)
      self.assertEqual(ours.num_actions, theirs.action_spec().num_values,
                       bsuite_id)
      self.assertEqual(tuple(ours.info_names),
                       tuple(theirs.bsuite_info()), bsuite_id)

  def test_bad_ids_and_seeds_are_refused_in_one_line(self):
    with self.assertRaisesRegex(ValueError, "Unknown bsuite id 'catch/99'"):
      envs.load('catch/99')
    for seed in (-1, 1.5, True, '0'):
      with self.assertRaisesRegex(ValueError, '`seed` must be an int >= 0'):
        envs.load('catch/0', seed=seed)
    with self.assertRaisesRegex(ValueError, r'`seed` must be an int in '
                                r'\[0, 100000\) for catch/3'):
      envs.load('catch/3', seed=registry.REPLICA_SEED_STRIDE)
    self.assertEqual(envs.load('deep_sea/3', seed=10**6).seed, 10**6)

  def test_replicas_get_distinct_seeds_and_fixed_seeds_stay(self):
    for seed in (0, 1):
      for experiment in EXPERIMENTS:
        ids = [i for i in sweep.SWEEP if i.split('/')[0] == experiment]
        got = [registry.environment_seed(i, seed) for i in ids]
        if experiment in ('bandit', 'discounting_chain'):
          self.assertEqual(set(got), {None}, experiment)  # nothing random
        elif experiment in ('memory_len', 'memory_size',
                            'umbrella_distract'):
          self.assertEqual(set(got), {0}, experiment)  # bsuite's loader's
        elif experiment.startswith('deep_sea'):
          self.assertEqual(set(got), {seed}, experiment)  # one id per size
        else:  # replicas: independent runs, id 0 keeps the agent's seed
          self.assertLen(set(got), len(ids), experiment)
          self.assertEqual(got[0], seed, experiment)
    # Another agent seed gives another replica, not one of these.
    self.assertNotEqual(registry.environment_seed('catch/1', 0),
                        registry.environment_seed('catch/0', 1))

  def test_replicas_of_one_level_roll_out_differently(self):
    def starts(bsuite_id):
      env = envs.as_dm_env(envs.load(bsuite_id, seed=0))
      columns = []
      for _ in range(8):  # catch's ball starts in a random column
        columns.append(int(np.argmax(env.reset().observation[0])))
        length = 1
        while not env.step(0).last():
          length += 1
        self.assertEqual(length, 9)  # the ball falls 9 rows
      return columns
    self.assertNotEqual(starts('catch/0'), starts('catch/1'))
    self.assertEqual(starts('catch/1'), starts('catch/1'))
    noise = [envs.load(f'catch_noise/{k}', seed=0).seed for k in range(4)]
    self.assertLen(set(noise), 4)  # one noise level's 4 replicas

  def test_adapters_of_one_program_share_its_compilation(self):
    # Two noise levels of catch_noise, interleaved: one compiled step
    # serves both, and each adapter still gives its own bsuite timesteps.
    ids = ('catch_noise/0', 'catch_noise/9')
    ours = [envs.as_dm_env(envs.load(i, seed=3)) for i in ids]
    theirs = [results.load_seeded(i, 3) for i in ids]
    self.assertIs(ours[0]._step, ours[1]._step)  # pylint: disable=protected-access
    actions = np.random.RandomState(0).randint(3, size=60)
    for mine, bsuite_env in zip(ours, theirs):
      np.testing.assert_array_equal(mine.reset().observation,
                                    bsuite_env.reset().observation)
    rewards = [[], []]
    for action in actions:
      for k, (mine, bsuite_env) in enumerate(zip(ours, theirs)):
        step, expected = mine.step(action), bsuite_env.step(action)
        self.assertEqual((step.step_type, step.reward, step.discount),
                         (expected.step_type, expected.reward,
                          expected.discount), ids[k])
        np.testing.assert_array_equal(step.observation, expected.observation)
        self.assertEqual(mine.bsuite_info(), bsuite_env.bsuite_info())
        rewards[k].append(step.reward)
    self.assertNotEqual(rewards[0], rewards[1])  # other noise, other rewards
    self.assertEqual(ours[0]._step._cache_size(), 1)  # pylint: disable=protected-access

  def test_a_state_cast_to_float32_is_refused(self):
    env = envs.load('cartpole/0')
    cast = jax.tree_util.tree_map(np.asarray, env.init())  # NumPy float64
    with self.assertRaisesRegex(TypeError, "state leaves of dtype.*float32"):
      jax.jit(env.step)(cast, 0)
    state, _ = jax.jit(env.step)(env.init(), 0)  # JAX arrays stay float64
    self.assertEqual(state.x.dtype, jnp.float64)

  def test_missing_mnist_files_are_named_and_nothing_downloads(self):
    with tempfile.TemporaryDirectory() as empty:
      env = envs.load('mnist/0', mnist_dir=empty)
      # Its shape is known without the files: agents are built (and the
      # committed units' configs checked) on machines that lack them.
      self.assertEqual(env.observation_shape, (28, 28))
      with self.assertRaises(mnist.MissingMNISTError) as raised:
        env.init()
      message = str(raised.exception)
      self.assertNotIn('\n', message)
      for name in mnist.FILES:
        self.assertIn(name, message)
      self.assertIn(empty, message)
      self.assertEqual(os.listdir(empty), [])


def _mixin_case(bsuite_id):
  """dm_env's own interface tests on the port of `bsuite_id`."""
  class Case(test_utils.EnvironmentTestMixin, absltest.TestCase):

    def make_object_under_test(self):
      return envs.as_dm_env(envs.load(bsuite_id, seed=1))

    def make_action_sequence(self):
      rng = np.random.RandomState(0)
      num_actions = self.environment.action_spec().num_values
      for _ in range(150):  # ends several episodes of the short ones
        yield rng.randint(num_actions)

  Case.__name__ = f'EnvironmentTestMixin_{bsuite_id.replace("/", "_")}'
  return Case


for _experiment in EXPERIMENTS:
  _case = _mixin_case(f'{_experiment}/1')
  globals()[_case.__name__] = _case
del _case, _experiment


if __name__ == '__main__':
  absltest.main()
