"""experiments.paper.project_scaling: timing of one group, and the projection."""

import os
import tempfile

from absl.testing import absltest
from bsuite.environments import deep_sea
import pandas as pd

import agents

from experiments.paper import project_scaling
from tests import agent_testing


def bsuite_specs():
  env = deep_sea.DeepSea(size=3, mapping_seed=0)
  return env.observation_spec(), env.action_spec()


class ProjectScalingTest(absltest.TestCase):

  def test_projection_is_compilation_plus_steps_over_rate(self):
    with tempfile.TemporaryDirectory() as tmp:
      rows = project_scaling.project(['dqn'], [3, 5], 2, 50, 7, 'vmap', tmp)
      table = pd.read_csv(os.path.join(tmp, project_scaling.TABLE_FILE))
    self.assertEqual(list(table.columns), list(project_scaling.COLUMNS))
    self.assertEqual(list(table['size']), [3, 5])
    min_replay = agents.make_pure('dqn', *bsuite_specs()).config.min_replay_size
    for row in rows:
      # Timed once the replay can feed learning: the chunk before it still
      # could not.
      self.assertGreaterEqual(row['warmup_steps'], min_replay)
      self.assertLess(row['warmup_steps'] - row['probe_steps'], min_replay)
      # Whole episodes of at least 7 steps per timed chunk.
      self.assertEqual(row['probe_steps'] % row['size'], 0)
      self.assertBetween(row['probe_steps'], 7, 7 + row['size'] - 1)
      self.assertGreater(row['env_steps_per_second'], 0)
      self.assertGreater(row['compile_seconds'], 0)
      seconds = (row['compile_seconds'] + 2 * row['size'] * 50 /
                 row['env_steps_per_second'])
      self.assertAlmostEqual(row['projected_hours'], seconds / 3600,
                             delta=1e-4)

  def test_duration(self):
    self.assertEqual(project_scaling.duration(2.349), '2.35 h')
    self.assertEqual(project_scaling.duration(0.25), '15.0 min')

  def test_bad_flags_are_named(self):
    result = agent_testing.run_script('experiments.paper.project_scaling',
                                      '--sizes=1')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--sizes', result.stderr)


if __name__ == '__main__':
  absltest.main()
