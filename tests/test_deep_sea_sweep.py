"""experiments.paper.deep_sea_sweep: a grid of per-agent values in one program."""

import glob
import os
import tempfile

from absl.testing import absltest
import pandas as pd

from experiments.lib import deep_sea_groups
from experiments.paper import deep_sea_sweep
from tests import agent_testing


class ParseTest(absltest.TestCase):

  def test_grid_and_settings(self):
    grid = deep_sea_sweep.parse_grid('lr=1e-3,2e-3; beta_final=0')
    self.assertEqual(grid, {'lr': [1e-3, 2e-3], 'beta_final': [0.0]})
    self.assertEqual(deep_sea_sweep.settings_of(grid),
                     [{'beta_final': 0.0, 'lr': 1e-3},
                      {'beta_final': 0.0, 'lr': 2e-3}])
    self.assertEqual(deep_sea_sweep.settings_of({}), [{}])
    with self.assertRaisesRegex(ValueError, "'lr' must be numbers"):
      deep_sea_sweep.parse_grid('lr=fast')
    with self.assertRaisesRegex(ValueError, "'lr' is not 'name=v1"):
      deep_sea_sweep.parse_grid('lr')

  def test_the_preset_is_a_flag_and_recorded_with_the_rows(self):
    with tempfile.TemporaryDirectory() as tmp:
      check = deep_sea_sweep.check_fixed_settings
      check(tmp, 'pe_dqn', 10, 300, {}, has_rows=False)
      check(tmp, 'pe_dqn', 10, 300, {}, has_rows=True)  # the same: fine
      with self.assertRaisesRegex(ValueError, r"preset: \(unset\) -> "
                                  r"'paper'.*another --save_path"):
        check(tmp, 'pe_dqn', 10, 300, {'preset': 'paper'}, has_rows=True)
      # Another size is another group of rows.
      check(tmp, 'pe_dqn', 20, 300, {'preset': 'paper'}, has_rows=True)


class SweepTest(absltest.TestCase):

  def test_grid_rows_equal_single_setting_runs_and_resume(self):
    small = {'batch_size': 8, 'min_replay_size': 8, 'hidden_sizes': (8,)}
    with tempfile.TemporaryDirectory() as tmp:
      rows = deep_sea_sweep.run_sweep(
          'dqn', 4, 2, 20, 10, {'learning_rate': [1e-3, 3e-2]}, small, tmp)
      self.assertLen(rows, 4)
      # The agents with learning rate 3e-2 are the runs of an agent built
      # with that number.
      alone = deep_sea_groups.run_seeds_jax(
          'dqn', 4, [0, 1], 20, 10, progress=False,
          overrides={**small, 'learning_rate': 3e-2})
      table = pd.read_csv(os.path.join(tmp, deep_sea_sweep.RUNS_FILE))
      fast = table[table.learning_rate == 3e-2].sort_values('seed')
      self.assertEqual(list(fast.regret), [r['regret'] for r in alone])
      again = deep_sea_sweep.run_sweep(
          'dqn', 4, 2, 20, 10, {'learning_rate': [1e-3, 3e-2]}, small, tmp)
      self.assertLen(again, 4)  # Nothing trained twice.
      self.assertLen(pd.read_csv(os.path.join(tmp, deep_sea_sweep.RUNS_FILE)),
                     4)

  def test_killed_sweep_resumes_with_the_uninterrupted_results(self):
    flags = ['--agent=dqn', '--size=4',
             '--seeds=2', '--num_episodes=120', '--episodes_per_call=4',
             '--grid=learning_rate=1e-3,3e-2',
             '--batch_size=8', '--min_replay_size=8']
    run = lambda *extra: agent_testing.run_script(
        'experiments.paper.deep_sea_sweep', *flags, *extra)
    with tempfile.TemporaryDirectory() as tmp:
      full = run('--nocheckpoints', f'--save_path={tmp}/full')
      self.assertEqual(full.returncode, 0, full.stderr[-3000:])
      killed_dir = os.path.join(tmp, 'killed')
      pattern = os.path.join(killed_dir, 'checkpoints', '*', '*')
      saved = lambda: [p for p in glob.glob(pattern)
                       if os.path.basename(p).isdigit()]
      agent_testing.kill_when('experiments.paper.deep_sea_sweep', *flags,
                              f'--save_path={killed_dir}',
                              ready=lambda: bool(saved()))
      self.assertNotEmpty(saved())  # Killed after a checkpoint, mid-run.
      self.assertFalse(os.path.exists(
          os.path.join(killed_dir, deep_sea_sweep.RUNS_FILE)))
      resumed = run(f'--save_path={killed_dir}')
      self.assertEqual(resumed.returncode, 0, resumed.stderr[-3000:])
      self.assertIn('resuming at episode', resumed.stdout)
      # Progress lines only: orbax's per-checkpoint INFO logs are off.
      self.assertNotIn('checkpoint_manager', resumed.stderr)
      columns = ['learning_rate', 'seed', 'regret', 'first_treasure_episode']
      read = lambda d: pd.read_csv(os.path.join(
          d, deep_sea_sweep.RUNS_FILE))[columns]
      pd.testing.assert_frame_equal(read(killed_dir),
                                    read(os.path.join(tmp, 'full')))
      # The rows are in the table: the checkpoints are gone.
      self.assertEqual(
          os.listdir(os.path.join(killed_dir, 'checkpoints')), [])

  def test_command_line(self):
    with tempfile.TemporaryDirectory() as tmp:
      result = agent_testing.run_script(
          'experiments.paper.deep_sea_sweep', '--agent=dqn', '--size=4',
          '--seeds=2', '--num_episodes=10', "--grid=epsilon=0.05,0.5",
          '--batch_size=8', '--min_replay_size=8', f'--save_path={tmp}')
      self.assertEqual(result.returncode, 0, result.stderr[-3000:])
      self.assertIn('epsilon=0.05:', result.stdout)
      summary = pd.read_csv(os.path.join(tmp, deep_sea_sweep.SUMMARY_FILE))
      self.assertEqual(list(summary.epsilon), [0.05, 0.5])
      self.assertEqual(list(summary.num_seeds), [2, 2])
      with open(os.path.join(tmp, deep_sea_sweep.TABLE_FILE)) as f:
        table = f.read().splitlines()
      self.assertEqual([line.split(' | ')[:2] for line in table[2:]],
                       [['| dqn', '0.05'], ['| dqn', '0.5']])
      bad = agent_testing.run_script(
          'experiments.paper.deep_sea_sweep', '--agent=dqn', '--grid=hidden=1',
          f'--save_path={tmp}')
      self.assertNotEqual(bad.returncode, 0)
      self.assertIn("no per-agent array for ['hidden']", bad.stderr)


if __name__ == '__main__':
  absltest.main()
