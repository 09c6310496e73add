"""The jitted runner on the exact ports (`experiments.lib.suite_jax`): its
logs equal the bsuite-loop runner's for the same agent, id and seed.

Both run here, in the test process (XLA at optimisation level 0, see
conftest.py). At XLA's defaults the agent's float32 updates are compiled
into different programs by the two runners (one call per step against one
scan), and fused multiply-adds can round their last bits differently:
docs/experiments.md says how far the logs then agree.
"""

import contextlib
import io
import os
import tempfile

from absl.testing import absltest
from absl.testing import parameterized
import pandas as pd

from experiments import run_bsuite
from experiments.lib import checkpoints
from experiments.lib import suite_jax
from experiments.lib import unit_files
from experiments.lib import units
from tests import agent_testing
from tests import bsuite_offline


def bsuite_loop_log(agent, bsuite_id, seed, episodes, folder, overrides=()):
  run_bsuite.run_one(units.Unit(agent, bsuite_id, seed, tuple(overrides)),
                     run_bsuite.LoopOptions(folder, episodes,
                                            progress_every=0))
  return open(run_bsuite.csv_path(
      bsuite_id, run_bsuite.results_dir(folder, agent, seed))).read()


class RemainingTimeTest(absltest.TestCase):

  def test_each_unit_at_its_own_episode_length(self):
    # Unit 0: 100 of 200 episodes in 1,000 steps (10 a step), 1,000 left;
    # unit 1: 50 episodes in 1,000 steps, 3,000 left; unit 2 finished.
    self.assertAlmostEqual(suite_jax.remaining_seconds(
        [100, 50, 200], [1000, 1000, 5000], 200, steps_per_second=400.0),
                           10.0)
    self.assertEqual(suite_jax.remaining_seconds([200, 200], [9, 9], 200,
                                                 10.0), 0.0)
    self.assertEqual(suite_jax.remaining_seconds([0, 5], [0, 50], 10, 10.0),
                     float('inf'))

  def test_durations_read_as_minutes_then_hours(self):
    self.assertEqual(suite_jax._duration(30), 'about 1 min')
    self.assertEqual(suite_jax._duration(35 * 60), 'about 35 min')
    self.assertEqual(suite_jax._duration(2.4 * 3600), 'about 2.4 h')
    self.assertEqual(suite_jax._duration(float('inf')), 'unknown')


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
        ours = open(unit_files.bsuite_csv_path(
            bsuite_id, os.path.join(tmp, 'jax', 'dqn', f'seed_{seed}'))
                   ).read()
        theirs = bsuite_loop_log('dqn', bsuite_id, seed, episodes,
                                 os.path.join(tmp, f'loop_{seed}'))
        self.assertGreater(ours.count('\n'), 5)
        self.assertEqual(ours, theirs, f'{bsuite_id} seed {seed}')

  @parameterized.parameters(
      (('bandit/3', 'cartpole/7', 'cartpole_swingup/11', 'catch_scale/2',
        'mnist/5', 'mountain_car/1', 'umbrella_length/4'),),
      (('bandit_noise/9', 'cartpole_scale/1', 'catch_noise/6',
        'memory_size/8', 'mnist_scale/4', 'mountain_car_noise/2',
        'mountain_car_scale/18'),))
  def test_every_other_experiment_logs_as_the_bsuite_loop(self, ids):
    # With the parameters above, one id of every experiment but deep sea's
    # (`bsuite_jax`, tests/test_bsuite_jax.py), in one run_ids call.
    episodes = {'bandit': 60, 'cartpole': 4, 'cartpole_swingup': 3,
                'mountain_car': 3}
    # A learning agent's runs on mountain car part even at level 0: its
    # first episode's hundreds of updates on continuous observations round
    # differently once the step is compiled into a loop (mountain_car_scale/2
    # seed 2: episode 1 lasts 851 steps against the loop's 762; equal at one
    # episode of one step per call). There the acting is uniform
    # (epsilon 1), so the log tests the runner, the port, its reward noise
    # and scale and the logging, not the rounding of the agent's updates.
    acting = {'mountain_car': (('epsilon', 1.0),)}
    with tempfile.TemporaryDirectory() as tmp, \
        bsuite_offline.offline_mnist() as mnist_dir:
      for bsuite_id in ids:
        experiment = bsuite_id.split('/')[0]
        count = next((v for k, v in episodes.items()
                      if experiment.startswith(k)), 25)
        overrides = next((v for k, v in acting.items()
                          if experiment.startswith(k)), ())
        suite_jax.run_ids('dqn', [bsuite_id], [2], os.path.join(tmp, 'jax'),
                          overrides=dict(overrides),
                          num_episodes=count, progress_every=0,
                          steps_per_call=211, mnist_dir=mnist_dir)
        ours = open(unit_files.bsuite_csv_path(
            bsuite_id, os.path.join(tmp, 'jax', 'dqn', 'seed_2'))).read()
        theirs = bsuite_loop_log('dqn', bsuite_id, 2, count,
                                 os.path.join(tmp, 'loop'), overrides)
        self.assertGreater(ours.count('\n'), 2, bsuite_id)
        self.assertEqual(ours, theirs, bsuite_id)

  def test_units_of_one_shape_share_a_program_and_log_as_alone(self):
    ids = ['catch/0', 'catch/13', 'umbrella_length/2', 'umbrella_length/9']
    with tempfile.TemporaryDirectory() as tmp:
      alone = {}
      for bsuite_id in ids:
        for seed in (0, 1):
          suite_jax.run_id('dqn', bsuite_id, [seed], os.path.join(tmp, 'one'),
                           num_episodes=30, progress_every=0)
          alone[bsuite_id, seed] = open(unit_files.bsuite_csv_path(
              bsuite_id, os.path.join(tmp, 'one', 'dqn', f'seed_{seed}'))
                                        ).read()
      for batching in ('map', 'vmap'):
        with self.subTest(batching=batching):
          together = os.path.join(tmp, batching)
          announced = []
          printed = io.StringIO()
          with contextlib.redirect_stdout(printed):
            records = suite_jax.run_ids(
                'dqn', ids, [0, 1], together, num_episodes=30,
                progress_every=1e-9, batching=batching, steps_per_call=53,
                announce=announced.append)
          self.assertEqual([(r['identity']['bsuite_id'],
                             r['identity']['seed']) for r in records],
                           [(i, s) for i in ids for s in (0, 1)])
          self.assertLen(announced, 8)
          # catch's 4 units in one program, umbrella_length's in another
          # (its chain lengths are settings in the state, not in the
          # program).
          out = printed.getvalue()
          self.assertEqual(out.count('program 1/2: 4 units'), 1)
          self.assertEqual(out.count('program 2/2: 4 units'), 1)
          progress = [line for line in out.splitlines()
                      if 'units done' in line]
          self.assertNotEmpty(progress)
          self.assertTrue(all(line.endswith(' left') and 'program ' in line
                              for line in progress), progress)
          self.assertEqual({r['program_units'] for r in records}, {4})
          for (bsuite_id, seed), log in alone.items():
            self.assertGreater(log.count('\n'), 5)
            self.assertEqual(open(unit_files.bsuite_csv_path(
                bsuite_id, os.path.join(together, 'dqn', f'seed_{seed}'))
                                  ).read(), log, f'{bsuite_id} seed {seed}')
      with self.assertRaisesRegex(ValueError, 'units_per_program'):
        suite_jax.run_ids('dqn', ids, [0], tmp, units_per_program=-1)
      with self.assertRaisesRegex(ValueError, 'bsuite_ids must be distinct'):
        suite_jax.run_ids('dqn', ids + ids[:1], [0], tmp)

  def test_a_finished_unit_is_skipped_and_a_changed_log_rerun(self):
    with tempfile.TemporaryDirectory() as tmp:
      first = suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=20,
                               progress_every=0)
      again = suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=20,
                               progress_every=0)
      self.assertEqual(again, first)
      # Checkpoints left by a run killed after its record was written go
      # when the finished unit is skipped.
      left = os.path.join(tmp, 'dqn', 'seed_0', unit_files.CHECKPOINTS,
                          'catch-1', '100')
      os.makedirs(left)
      suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=20,
                       progress_every=0)
      self.assertFalse(os.path.exists(os.path.dirname(left)))
      path = unit_files.bsuite_csv_path('catch/1',
                                     os.path.join(tmp, 'dqn', 'seed_0'))
      log = pd.read_csv(path)
      log.iloc[:3].to_csv(path, index=False)  # a damaged log
      rerun = suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=20,
                               progress_every=0)
      self.assertEqual(pd.read_csv(path).shape, log.shape)
      self.assertEqual(rerun[0]['csv_sha256'], first[0]['csv_sha256'])
      with self.assertRaisesRegex(unit_files.AnotherRunError, 'another run'):
        suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=30,
                         progress_every=0)

  def test_an_unusable_checkpoint_folder_is_set_aside_and_the_unit_rerun(
      self):
    with tempfile.TemporaryDirectory() as tmp:
      first = suite_jax.run_id('dqn', 'catch/1', [0], f'{tmp}/whole',
                               num_episodes=20, progress_every=0)
      folder = os.path.join(tmp, 'cut', 'dqn', 'seed_0', unit_files.CHECKPOINTS,
                            'catch-1')
      os.makedirs(folder)
      with open(os.path.join(folder, checkpoints.IDENTITY_FILE), 'w') as f:
        f.write('{"agent": ')  # torn
      printed = io.StringIO()
      with contextlib.redirect_stdout(printed):
        again = suite_jax.run_id('dqn', 'catch/1', [0], f'{tmp}/cut',
                                 num_episodes=20, progress_every=0)
      self.assertIn('run.json cannot be read (JSONDecodeError): set aside as '
                    f'{folder}.unreadable; this unit starts over',
                    printed.getvalue())
      self.assertEqual(again[0]['csv_sha256'], first[0]['csv_sha256'])
      self.assertTrue(os.path.isdir(folder + checkpoints.UNREADABLE_SUFFIX))
      self.assertFalse(os.path.exists(folder))  # removed once finished

  def test_a_killed_run_resumes_to_the_uninterrupted_log(self):
    with tempfile.TemporaryDirectory() as tmp:
      flags = ('--runner=jax', '--agent=dqn', '--bsuite_id=cartpole/3',
               '--seeds=0', '--num_episodes=60', '--progress_every=0',
               '--checkpoint_seconds=1')
      whole = agent_testing.run_script('experiments.run_bsuite', *flags,
                                       f'--save_path={tmp}/whole')
      self.assertEqual(whole.returncode, 0, whole.stderr[-2000:])
      unit = os.path.join(tmp, 'cut', 'dqn', 'seed_0')
      folder = os.path.join(unit, unit_files.CHECKPOINTS, 'cartpole-3')
      saved = lambda: [n for n in (os.listdir(folder) if os.path.isdir(
          folder) else []) if n.isdigit()]
      agent_testing.kill_when('experiments.run_bsuite', *flags,
                              f'--save_path={tmp}/cut',
                              ready=lambda: len(saved()) >= 2, timeout=240)
      self.assertGreaterEqual(len(saved()), 1)
      self.assertFalse(os.path.exists(unit_files.marker_path('cartpole/3',
                                                          unit)))
      resumed = agent_testing.run_script('experiments.run_bsuite', *flags,
                                         f'--save_path={tmp}/cut')
      self.assertEqual(resumed.returncode, 0, resumed.stderr[-2000:])
      self.assertRegex(resumed.stdout, r'seed 0: resuming at step \d+')
      logs = [open(unit_files.bsuite_csv_path(
          'cartpole/3', os.path.join(tmp, run, 'dqn', 'seed_0'))).read()
              for run in ('whole', 'cut')]
      self.assertGreater(logs[0].count('\n'), 10)
      self.assertEqual(logs[1], logs[0])
      self.assertFalse(os.path.exists(folder))  # removed once finished

  def test_every_runner_keeps_a_unit_in_its_seed_folder(self):
    with tempfile.TemporaryDirectory() as tmp:
      suite_jax.run_id('dqn', 'catch/1', [0], tmp, num_episodes=10,
                       progress_every=0)
      unit = units.Unit('dqn', 'catch/1', 0)
      self.assertTrue(os.path.exists(unit.log_path(tmp)))
      options = run_bsuite.LoopOptions(tmp, 10, progress_every=0)
      # bsuite's loop finds the jitted runner's unit where it would log it.
      with self.assertRaisesRegex(unit_files.AnotherRunError,
                                  r'seed_0/bsuite_id_-_catch-1.csv was '
                                  'written by --runner=jax'):
        run_bsuite.run_one(unit, options)
      # A unit in the plain folder bsuite's loop once wrote is the same
      # unit: not logged a second time.
      run_bsuite.run_one(units.Unit('dqn', 'catch/1', 1), options)
      old = units.Unit('dqn', 'catch/1', 1).directory(tmp)
      for name in os.listdir(old):
        if name.startswith('bsuite_id'):
          os.replace(os.path.join(old, name),
                     os.path.join(tmp, 'dqn', name))
      with self.assertRaisesRegex(unit_files.AnotherRunError,
                                  'already holds dqn on catch/1 with seed 1'):
        suite_jax.run_id('dqn', 'catch/1', [1], tmp, num_episodes=10,
                         progress_every=0)

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
