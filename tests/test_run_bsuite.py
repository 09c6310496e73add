"""experiments.run_bsuite: ids, bsuite's logs, resuming, parallel workers."""

import base64
import contextlib
import functools
import io
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from unittest import mock

from absl.testing import absltest
from bsuite.logging import csv_load
import numpy as np
import pandas as pd

import agents
from agents import bsuite_settings
from experiments import analyze_bsuite
from experiments.lib import checkpoints
from experiments.lib import results
from experiments.lib import unit_files
from experiments.lib import units
from experiments import run_bsuite
from tests import agent_testing



def command(*flags):
  return [sys.executable, '-m', 'experiments.run_bsuite', *flags]


class _RunsCode:
  """Unpickling it creates `path`: a stand-in for a crafted checkpoint."""

  def __init__(self, path):
    self.path = path

  def __reduce__(self):
    return (open, (self.path, 'w'))


def run_command(*flags, timeout=300):
  return agent_testing.run_script('experiments.run_bsuite', *flags,
                                  timeout=timeout)


class ResolveIdsTest(absltest.TestCase):

  def test_one_id(self):
    self.assertEqual(run_bsuite.resolve_ids('deep_sea/3'), ['deep_sea/3'])

  def test_sweep_and_list(self):
    from bsuite import sweep  # pylint: disable=g-import-not-at-top
    self.assertLen(run_bsuite.resolve_ids('SWEEP'), 468)
    self.assertEqual(run_bsuite.resolve_ids('DEEP_SEA'), list(sweep.DEEP_SEA))
    self.assertEqual(run_bsuite.resolve_ids('catch_noise'),
                     list(sweep.CATCH_NOISE))
    ids = run_bsuite.resolve_ids('catch/0,DEEP_SEA,catch/0')
    self.assertEqual(ids, ['catch/0'] + list(sweep.DEEP_SEA))

  def test_unknown_names_are_rejected_by_flag(self):
    with self.assertRaisesRegex(ValueError, 'deep_sea/999'):
      run_bsuite.resolve_ids('deep_sea/999')
    with self.assertRaisesRegex(ValueError, '--bsuite_id.*NOPE.*SWEEP'):
      run_bsuite.resolve_ids('NOPE')


class ReturnRangeTest(absltest.TestCase):

  def test_support_follows_the_discount_given(self):
    # Mountain car's -1 per step: the return range depends on the discount.
    self.assertEqual(
        bsuite_settings.for_bsuite_id('pe_dqn', 'mountain_car/0',
                                 {'discount': 0.9}),
        {'discount': 0.9, 'v_min': -10.000000000000002, 'v_max': 0.0})
    default = bsuite_settings.for_bsuite_id('pe_dqn', 'mountain_car/0', {})
    self.assertAlmostEqual(default['v_min'], -99.99568287525884)

  def test_user_range_wins_and_others_get_none(self):
    self.assertEqual(bsuite_settings.for_bsuite_id(
        'c51', 'mountain_car/0', {'v_min': -5.0, 'v_max': 5.0}),
                     {'v_min': -5.0, 'v_max': 5.0})
    self.assertEqual(bsuite_settings.for_bsuite_id('dqn', 'catch/0', {}), {})

  def test_sizes_outside_the_sweep_get_their_own_range(self):
    # deep_sea/10 is size 30; the experiment form serves any size.
    from agents import return_ranges  # pylint: disable=g-import-not-at-top
    by_id = bsuite_settings.for_bsuite_id('pe_dqn', 'deep_sea/10', {})
    self.assertEqual(agents.for_experiment('pe_dqn', {}, 'deep_sea',
                                           size=30), by_id)
    size_100 = agents.for_experiment('qr_dqn', {'seed': 1}, 'deep_sea',
                                     size=100)
    v_min, v_max = return_ranges.return_range_for_experiment('deep_sea',
                                                             size=100)
    self.assertEqual(size_100, {'seed': 1, 'v_min': v_min, 'v_max': v_max})
    self.assertEqual(agents.for_experiment('boot_dqn', {}, 'deep_sea',
                                           size=100), {})


class DeepSeaPriorTest(absltest.TestCase):
  """The quantile prior set at deep sea size 10, scaled by N / 10 above it."""

  def prior(self, agent_name, bsuite_id, overrides=None):
    return bsuite_settings.for_bsuite_id(agent_name, bsuite_id,
                                    overrides or {}).get(
                                        'quantile_prior_scale')

  def test_pe_dqn_prior_grows_with_size_on_both_variants(self):
    default = agents.defaults('pe_dqn')['quantile_prior_scale']
    self.assertEqual(default, 0.5)
    # deep_sea/N is size 10 + 2 N: 1.5 at 30, 1.9 at 38, 2.5 at 50.
    for bsuite_id, scale in (('deep_sea/10', 1.5), ('deep_sea/14', 1.9),
                             ('deep_sea/20', 2.5),
                             ('deep_sea_stochastic/15', 2.0)):
      with self.subTest(bsuite_id=bsuite_id):
        self.assertEqual(self.prior('pe_dqn', bsuite_id), scale)
    # The held-out runs gave the flag round(0.05 N, 2): the same floats.
    for size in range(12, 51, 2):
      self.assertEqual(agents.size_scaled_prior(default, size),
                       round(0.05 * size, 2), size)

  def test_size_10_and_below_keep_the_default(self):
    self.assertIsNone(self.prior('pe_dqn', 'deep_sea/0'))
    self.assertNotIn('quantile_prior_scale', agents.for_experiment(
        'pe_dqn', {}, 'deep_sea', size=6))
    self.assertEqual(agents.size_scaled_prior(0.5, 4), 0.5)

  def test_the_users_value_wins_and_only_quantile_priors_scale(self):
    self.assertEqual(self.prior('pe_dqn', 'deep_sea/20',
                                {'quantile_prior_scale': 0.25}), 0.25)
    self.assertEqual(self.prior('pe_dqn_ind', 'deep_sea/15'), 2.0)
    self.assertEqual(self.prior('pe_dqn_qr_qr', 'deep_sea/15'), 2.0)
    # No quantile member: the (unused) field stays as it was.
    self.assertIsNone(self.prior('pe_dqn_c51_c51', 'deep_sea/15'))
    self.assertIsNone(self.prior('pe_dqn', 'deep_sea/15',
                                 {'member_kinds': ('categorical',
                                                   'categorical')}))
    for agent_name in ('boot_dqn', 'tdu', 'dltv_qr', 'qr_dqn'):
      self.assertIsNone(self.prior(agent_name, 'deep_sea/15'), agent_name)
    self.assertIsNone(self.prior('pe_dqn', 'mountain_car/0'))
    self.assertIsNone(self.prior('pe_dqn', 'cartpole_swingup/19'))

  def test_both_runners_build_the_scaled_prior(self):
    from experiments.lib import bsuite_jax  # pylint: disable=g-import-not-at-top
    agent = bsuite_jax.build_agent('pe_dqn', 'deep_sea/15', {}, 10000)
    self.assertEqual(agent.config.quantile_prior_scale, 2.0)
    self.assertEqual(agents.for_jax_deep_sea('pe_dqn', {}, 'deep_sea', 40)[
        'quantile_prior_scale'], 2.0)


