"""The jitted runner on the exact ports (`experiments.lib.suite_jax`): its
logs equal the bsuite-loop runner's for the same agent, id and seed.

Both run here, in the test process (XLA at optimisation level 0, see
conftest.py). At XLA's defaults the agent's float32 updates are compiled
into different programs by the two runners (one call per step against one
scan), and fused multiply-adds can round their last bits differently:
docs/experiments.md says how far the logs then agree.
"""

import os
import tempfile

from absl.testing import absltest
from absl.testing import parameterized
import pandas as pd

from experiments import run_bsuite
from experiments.lib import results
from experiments.lib import suite_jax
from tests import agent_testing
from tests import bsuite_offline


def bsuite_loop_log(agent, bsuite_id, seed, episodes, folder):
  run_bsuite.run_one(bsuite_id, agent, {}, episodes, seed, folder, 'csv',
                     True, False, 0)
  return open(run_bsuite.csv_path(
      bsuite_id, run_bsuite.results_dir(folder, agent))).read()


class SameLogsTest(parameterized.TestCase):

  @parameterized.parameters(
      ('catch/0', 40), ('cartpole_noise/4', 12), ('memory_len/3', 40),
      ('umbrella_distract/5', 20), ('bandit_scale/7', 60),
      ('discounting_chain/2', 6), ('mnist_noise/1', 40))
  def test_jitted_logs_equal_the_bsuite_loop_s(self, bsuite_id, episodes):
    with tempfile.TemporaryDirectory() as tmp, \
        bsuite_offline.offline_mnist() as mnist_dir:
      records = suite_jax.run_id('dqn', bsuite_id, [0, 1],
                                 os.path.join(tmp, 'jax'),
                                 num_episodes=episodes, progress_every=0,
                                 steps_per_call=97, mnist_dir=mnist_dir)
      self.assertLen(records, 2)
      for seed in (0, 1):
        ours = open(results.bsuite_csv_path(
            bsuite_id, os.path.join(tmp, 'jax', 'dqn', f'seed_{seed}'))
                   ).read()
        theirs = bsuite_loop_log('dqn', bsuite_id, seed, episodes,
                                 os.path.join(tmp, f'loop_{seed}'))
        self.assertGreater(ours.count('\n'), 5)
        self.assertEqual(ours, theirs, f'{bsuite_id} seed {seed}')

  def test_a_finished_unit_is_skipped_and_a_changed_log_rerun(self):
    with tempfile.TemporaryDirectory() as tmp:
      first = suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=20,
                               progress_every=0)
      again = suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=20,
                               progress_every=0)
      self.assertEqual(again, first)
      # Checkpoints left by a run killed after its record was written go
      # when the finished unit is skipped.
      left = os.path.join(tmp, 'dqn', 'seed_0', results.CHECKPOINTS,
                          'catch-1', '100')
      os.makedirs(left)
      suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=20,
                       progress_every=0)
      self.assertFalse(os.path.exists(os.path.dirname(left)))
      path = results.bsuite_csv_path('catch/1',
                                     os.path.join(tmp, 'dqn', 'seed_0'))
      log = pd.read_csv(path)
      log.iloc[:3].to_csv(path, index=False)  # a damaged log
      rerun = suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=20,
                               progress_every=0)
      self.assertEqual(pd.read_csv(path).shape, log.shape)
      self.assertEqual(rerun[0]['csv_sha256'], first[0]['csv_sha256'])
      with self.assertRaisesRegex(results.AnotherRunError, 'another run'):
        suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=30,
                         progress_every=0)

  def test_a_killed_run_resumes_to_the_uninterrupted_log(self):
    with tempfile.TemporaryDirectory() as tmp:
      flags = ('--runner=jax', '--agent=dqn', '--bsuite_id=cartpole/3',
               '--seeds=0', '--max_episodes=60', '--progress_every=0',
               '--checkpoint_seconds=1')
      whole = agent_testing.run_script('experiments.run_bsuite', *flags,
                                       f'--save_path={tmp}/whole')
      self.assertEqual(whole.returncode, 0, whole.stderr[-2000:])
      unit = os.path.join(tmp, 'cut', 'dqn', 'seed_0')
      folder = os.path.join(unit, results.CHECKPOINTS, 'cartpole-3')
      saved = lambda: [n for n in (os.listdir(folder) if os.path.isdir(
          folder) else []) if n.isdigit()]
      agent_testing.kill_when('experiments.run_bsuite', *flags,
                              f'--save_path={tmp}/cut',
                              ready=lambda: len(saved()) >= 2, timeout=240)
      self.assertGreaterEqual(len(saved()), 1)
      self.assertFalse(os.path.exists(results.marker_path('cartpole/3',
                                                          unit)))
      resumed = agent_testing.run_script('experiments.run_bsuite', *flags,
                                         f'--save_path={tmp}/cut')
      self.assertEqual(resumed.returncode, 0, resumed.stderr[-2000:])
      self.assertRegex(resumed.stdout, r'seed 0: resuming at step \d+')
      logs = [open(results.bsuite_csv_path(
          'cartpole/3', os.path.join(tmp, run, 'dqn', 'seed_0'))).read()
              for run in ('whole', 'cut')]
      self.assertGreater(logs[0].count('\n'), 10)
      self.assertEqual(logs[1], logs[0])
      self.assertFalse(os.path.exists(folder))  # removed once finished

  def test_bad_arguments_are_refused(self):
    with tempfile.TemporaryDirectory() as tmp:
      with self.assertRaisesRegex(ValueError, r'num_episodes must be an int '
                                  r'in \[1, 10000\]'):
        suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=10001)
      with self.assertRaisesRegex(ValueError, 'seeds must be distinct'):
        suite_jax.run_id('dqn', 'catch/1', [0, 0], tmp)
      with self.assertRaisesRegex(ValueError, 'Unknown bsuite id'):
        suite_jax.run_id('dqn', 'catch/77', [0], tmp)


if __name__ == '__main__':
  absltest.main()
