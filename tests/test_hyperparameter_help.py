"""`run_bsuite --help` lists every hyperparameter with its meaning, range
and defaults, and each stated range is the one the configs enforce."""

from absl.testing import absltest
from absl.testing import parameterized
import bsuite

import agents
from agents import hyperparameters
from experiments.lib import hyperparameter_flags
from tests import agent_testing

NUMERIC = ('int', 'float', 'int_list', 'float_list')

# (agent, hyperparameter, a value just outside its stated range).
OUTSIDE = (
    ('dqn', 'learning_rate', 0.0), ('dqn', 'discount', 1.5),
    ('dqn', 'batch_size', 0), ('dqn', 'update_period', 0),
    ('ucb', 'adam_b2', 1.0), ('dqn', 'epsilon', 1.01),
    ('boot_dqn', 'mask_probability', 0.0), ('tdu', 'num_exploiters', 1),
    ('ids_c51', 'c51_prior_scale', -0.1), ('ids_c51', 'rho_clip', 0.0),
    ('pe_dqn', 'beta_decay_episodes', 0.0), ('c51', 'num_atoms', 1),
    ('ucb_infogain', 'infogain_temperature', 0.0),
    ('dltv_qr', 'dltv_time_scale', 0.0), ('ids_c51', 'num_ensemble', 1),
)


class HelpTest(parameterized.TestCase):

  def test_every_numeric_hyperparameter_states_its_range(self):
    numeric = sorted(n for n, kind in hyperparameter_flags.HYPERPARAMETERS
                     .items() if kind in NUMERIC)
    self.assertEqual([n for n in numeric if n not in hyperparameters.RANGES],
                     [])
    self.assertIn('Range: in [0, 1].', hyperparameters.describe('discount'))

  @parameterized.parameters(*OUTSIDE)
  def test_a_value_outside_the_stated_range_is_refused(self, agent, name,
                                                       value):
    self.assertIn(name, hyperparameters.RANGES)
    env = bsuite.load_from_id('deep_sea/0')
    with self.assertRaisesRegex(ValueError, f'`{name}`'):
      agents.make(agent, env.observation_spec(), env.action_spec(),
                  **{name: value})

  def test_help_lists_the_hyperparameters_and_exits_0(self):
    result = agent_testing.run_script('experiments.run_bsuite', '--help',
                                      timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
    for name, kind in hyperparameter_flags.HYPERPARAMETERS.items():
      self.assertIn(f'--{"[no]" if kind == "bool" else ""}{name}: ',
                    result.stdout)
    self.assertIn('--learning_rate: Adam learning rate. Range: > 0.',
                  result.stdout)
    self.assertNotIn('--jax_platforms', result.stdout)  # absl's, not ours


  @parameterized.parameters('experiments.tune',
                            'experiments.paper.deep_sea_scaling',
                            'experiments.paper.deep_sea_sweep',
                            'experiments.paper.uncertainty_maps')
  def test_every_training_script_takes_the_same_hyperparameter_flags(
      self, module):
    result = agent_testing.run_script(module, '--help', timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
    for name, kind in hyperparameter_flags.HYPERPARAMETERS.items():
      self.assertIn(f'--{"[no]" if kind == "bool" else ""}{name}: ',
                    result.stdout)
    self.assertNotIn('--set:', result.stdout)

  def test_an_optional_field_takes_none(self):
    self.assertIn('beta_decay_episodes', hyperparameter_flags.OPTIONAL)
    self.assertNotIn('learning_rate', hyperparameter_flags.OPTIONAL)
    parser = hyperparameter_flags._OptionalFloatParser()
    self.assertIsNone(parser.parse('None'))
    self.assertEqual(parser.parse('3'), 3.0)
    with self.assertRaises(ValueError):
      parser.parse('three')

if __name__ == '__main__':
  absltest.main()
