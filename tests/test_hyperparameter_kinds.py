"""Hyperparameters of the wrong kind are refused on the Python API, with the
hyperparameter named: None where a value is needed, a string or a bool for
a number, an empty sequence for hidden sizes; and an empty output folder."""

from absl.testing import absltest
from absl.testing import parameterized
from dm_env import specs
import numpy as np

import agents
from experiments.lib import results

OBSERVATION = specs.Array((1, 3), np.float32)
ACTIONS = specs.DiscreteArray(3)


class KindsTest(parameterized.TestCase):

  @parameterized.parameters(
      ('dqn', dict(learning_rate=None), r'`learning_rate` must be given'),
      ('dqn', dict(learning_rate='1e-3'), r'`learning_rate` must be a number'),
      ('boot_dqn', dict(batch_size=True), r'`batch_size` must be an int'),
      ('dqn', dict(hidden_sizes=()), r'`hidden_sizes` must be a non-empty'),
      ('pe_dqn', dict(discount=None), r'`discount` must be given'))
  def test_wrong_kinds_are_refused_by_name(self, agent, overrides, message):
    with self.assertRaisesRegex(ValueError, message):
      agents.make(agent, OBSERVATION, ACTIONS, **overrides)

  def test_values_of_the_right_kind_pass(self):
    agent = agents.make('dqn', OBSERVATION, ACTIONS, learning_rate=3e-4,
                        batch_size=16, hidden_sizes=(8,))
    self.assertEqual(agent.config.batch_size, 16)
    self.assertIsNone(agents.make('pe_dqn', OBSERVATION, ACTIONS,
                                  max_grad_norm=None).config.max_grad_norm)

  def test_an_empty_output_folder_is_refused(self):
    for path in ('', '  '):
      with self.assertRaisesRegex(ValueError, '--save_path must name a folder'):
        results.check_output_folder(path, '--save_path')


if __name__ == '__main__':
  absltest.main()
