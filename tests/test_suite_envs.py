"""The exact bsuite ports (`pe_jax.envs.load`) against bsuite's own classes.

For the same actions, a port's timesteps (step type, reward, discount,
observation values and shape) and `bsuite_info()` counters must equal
bsuite's environment seeded as the bsuite-loop runner seeds it
(`results.load_seeded`), step by step, across episodes and resets; under
`jit`, `vmap` over ids and seeds, and through `as_dm_env` in a Python
loop; and `as_dm_env` passes dm_env's `EnvironmentTestMixin`.
"""

import collections
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
from pe_jax.envs import suite
from pe_jax.envs.suite import mnist
from tests import bsuite_offline

EXPERIMENTS = sorted({bsuite_id.split('/')[0] for bsuite_id in sweep.SWEEP})
# Steps of each random action sequence: several episodes of each experiment
# (cartpole at random: about 10-30 steps an episode).
STEPS = collections.defaultdict(lambda: 600, {
    'cartpole': 1500, 'cartpole_noise': 1500, 'cartpole_scale': 1500,
    'cartpole_swingup': 2500, 'mountain_car': 3100,
    'mountain_car_noise': 3100, 'mountain_car_scale': 3100,
    'memory_len': 1500, 'umbrella_length': 1500, 'deep_sea': 1200,
    'deep_sea_stochastic': 1200})


def setUpModule():
  global _MNIST
  _MNIST = tempfile.TemporaryDirectory()
  bsuite_offline.write_fake_mnist(_MNIST.name)
  # Both bsuite's loader and the port read the generated files.
  bsuite_offline.datasets_load_mnist_from(_MNIST.name)
  mnist.DEFAULT_DIRECTORY = _MNIST.name


def tearDownModule():
  bsuite_offline.restore_datasets_load_mnist()
  _MNIST.cleanup()


def chosen_ids(experiment: str, count: int = 3):
  """`count` ids spread over the experiment, sharing the first one's
  program (so they step in one vmapped program)."""
  ids = [i for i in sweep.SWEEP if i.split('/')[0] == experiment]
  key = envs.load(ids[0]).program_key
  same = [i for i in ids if envs.load(i).program_key == key]
  return same[::max(1, len(same) // count)][:count]


def bsuite_rollout(bsuite_id: str, seed: int, actions):
  env = results.load_seeded(bsuite_id, seed)
  first = env.reset()
  steps = [(env.step(int(action)), env.bsuite_info()) for action in actions]
  return first, steps


def port_rollouts(env, states, actions):
  """Jitted, vmapped rollouts: (first timesteps, timesteps [B, T], infos)."""
  def rollout(state, actions):
    state, first = env.reset(state)

    def body(state, action):
      state, step = env.step(state, action)
      return state, (step, env.info(state))

    _, (steps, infos) = jax.lax.scan(body, state, actions)
    return first, steps, infos

  return jax.tree_util.tree_map(np.asarray, jax.jit(jax.vmap(rollout))(
      states, jnp.asarray(actions, jnp.int32)))


class EqualToBsuiteTest(parameterized.TestCase):

  def assert_equal_rollouts(self, bsuite_id, seed, first, steps, infos,
                            actions, row):
    theirs_first, theirs = bsuite_rollout(bsuite_id, seed, actions)
    label = f'{bsuite_id} seed {seed}'
    np.testing.assert_array_equal(first.observation[row],
                                  theirs_first.observation, label)
    step_types = np.array([int(step.step_type) for step, _ in theirs])
    first_steps = step_types == 0
    columns = {
        'step type': (steps.step_type[row], step_types),
        # FIRST timesteps: bsuite's None, the port's 0 and 1.
        'reward': (np.where(first_steps, 0., steps.reward[row]),
                   np.array([step.reward or 0. for step, _ in theirs])),
        'discount': (np.where(first_steps, 1., steps.discount[row]),
                     np.array([1. if step.discount is None else
                               step.discount for step, _ in theirs])),
        'observation': (steps.observation[row],
                        np.stack([step.observation for step, _ in theirs])),
    }
    for name in theirs[0][1]:
      columns[name] = (infos[name][row].astype(np.float64),
                       np.array([float(info[name]) for _, info in theirs]))
    self.assertEqual(steps.observation.dtype, np.float32)
    for name, (ours, expected) in columns.items():
      self.assertEqual(ours.shape, expected.shape, f'{label}: {name}')
      differ = np.flatnonzero((ours != expected).reshape(len(actions), -1)
                              .any(axis=1))
      if differ.size:
        t = differ[0]
        self.fail(f'{label}: {name} differs first at step {t + 1}: '
                  f'{ours[t]} vs bsuite {expected[t]}')
    self.assertGreaterEqual(int(np.sum(step_types == 2)), 3,
                            f'{label}: too few episodes tested')

  @parameterized.parameters(*EXPERIMENTS)
  def test_random_actions_give_bsuite_s_timesteps(self, experiment):
    ids, seeds = chosen_ids(experiment), (0, 3)
    pairs = [(i, s) for i in ids for s in seeds]
    loaded = [envs.load(i, seed=s) for i, s in pairs]
    self.assertLen({env.program_key for env in loaded}, 1)
    rng = np.random.RandomState(len(experiment))
    actions = rng.randint(loaded[0].num_actions,
                          size=(len(pairs), STEPS[experiment]))
    first, steps, infos = port_rollouts(
        loaded[0], suite.stack([env.init() for env in loaded]), actions)
    for row, (bsuite_id, seed) in enumerate(pairs):
      self.assert_equal_rollouts(bsuite_id, seed, first, steps, infos,
                                 actions[row], row)


def scripted_action(experiment: str, observation) -> int:
  """Closed-loop policies that reach what random actions do not: cartpole
  balanced to its 1,001-step time limit, mountain car at the goal."""
  if experiment.startswith('cartpole_swingup'):
    return 2 if observation[0, 4] * observation[0, 3] < 0 else 0
  if experiment.startswith('cartpole'):
    return 2 if observation[0, 2] + 0.3 * observation[0, 4] > 0 else 0
  return 2 if observation[0, 1] >= 0 else 0  # mountain car: pump energy


class ScriptedPoliciesTest(parameterized.TestCase):

  @parameterized.parameters(('cartpole/0', 1001), ('cartpole_noise/7', 1001),
                            ('cartpole_swingup/11', None),
                            ('mountain_car/3', None),
                            ('mountain_car_noise/9', None))
  def test_lockstep_through_the_dm_env_adapter(self, bsuite_id, length):
    experiment = bsuite_id.split('/')[0]
    ours = envs.as_dm_env(envs.load(bsuite_id, seed=2))
    theirs = results.load_seeded(bsuite_id, 2)
    mine, step = ours.reset(), theirs.reset()
    lengths, count = [], 0
    for t in range(3500):
      np.testing.assert_array_equal(mine.observation, step.observation,
                                    f'{bsuite_id} step {t}')
      action = scripted_action(experiment, step.observation)
      mine, step = ours.step(action), theirs.step(action)
      self.assertEqual((mine.step_type, mine.reward, mine.discount),
                       (step.step_type, step.reward, step.discount),
                       f'{bsuite_id} step {t + 1}')
      self.assertEqual(ours.bsuite_info(), theirs.bsuite_info())
      count += 1
      if step.last():
        lengths.append(count)
        count = 0
    self.assertGreaterEqual(len(lengths), 2)
    if length is not None:  # balanced to bsuite's float64 time limit
      self.assertEqual(lengths[0], length)
    elif experiment.startswith('mountain_car'):
      self.assertLess(max(lengths), 1000)  # the goal, not the time limit


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