class RunOneTest(absltest.TestCase):
  """One id in this process, logged with bsuite's CSV format."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.TemporaryDirectory()
    cls.summary = run_bsuite.run_one(
        units.Unit('dqn', 'deep_sea/0', 0),
        run_bsuite.LoopOptions(cls.tmp.name, 12, progress_every=0))
    cls.directory = run_bsuite.results_dir(cls.tmp.name, 'dqn', 0)

  @classmethod
  def tearDownClass(cls):
    cls.tmp.cleanup()
    super().tearDownClass()

  def test_bsuite_loader_reads_the_log(self):
    df, sweep_vars = csv_load.load_bsuite({'dqn': self.directory})
    self.assertEqual(set(df.bsuite_id), {'deep_sea/0'})
    self.assertIn('agent_name', sweep_vars)
    self.assertEqual(df.episode.max(), 12)
    # The summary's regret is bsuite's own count at the last episode.
    last = df.sort_values('episode').iloc[-1]
    self.assertEqual(self.summary['regret'], last.total_bad_episodes)
    self.assertEqual(self.summary['steps'], 12 * 10)  # deep_sea/0: size 10.

  def test_no_temporary_file_is_left(self):
    self.assertCountEqual(os.listdir(self.directory),
                          ['bsuite_id_-_deep_sea-0.csv',
                           'bsuite_id_-_deep_sea-0.csv.json',
                           unit_files.CHECKPOINTS])
    # The hidden folder holds only the unit's lock (gitignored).
    self.assertEqual(os.listdir(os.path.join(self.directory,
                                             unit_files.CHECKPOINTS)),
                     ['deep_sea-0.lock'])

  def test_finished_ids_are_skipped_and_partial_ones_kept(self):
    self.assertTrue(run_bsuite.is_finished('deep_sea/0', self.directory, 12))
    self.assertFalse(run_bsuite.is_finished('deep_sea/0', self.directory, 13))
    self.assertFalse(run_bsuite.is_finished('deep_sea/1', self.directory, 1))
    # 12 episodes end on one of bsuite's log points; 11 would not, and the
    # marker, not the log's last row, says the run finished.
    self.assertTrue(run_bsuite.is_finished('deep_sea/0', self.directory, 11))
    # The marker records which run finished: another one is refused.
    mine = run_bsuite.run_identity('dqn', 'deep_sea/0', 0, {}, 'single')
    self.assertTrue(run_bsuite.is_finished('deep_sea/0', self.directory, 12,
                                           mine))
    identity = functools.partial(run_bsuite.run_identity, 'dqn', 'deep_sea/0')
    for other in (identity(1, {}, 'single'),
                  identity(0, {'learning_rate': 1e-4}, 'single'),
                  identity(0, {}, 'lockstep')):
      with self.assertRaisesRegex(unit_files.AnotherRunError, '--overwrite'):
        run_bsuite.is_finished('deep_sea/0', self.directory, 12, other)
    options = run_bsuite.LoopOptions(self.tmp.name, 12)
    with contextlib.redirect_stdout(io.StringIO()) as out:
      todo = [u.bsuite_id for u in units.make_units(
          'dqn', ['deep_sea/0', 'deep_sea/1'], [0])
              if run_bsuite.unit_to_run(u, options, 'single')]
    self.assertEqual(todo, ['deep_sea/1'])
    self.assertIn('deep_sea/0 [dqn] seed 0: finished results in',
                  out.getvalue())
    self.assertTrue(run_bsuite.unit_to_run(
        units.Unit('dqn', 'deep_sea/0', 0), options._replace(overwrite=True),
        'single'))

  def test_a_log_changed_after_its_marker_is_not_finished(self):
    # The marker records its log, so a log cut short is not "finished,
    # skipped".
    with tempfile.TemporaryDirectory() as tmp:
      shutil.copytree(self.directory, tmp, dirs_exist_ok=True)
      path = run_bsuite.csv_path('deep_sea/0', tmp)
      self.assertTrue(run_bsuite.is_finished('deep_sea/0', tmp, 12))
      with open(path) as f:
        whole = f.read()
      with open(path, 'w') as f:
        f.write(whole[:whole.rindex('\n', 0, -1) + 1])
      out = io.StringIO()
      with contextlib.redirect_stdout(out):
        self.assertFalse(run_bsuite.is_finished('deep_sea/0', tmp, 12))
      self.assertIn('its log changed since it was written', out.getvalue())

  def test_an_old_done_record_is_read_and_replaced(self):
    # The bsuite-loop runners wrote '<log>.done' records before one record
    # served every runner: such a unit is still finished, and its next
    # record is the one format.
    with tempfile.TemporaryDirectory() as tmp:
      shutil.copytree(self.directory, tmp, dirs_exist_ok=True)
      log = run_bsuite.csv_path('deep_sea/0', tmp)
      with open(log + '.json') as f:
        record = json.load(f)
      identity = dict(record['identity'])
      del identity['runner']  # as the old records wrote it
      with open(log + '.done', 'w') as f:
        json.dump(dict(record, identity=identity), f)
      os.remove(log + '.json')
      mine = run_bsuite.run_identity('dqn', 'deep_sea/0', 0, {}, 'single')
      self.assertTrue(run_bsuite.is_finished('deep_sea/0', tmp, 12, mine))
      self.assertEqual(unit_files.log_runner(log), 'bsuite')
      self.assertFalse(analyze_bsuite.is_unit_log(log))
      run_bsuite.mark_finished('deep_sea/0', tmp, 12, mine)
      self.assertFalse(os.path.exists(log + '.done'))
      self.assertEqual(unit_files.read_record('deep_sea/0', tmp)['identity'], mine)

  def test_summary_text(self):
    text = run_bsuite.format_summary(self.summary)
    self.assertRegex(text, r'deep_sea/0 \[dqn\] seed 0: 12 episodes, 120 steps, '
                     r'mean return -?\d\.\d{3}, regret \(non-rewarding '
                     r'episodes\) \d+, ')


class SeededEnvironmentTest(absltest.TestCase):
  """bsuite leaves many environments unseeded; ours follow the agent seed."""

  def rollout(self, bsuite_id, seed, steps=60):
    env = results.load_seeded(bsuite_id, seed)
    actions = np.random.RandomState(0).randint(
        env.action_spec().num_values, size=steps)
    rewards, timestep = [], env.reset()
    observations = [np.asarray(timestep.observation)]
    for action in actions:
      timestep = env.reset() if timestep.last() else env.step(action)
      rewards.append(timestep.reward or 0.0)
      observations.append(np.asarray(timestep.observation))
    return np.asarray(rewards), np.stack(observations)

  def test_same_seed_same_run_other_seed_other_run(self):
    for bsuite_id in ('catch/0', 'deep_sea_stochastic/0', 'cartpole/0',
                      'mountain_car_noise/3', 'umbrella_length/0'):
      with self.subTest(bsuite_id):
        rewards, observations = self.rollout(bsuite_id, 0)
        again = self.rollout(bsuite_id, 0)
        np.testing.assert_array_equal(rewards, again[0])
        np.testing.assert_array_equal(observations, again[1])
        other = self.rollout(bsuite_id, 1)
        self.assertFalse(np.array_equal(rewards, other[0]) and
                         np.array_equal(observations, other[1]))

  def test_replicas_of_one_experiment_are_other_runs(self):
    # bsuite's loop seeds each id afresh: catch/1 is not catch/0 again.
    for first, second in (('catch/0', 'catch/1'),
                          ('cartpole_noise/4', 'cartpole_noise/5')):
      with self.subTest(first):
        one, two = self.rollout(first, 0), self.rollout(second, 0)
        self.assertFalse(np.array_equal(one[0], two[0]) and
                         np.array_equal(one[1], two[1]))

  def test_the_environment_seed_is_part_of_a_run_s_identity(self):
    self.assertEqual(units.environment_identity('catch/0', 3), {})
    self.assertEqual(units.environment_identity('deep_sea/4', 3), {})
    self.assertEqual(units.environment_identity('bandit/2', 3), {})
    self.assertEqual(units.environment_identity('catch/2', 3),
                     {'environment_seed': 200003})
    self.assertEqual(units.environment_identity('memory_len/5', 3),
                     {'environment_seed': 0})  # bsuite's loader fixes 0
    # A record written when catch/2's environment took the agent's seed
    # is another run than catch/2's now.
    old = dict(runner='bsuite', loop='single', agent='dqn', seed=3,
               overrides='[]')
    self.assertEqual(run_bsuite.run_identity('dqn', 'catch/0', 3, {},
                                             'single'), old)
    with tempfile.TemporaryDirectory() as tmp:
      with open(run_bsuite.csv_path('catch/2', tmp), 'w') as f:
        f.write('episode,total_return\n5,1.0\n')
      run_bsuite.mark_finished('catch/2', tmp, 5, old)
      with self.assertRaisesRegex(unit_files.AnotherRunError, '--overwrite'):
        run_bsuite.is_finished('catch/2', tmp, 5, run_bsuite.run_identity(
            'dqn', 'catch/2', 3, {}, 'single'))

  def test_fixed_settings_are_kept(self):
    env = results.load_seeded('deep_sea/3', 7)
    self.assertEqual(env._size, 16)
    np.testing.assert_array_equal(
        env._action_mapping,
        np.random.RandomState(42).binomial(1, 0.5, [16, 16]))

  def test_unknown_id(self):
    with self.assertRaisesRegex(ValueError, 'catch/99'):
      results.load_seeded('catch/99', 0)


class CommandLineTest(absltest.TestCase):

  @absltest.skipIf(shutil.which('taskset') is None or
                   len(os.sched_getaffinity(0)) < 2, 'needs taskset, 2 cores')
  def test_same_seed_same_log_on_one_core_and_on_all(self):
    logs = []
    with tempfile.TemporaryDirectory() as tmp:
      for index, prefix in enumerate(([], ['taskset', '-c', '0'])):
        save_path = os.path.join(tmp, str(index))
        result = agent_testing.run_script(
            'experiments.run_bsuite', '--agent=dqn', '--bsuite_id=catch/0',
            '--num_episodes=25', '--progress_every=0',
            f'--save_path={save_path}', prefix=prefix, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        with open(run_bsuite.csv_path('catch/0', os.path.join(
            save_path, 'dqn', 'seed_0'))) as f:
          logs.append(f.read())
    self.assertEqual(logs[0], logs[1])
    self.assertGreater(logs[0].count('\n'), 10)

  def test_a_finished_run_is_skipped_only_for_the_same_run(self):
    with tempfile.TemporaryDirectory() as tmp:
      flags = ('--agent=dqn', '--bsuite_id=deep_sea/0', '--num_episodes=4',
               f'--save_path={tmp}', '--progress_every=0')
      first = run_command(*flags)
      self.assertEqual(first.returncode, 0, first.stderr[-3000:])
      self.assertIn('skipped', run_command(*flags).stdout)
      for other in ('--learning_rate=0.0001', '--seeds=0'):
        with self.subTest(other=other):
          refused = run_command(*flags, other)
          self.assertNotEqual(refused.returncode, 0)
          self.assertIn('records another finished run', refused.stderr)
          self.assertIn('--overwrite', refused.stderr)
          self.assertNotIn('Traceback', refused.stderr)
      redone = run_command(*flags, '--learning_rate=0.0001', '--overwrite')
      self.assertEqual(redone.returncode, 0, redone.stderr[-3000:])
      self.assertIn('skipped',
                    run_command(*flags, '--learning_rate=0.0001').stdout)
      # Another seed is another unit, in its own folder.
      other_seed = run_command(*flags, '--seed=1')
      self.assertEqual(other_seed.returncode, 0, other_seed.stderr[-3000:])
      self.assertTrue(os.path.exists(run_bsuite.csv_path(
          'deep_sea/0', os.path.join(tmp, 'dqn', 'seed_1'))))

  def test_parallel_workers_then_resume_skips_everything(self):
    with tempfile.TemporaryDirectory() as tmp:
      flags = ('--agent=dqn', '--bsuite_id=bandit/0,catch/0,deep_sea/0',
               '--num_episodes=4', f'--save_path={tmp}', '--num_workers=2',
               '--progress_every=0')
      first = run_command(*flags)
      self.assertEqual(first.returncode, 0, first.stderr[-3000:])
      self.assertIn('3 of 3 units to run, with 2 worker(s)', first.stdout)
      df, _ = csv_load.load_bsuite({'dqn': os.path.join(tmp, 'dqn',
                                                        'seed_0')})
      self.assertEqual(set(df.bsuite_id), {'bandit/0', 'catch/0',
                                           'deep_sea/0'})
      self.assertEqual(set(df.groupby('bsuite_id').episode.max()), {4})
      self.assertIn('Summary', first.stdout)
      second = run_command(*flags)
      self.assertEqual(second.returncode, 0, second.stderr[-3000:])
      self.assertIn('0 of 3 units to run', second.stdout)
      self.assertEqual(second.stdout.count('skipped'), 3)
      self.assertNotIn('Summary', second.stdout)  # nothing ran

  def test_killed_run_resumes_without_lost_or_duplicated_episodes(self):
    with tempfile.TemporaryDirectory() as tmp:
      flags = ('--agent=dqn', '--bsuite_id=catch/0', '--num_episodes=400',
               f'--save_path={tmp}', '--progress_every=0')
      path = run_bsuite.csv_path('catch/0', os.path.join(tmp, 'dqn',
                                                         'seed_0'))
      agent_testing.kill_when('experiments.run_bsuite', *flags,
                              ready=lambda: os.path.exists(path),
                              timeout=240, grace=0.5)
      self.assertTrue(os.path.exists(path))
      partial = pd.read_csv(path)
      self.assertLess(partial.episode.max(), 400)  # It really was cut off.
      resumed = run_command(*flags)
      self.assertEqual(resumed.returncode, 0, resumed.stderr[-3000:])
      episodes = pd.read_csv(path).episode.tolist()
      self.assertEqual(episodes, sorted(set(episodes)))
      self.assertEqual(episodes[0], 1)
      self.assertEqual(episodes[-1], 400)

  def test_checkpointed_run_killed_resumes_to_the_uninterrupted_log(self):
    with tempfile.TemporaryDirectory() as tmp:
      common = ('--agent=dqn', '--bsuite_id=deep_sea/0',
                '--num_episodes=600', '--progress_every=0')
      whole = run_command(*common, f'--save_path={tmp}/whole')
      self.assertEqual(whole.returncode, 0, whole.stderr[-3000:])
      flags = common + (f'--save_path={tmp}/cut', '--checkpoint_every=50')
      folder = units.checkpoint_folder(
          'deep_sea/0', os.path.join(tmp, 'cut', 'dqn', 'seed_0'))
      saved = lambda: [int(n) for n in os.listdir(folder) if n.isdigit()
                      ] if os.path.isdir(folder) else []
      agent_testing.kill_when('experiments.run_bsuite', *flags,
                              ready=lambda: any(s >= 200 for s in saved()),
                              timeout=240)
      self.assertTrue(any(s >= 200 for s in saved()), saved())
      # The newest checkpoint made malicious, as a shared results folder can
      # be: its environment a pickle that would run a command, its digest
      # deleted. Restoring reads data only: the command never runs, and the
      # checkpoint counts as damaged (the one before is used).
      newest = max(saved())
      marker = os.path.join(tmp, 'code_ran')
      [metadata] = [os.path.join(root, name) for root, _, names in
                    os.walk(os.path.join(folder, str(newest), 'extra'))
                    for name in names if name == 'metadata']
      with open(metadata) as f:
        extra = json.load(f)
      extra['environment'] = base64.b64encode(pickle.dumps(
          _RunsCode(marker))).decode('ascii')
      with open(metadata, 'w') as f:
        json.dump(extra, f)
      if os.path.exists(os.path.join(folder, f'{newest}.sha256')):
        os.remove(os.path.join(folder, f'{newest}.sha256'))
      # The cut run's folder moved: it resumes where it is now.
      os.rename(os.path.join(tmp, 'cut'), os.path.join(tmp, 'moved'))
      flags = common + (f'--save_path={tmp}/moved', '--checkpoint_every=50')
      folder = units.checkpoint_folder(
          'deep_sea/0', os.path.join(tmp, 'moved', 'dqn', 'seed_0'))
      resumed = run_command(*flags)
      self.assertEqual(resumed.returncode, 0, resumed.stderr[-3000:])
      self.assertFalse(os.path.exists(marker))
      self.assertIn(f'{newest} is unreadable', resumed.stdout)
      self.assertNotIn(f'resuming from episode {newest} ', resumed.stdout)
      self.assertRegex(resumed.stdout,
                       r'deep_sea/0 \[dqn\] seed 0: resuming from episode '
                       r'[1-5]\d\d')
      # The rate counts only the resumed process's steps and says so.
      summary = re.search(r'6000 steps, .* \((\d+) steps/s from episode '
                          r'([1-5]\d\d) on\)', resumed.stdout)
      self.assertIsNotNone(summary, resumed.stdout[-2000:])
      self.assertFalse(os.path.exists(os.path.join(tmp, 'cut')))
      logs = [open(run_bsuite.csv_path('deep_sea/0',
                                       os.path.join(tmp, run, 'dqn',
                                                    'seed_0'))).read()
              for run in ('whole', 'moved')]
      self.assertGreater(logs[0].count('\n'), 30)
      self.assertEqual(logs[1], logs[0])  # row for row
      self.assertFalse(os.path.exists(folder))  # removed once complete
      refused = run_command(*flags, '--seeds=0,1')
      self.assertNotEqual(refused.returncode, 0)
      self.assertIn('--checkpoint_every', refused.stderr)

  def test_a_checkpoint_without_its_digest_falls_back_with_a_line(self):
    with tempfile.TemporaryDirectory() as tmp:
      store = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      for step in (50, 100):
        store.save(step, {'x': np.full(3, step)})
      os.remove(os.path.join(tmp, '100.sha256'))
      reports = []
      step, tree = store.restore_latest(
          lambda step: {'x': np.zeros(3, np.int64)}, report=reports.append)
      self.assertEqual(step, 50)
      np.testing.assert_array_equal(tree['x'], [50] * 3)
      self.assertLen(reports, 1)
      self.assertIn('digest cannot be read', reports[0])
      self.assertIn(os.path.join(tmp, '100'), reports[0])

  def test_a_kill_at_any_moment_of_a_save_keeps_every_complete_step(self):
    # Killed once orbax has named the step (its save complete): the step is
    # restored, its digest already written. Killed before: the step is
    # absent, and its stray digest goes at the next save.
    like = lambda step: {'x': np.zeros(3, np.int64)}
    with tempfile.TemporaryDirectory() as tmp:
      store = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      store.save(50, {'x': np.full(3, 50)})
      manager = store._manager  # pylint: disable=protected-access
      orbax_save = manager.save

      def killed_after_orbax(*args, **kwargs):
        orbax_save(*args, **kwargs)
        manager.wait_until_finished()
        raise KeyboardInterrupt
      with mock.patch.object(manager, 'save', killed_after_orbax):
        with self.assertRaises(KeyboardInterrupt):
          store.save(100, {'x': np.full(3, 100)})
      reports = []
      reopened = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      step, tree = reopened.restore_latest(like, report=reports.append)
      self.assertEqual((step, reports), (100, []))
      np.testing.assert_array_equal(tree['x'], [100] * 3)
      with mock.patch.object(reopened._manager, 'save',  # pylint: disable=protected-access
                             side_effect=KeyboardInterrupt):
        with self.assertRaises(KeyboardInterrupt):
          reopened.save(150, {'x': np.full(3, 150)})
      self.assertEqual(reopened.steps(), [50, 100])
      reopened.save(200, {'x': np.full(3, 200)})
      self.assertFalse(os.path.exists(os.path.join(tmp, '150.sha256')))
      self.assertEqual(reopened.restore_latest(like)[0], 200)

  def test_a_garbled_identity_or_no_readable_checkpoint_sets_the_folder_aside(
      self):
    # An unusable folder must neither stop the command nor be restored:
    # it is moved aside (kept for inspection) with one line, and the unit
    # starts over in a fresh folder.
    like = lambda step: {'x': np.zeros(3, np.int64)}
    with tempfile.TemporaryDirectory() as tmp:
      folder = os.path.join(tmp, 'catch-0')
      store = checkpoints.ChunkCheckpoints(folder, {'run': 1})
      store.save(50, {'x': np.full(3, 50)})
      os.remove(os.path.join(folder, '50.sha256'))
      lines = []
      self.assertIsNone(store.restore_latest(like, report=lines.append))
      self.assertLen(lines, 2)
      self.assertIn('digest cannot be read', lines[0])
      self.assertRegex(lines[1], r'No readable checkpoint in .*catch-0 '
                       r'\(tried 50\): set aside as .*catch-0\.unreadable; '
                       'this unit starts over from its first episode.')
      aside = folder + checkpoints.UNREADABLE_SUFFIX
      self.assertTrue(os.path.isdir(os.path.join(aside, '50')))
      self.assertEqual(store.steps(), [])
      # The fresh folder works: save and restore.
      store.save(10, {'x': np.full(3, 10)})
      step, tree = store.restore_latest(like)
      self.assertEqual(step, 10)
      np.testing.assert_array_equal(tree['x'], [10] * 3)
      with open(os.path.join(folder, checkpoints.IDENTITY_FILE), 'w') as f:
        f.write('{"run": ')
      lines = []
      store = checkpoints.ChunkCheckpoints(folder, {'run': 1},
                                           report=lines.append)
      self.assertLen(lines, 1)
      self.assertRegex(lines[0], r'run.json cannot be read \(JSONDecodeError'
                       r'\): set aside as .*catch-0\.unreadable\.2;')
      self.assertIsNone(store.restore_latest(like, report=lines.append))
      with open(os.path.join(folder, checkpoints.IDENTITY_FILE)) as f:
        self.assertEqual(json.load(f), {'run': 1})

  def test_checkpoints_keep_the_last_two(self):
    # (A kill can land between a save and the deletion of the oldest, so
    # the killed run above may leave three; after each save there are two.)
    with tempfile.TemporaryDirectory() as tmp:
      store = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      for step in (50, 100, 150, 200):
        store.save(step, {'x': np.full(3, step)}, extra={'rows': [step]})
        self.assertLessEqual(len(store.steps()), 2)
      self.assertEqual(store.steps(), [150, 200])
      step, tree, extra = store.restore_latest(
          lambda step: {'x': np.zeros(3, np.int64)}, with_extra=True)
      self.assertEqual((step, extra), (200, {'rows': [200]}))
      np.testing.assert_array_equal(tree['x'], [200] * 3)

  def test_damaged_values_fall_back_to_the_checkpoint_before(self):
    # Bytes flipped in a checkpoint's data that still parse must not be
    # restored without a word (the run would go on from changed weights).
    import jax  # pylint: disable=g-import-not-at-top
    import orbax.checkpoint as ocp  # pylint: disable=g-import-not-at-top
    like = {'x': np.zeros(1000, np.float32)}
    with tempfile.TemporaryDirectory() as tmp:
      store = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      for step in (50, 100):
        store.save(step, {'x': np.arange(1000, dtype=np.float32) + step})
      data_files = [os.path.join(root, name)
                    for root, _, names in os.walk(os.path.join(tmp, '100'))
                    for name in names if os.path.basename(root) == 'd']
      path = max(data_files, key=os.path.getsize)
      with open(path, 'rb') as f:
        original = f.read()
      abstract = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct,
                                        like)

      def silently_changed(position):
        damaged = bytearray(original)
        damaged[position] ^= 0xFF
        with open(path, 'wb') as f:
          f.write(bytes(damaged))
        try:
          # pylint: disable-next=protected-access
          raw = store._manager.restore(100, args=ocp.args.StandardRestore(
              abstract))
        except Exception:  # pylint: disable=broad-except
          return False
        return not np.array_equal(np.asarray(raw['x']),
                                  np.arange(1000, dtype=np.float32) + 100)
      # A damage that orbax restores without an error, values changed.
      self.assertIsNotNone(next((i for i in range(len(original) - 1, 0, -7)
                                 if silently_changed(i)), None))
      reports = []
      step, tree = store.restore_latest(lambda step: like,
                                        report=reports.append)
      self.assertEqual(step, 50)
      np.testing.assert_array_equal(tree['x'],
                                    np.arange(1000, dtype=np.float32) + 50)
      self.assertLen(reports, 1)
      self.assertIn('do not match the digest saved with them', reports[0])
      self.assertIn(os.path.join(tmp, '100'), reports[0])

  def test_a_damaged_extra_falls_back_to_the_checkpoint_before(self):
    with tempfile.TemporaryDirectory() as tmp:
      store = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      for step in (50, 100):
        store.save(step, {'x': np.full(3, step)},
                   extra={'environment': base64.b64encode(json.dumps(
                       {'episode': step}).encode()).decode('ascii')})
      # One character of the newest pickled record changed, as on disk.
      [metadata] = [os.path.join(root, name) for root, _, names in
                    os.walk(os.path.join(tmp, '100', 'extra'))
                    for name in names if name == 'metadata']
      with open(metadata) as f:
        text = f.read()
      encoded = json.loads(text)['environment']
      decode = lambda extra: json.loads(base64.b64decode(
          extra['environment'], validate=True))

      def fails(record):
        try:
          decode({'environment': record})
        except Exception:  # pylint: disable=broad-except
          return True
        return False
      # The first single-character change that breaks the record.
      damaged = next(d for d in (encoded[:i] + c + encoded[i + 1:]
                                 for i in range(len(encoded)) for c in 'Az')
                     if d != encoded and fails(d))
      with open(metadata, 'w') as f:
        f.write(text.replace(encoded, damaged))
      reports = []
      step, tree, extra = store.restore_latest(
          lambda step: {'x': np.zeros(3, np.int64)}, report=reports.append,
          with_extra=True, decode_extra=decode)
      self.assertEqual((step, extra), (50, {'episode': 50}))
      np.testing.assert_array_equal(tree['x'], [50] * 3)
      self.assertLen(reports, 1)
      self.assertIn('100', reports[0])

  def test_diverged_training_stops_with_an_error_and_is_never_finished(self):
    with tempfile.TemporaryDirectory() as tmp:
      for runner in ('bsuite', 'jax'):
        with self.subTest(runner=runner):
          save_path = os.path.join(tmp, runner)
          result = run_command(
              '--agent=dqn', '--bsuite_id=deep_sea/0', '--num_episodes=100',
              '--learning_rate=1e9', '--progress_every=0',
              f'--runner={runner}', f'--save_path={save_path}')
          self.assertEqual(result.returncode, 1, result.stderr[-3000:])
          self.assertRegex(result.stderr, r'deep_sea/0 \[dqn\] seed 0, '
                           r"episode \d+: non-finite values .*\['kernel'\]")
          self.assertNotIn('Traceback', result.stderr)
          finished = [name for _, _, names in os.walk(save_path)
                      for name in names
                      if name.endswith(('.done', '.csv.json'))]
          self.assertEmpty(finished)

  def test_bad_hyperparameter_values_are_refused_before_any_folder(self):
    with tempfile.TemporaryDirectory() as tmp:
      save_path = os.path.join(tmp, 'never')
      for flags, message in (
          (['--learning_rate=inf'], '`learning_rate` must be finite'),
          (['--learning_rate=nan'], '`learning_rate` must be finite'),
          (['--batch_size=64', '--replay_capacity=10'],
           '`batch_size` must be <= replay_capacity=10, got 64')):
        with self.subTest(flags=flags):
          result = run_command('--agent=dqn', *flags,
                               f'--save_path={save_path}')
          self.assertNotEqual(result.returncode, 0)
          self.assertIn(message, result.stderr)
          self.assertNotIn('Traceback', result.stderr)
          self.assertFalse(os.path.exists(save_path))

  def test_bad_flags_are_named(self):
    result = run_command('--agent=dqn', '--bsuite_id=NOPE')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--bsuite_id', result.stderr)
    self.assertNotIn('Traceback', result.stderr)
    result = run_command('--agent=dqn', '--bsuite_id=deep_sea/99')
    self.assertIn('deep_sea has deep_sea/0 .. deep_sea/20', result.stderr)
    self.assertIn('print(sweep.SWEEP)', result.stderr)
    self.assertNotIn('Traceback', result.stderr)
    with tempfile.NamedTemporaryFile() as file:
      result = run_command('--agent=dqn', '--num_episodes=2',
                           f'--save_path={file.name}/results')
      self.assertNotEqual(result.returncode, 0)
      self.assertIn(f'--save_path: {file.name} is a file, not a folder',
                    result.stderr)
      self.assertNotIn('Traceback', result.stderr)
    result = run_command('--agent=dqn', '--num_workers=0')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('num_workers', result.stderr)
    result = run_command('--agent=dqn', '--num_atoms=11')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--num_atoms is not a hyperparameter of dqn', result.stderr)

  def test_flags_of_the_other_runner_are_refused_by_name(self):
    # --runner=jax --checkpoint_every=5 must not run without checkpoints.
    result = run_command('--agent=dqn', '--runner=jax', '--checkpoint_every=5',
                         '--verbose')
    self.assertEqual(result.returncode, 1)
    self.assertIn('--runner=jax does not read --checkpoint_every (use '
                  '--checkpoint_seconds), --verbose: they belong to '
                  '--runner=bsuite.', result.stderr)
    self.assertNotIn('Traceback', result.stderr)
    result = run_command('--agent=dqn', '--episodes_per_call=30')
    self.assertEqual(result.returncode, 1)
    self.assertIn('--runner=bsuite does not read --episodes_per_call',
                  result.stderr)

  def test_num_episodes_is_the_budget_of_both_runners(self):
    # bsuite's run.py flag: a user's --num_episodes=N means N episodes
    # whichever runner trains, on deep sea and on the ports alike.
    with tempfile.TemporaryDirectory() as tmp:
      for runner, bsuite_id in (('bsuite', 'bandit/0'), ('jax', 'bandit/0'),
                                ('jax', 'deep_sea/0')):
        with self.subTest(runner=runner, bsuite_id=bsuite_id):
          save_path = os.path.join(tmp, runner, bsuite_id.replace('/', '_'))
          jax_only = ('--nostop_when_solved',) if runner == 'jax' else ()
          result = run_command(
              '--agent=dqn', f'--bsuite_id={bsuite_id}', '--num_episodes=30',
              '--progress_every=0', f'--runner={runner}',
              f'--save_path={save_path}', *jax_only)
          self.assertEqual(result.returncode, 0, result.stderr[-3000:])
          logs = [os.path.join(d, f) for d, _, files in os.walk(save_path)
                  for f in files if f.endswith('.csv')]
          self.assertLen(logs, 1)
          self.assertEqual(pd.read_csv(logs[0])['episode'].max(), 30)

  def test_a_unit_being_run_is_refused_by_every_runner(self):
    # Without a lock on the plain runner, two runs of one id and folder
    # crash on the shared temporary file or leave one run's marker over
    # the other's log.
    with tempfile.TemporaryDirectory() as tmp:
      for flags, folder in (((), os.path.join('dqn', 'seed_0')),
                            (('--seeds=3,4',), os.path.join('dqn', 'seed_4')),
                            (('--runner=jax', '--seeds=4'),
                             os.path.join('dqn', 'seed_4'))):
        with self.subTest(flags=flags), unit_files.unit_lock(
            'deep_sea/0', os.path.join(tmp, folder), 'the test'):
          result = run_command('--agent=dqn', '--bsuite_id=deep_sea/0',
                               f'--save_path={tmp}', *flags)
          self.assertEqual(result.returncode, 1, result.stderr[-2000:])
          self.assertIn('is being run by another process', result.stderr)
          self.assertNotIn('Traceback', result.stderr)
          self.assertFalse(os.path.exists(run_bsuite.csv_path(
              'deep_sea/0', os.path.join(tmp, folder))))

  def test_a_unit_of_another_runner_is_refused_not_overwritten(self):
    # The lockstep and jitted runners write the same seed_K log with
    # different markers: neither may overwrite the other's finished log
    # (the other's marker would then vouch for the wrong log).
    with tempfile.TemporaryDirectory() as tmp:
      common = ('--agent=dqn', '--bsuite_id=deep_sea/0', '--progress_every=0',
                f'--save_path={tmp}')
      log = run_bsuite.csv_path('deep_sea/0', os.path.join(tmp, 'dqn',
                                                          'seed_1'))
      jax_run = run_command(*common, '--runner=jax', '--seeds=1',
                            '--num_episodes=20')
      self.assertEqual(jax_run.returncode, 0, jax_run.stderr[-2000:])
      with open(log) as f:
        written = f.read()
      lockstep = run_command(*common, '--seeds=0,1', '--num_episodes=20')
      self.assertEqual(lockstep.returncode, 1)
      self.assertIn('was written by --runner=jax', lockstep.stderr)
      self.assertIn('Use --overwrite to replace it', lockstep.stderr)
      self.assertNotIn('Traceback', lockstep.stderr)
      with open(log) as f:
        self.assertEqual(f.read(), written)
      replaced = run_command(*common, '--seeds=0,1', '--num_episodes=20',
                             '--overwrite')
      self.assertEqual(replaced.returncode, 0, replaced.stderr[-2000:])
      # One record for every runner: now the lockstep runner's.
      self.assertEqual(unit_files.log_runner(log), 'bsuite')
      self.assertFalse(os.path.exists(log + '.done'))
      # And the other way round.
      again = run_command(*common, '--runner=jax', '--seeds=1',
                          '--num_episodes=20')
      self.assertEqual(again.returncode, 1)
      self.assertIn('was written by --runner=bsuite', again.stderr)

  def test_usage_errors_are_one_line_not_the_help(self):
    # A usage error is one line, not ~290 lines of flag help first, and
    # --hidden_sizes=abc no ValueError traceback.
    for flags, message in (
        (('--hidden_sizes=abc',),
         '--hidden_sizes must be comma-separated ints, got \'abc\''),
        (('--num_atoms=11',), '--num_atoms is not a hyperparameter of dqn')):
      with self.subTest(flags=flags):
        result = run_command('--agent=dqn', *flags)
        self.assertEqual(result.returncode, 1)
        self.assertIn(message, result.stderr)
        self.assertIn('See --help for the flags.', result.stderr)
        self.assertNotIn('Traceback', result.stderr)
        self.assertLess(len(result.stderr.strip().splitlines()), 4,
                        result.stderr)

  def test_ctrl_c_and_sigterm_say_where_to_resume(self):
    # No KeyboardInterrupt traceback; and a Ctrl-C in the first seconds
    # is not swallowed by jaxlib's start-up (the run would go on).
    for signum, when in ((signal.SIGINT, 'starting'),
                         (signal.SIGINT, 'training'),
                         (signal.SIGTERM, 'training')):
      with self.subTest(signal=signum.name, when=when), \
          tempfile.TemporaryDirectory() as tmp:
        process = subprocess.Popen(
            command('--agent=dqn', '--bsuite_id=deep_sea/0',
                    '--num_episodes=100000', '--progress_every=0.5',
                    f'--save_path={tmp}'),
            cwd=agent_testing.ROOT, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
          if when == 'starting':
            time.sleep(2)  # importing jax and the agents
          else:
            for line in process.stdout:
              if 'steps/s' in line:
                break
          process.send_signal(signum)
          _, stderr = process.communicate(timeout=240)
        finally:
          process.kill()
        self.assertEqual(process.returncode, 130, stderr[-2000:])
        self.assertIn('run_bsuite.py: stopped. Finished results are kept; '
                      'the same command continues the rest', stderr)
        self.assertNotIn('Traceback', stderr)

  def test_ray_backend_without_ray_is_one_line(self):
    # One line, not an ImportError traceback. A package named ray that
    # fails to import stands in for a machine without Ray.
    with tempfile.TemporaryDirectory() as tmp:
      os.makedirs(os.path.join(tmp, 'ray'))
      with open(os.path.join(tmp, 'ray', '__init__.py'), 'w') as f:
        f.write('raise ImportError("No module named ray")\n')
      env = dict(os.environ, PYTHONPATH=os.pathsep.join(
          [tmp, agent_testing.ROOT, os.environ.get('PYTHONPATH', '')]))
      result = agent_testing.run_script(
          'experiments.run_bsuite', '--agent=dqn', '--bsuite_id=deep_sea/0',
          '--num_episodes=2', '--backend=ray', f'--save_path={tmp}/out',
          env=env, timeout=300)
      self.assertEqual(result.returncode, 1, result.stderr[-2000:])
      self.assertIn('--backend=ray needs Ray: pip install -e ".[ray]"',
                    result.stderr)
      self.assertNotIn('Traceback', result.stderr)

  def test_seeds_beyond_a_32_bit_key_are_refused(self):
    # --seeds=4294967296 must not train seed 0 under another name.
    result = run_command('--agent=dqn', '--runner=jax',
                         '--seeds=4294967296')
    self.assertEqual(result.returncode, 1)
    self.assertIn('--seeds must be distinct ints in [0, 4294967295]',
                  result.stderr)
    result = run_command('--agent=dqn', '--seed=4294967296')
    self.assertEqual(result.returncode, 1)
    self.assertIn('seed', result.stderr)
    self.assertNotIn('Traceback', result.stderr)


if __name__ == '__main__':
  absltest.main()
