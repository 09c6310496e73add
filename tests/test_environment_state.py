"""The bsuite-loop runner's environment checkpoints: plain data only.

`checkpoints.environment_state` / `restore_environment` replace pickling:
a restored environment continues exactly as the saved one (same timesteps,
counters and logger rows), and a saved state can name no code to run.
"""

import json
import tempfile

from absl.testing import absltest
from absl.testing import parameterized
import numpy as np

from experiments import run_bsuite
from experiments.lib import checkpoints


class EnvironmentStateTest(parameterized.TestCase):

  @parameterized.parameters('catch/0', 'cartpole_noise/3',
                            'deep_sea_stochastic/2', 'memory_len/4',
                            'umbrella_distract/1', 'cartpole_swingup/5',
                            'bandit_scale/7', 'discounting_chain/3')
  def test_a_restored_environment_continues_as_the_saved_one(self, bsuite_id):
    with tempfile.TemporaryDirectory() as tmp:
      make = lambda: run_bsuite.load_environment(bsuite_id, tmp, 'csv', True,
                                                 seed=3)
      env = make()
      env.reset()
      actions = np.random.RandomState(0).randint(
          env.action_spec().num_values, size=600)
      for action in actions[:250]:
        env.step(action)
      saved = json.loads(json.dumps(checkpoints.environment_state(env)))
      restored = checkpoints.restore_environment(make(), saved)
      for action in actions[250:]:
        ours, theirs = env.step(action), restored.step(action)
        self.assertEqual(ours.step_type, theirs.step_type)
        self.assertEqual(ours.reward, theirs.reward)
        np.testing.assert_array_equal(ours.observation, theirs.observation)
      self.assertEqual(env.bsuite_info(), restored.bsuite_info())
      # pylint: disable=protected-access
      self.assertNotEmpty(env._logger._data)
      self.assertEqual(env._logger._data, restored._logger._data)

  def test_states_that_do_not_fit_are_refused_by_kind(self):
    with tempfile.TemporaryDirectory() as tmp:
      make = lambda: run_bsuite.load_environment('catch/0', tmp, 'csv', True,
                                                 seed=0)
      saved = checkpoints.environment_state(make())
      with self.assertRaisesRegex(checkpoints.EnvironmentStateError,
                                  'a Logging where the environment has Catch'):
        checkpoints.restore_environment(make().raw_env, saved)
      saved['attributes']['_steps'] = {'array': '|O', 'shape': [1],
                                       'bytes': ''}
      with self.assertRaisesRegex(checkpoints.EnvironmentStateError,
                                  "dtype '|O' is not numeric"):
        checkpoints.restore_environment(make(), saved)
      saved['attributes']['_steps'] = {'pickle': 'gASV'}
      with self.assertRaisesRegex(checkpoints.EnvironmentStateError,
                                  'unexpected entry'):
        checkpoints.restore_environment(make(), saved)


if __name__ == '__main__':
  absltest.main()
