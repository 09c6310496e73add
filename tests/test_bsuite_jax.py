"""experiments.lib.bsuite_jax: bsuite's logs and solve rule on the jitted runner."""

import ast
import contextlib
import functools
import glob
import io
import json
import os
import re
import subprocess
import sys
import tempfile

from absl.testing import absltest
from bsuite import sweep
from bsuite.experiments.deep_sea import analysis as deep_sea_analysis
from bsuite.experiments.deep_sea_stochastic import analysis as stochastic_analysis
from bsuite.logging import csv_load
from bsuite.logging import csv_logging
from bsuite.utils import wrappers
from dm_env import specs
import bsuite
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import agents
from agents import pure
from agents import training
from experiments import analyze_bsuite
from experiments.lib import bsuite_jax
from experiments.lib import checkpoints
from experiments.lib import deep_sea_scores
from experiments.lib import suite_jax
from experiments.lib import unit_files
from pe_jax import envs
from pe_jax.envs import deep_sea as jax_deep_sea
from tests import agent_testing

SMALL = dict(agent_testing.SMALL_REPLAY, hidden_sizes=(8,), num_ensemble=2)


def recorded_run(bsuite_id, seed, episodes, agent_name='boot_dqn',
                 overrides=None):
  """Per-episode stats and actions of the jitted runner on `bsuite_id`."""
  settings = sweep.SETTINGS[bsuite_id]
  size = settings['size']
  agent = agents.make_pure(agent_name,
                           specs.Array((size, size), np.uint8),
                           specs.DiscreteArray(2), num_episodes=10_000,
                           **(SMALL if overrides is None else overrides))
  env = jax_deep_sea.DeepSea(size)
  train = training.make_train(agent, env, episodes, record_actions=True)
  mapping = jax_deep_sea.bsuite_action_mapping(size, settings['mapping_seed'])
  carry = pure.jit_init(train.init)(jax.random.PRNGKey(seed),
                                    jnp.asarray(mapping))
  _, stats = jax.jit(train.run)(carry)
  return jax.tree_util.tree_map(np.asarray, stats)


class LogTest(absltest.TestCase):

  def test_log_points_are_bsuites(self):
    self.assertEqual(list(bsuite_jax.log_episodes(30)),
                     [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 17, 20, 25, 30])
    self.assertEqual(list(bsuite_jax.log_episodes(10_000)[-4:]),
                     [7000, 8000, 9000, 10_000])

  def test_csv_equals_bsuites_logger_row_for_row(self):
    """The same actions in bsuite's own deep sea, logged by bsuite's own
    wrapper and csv logger, give the same file up to float32 returns."""
    stats = recorded_run('deep_sea/0', seed=0, episodes=100, overrides={})
    with tempfile.TemporaryDirectory() as tmp:
      logger = csv_logging.Logger('deep_sea/0', os.path.join(tmp, 'bsuite'))
      env = wrappers.Logging(bsuite.load_from_id('deep_sea/0'), logger)
      for actions in stats.actions:
        env.reset()
        for action in actions:
          env.step(int(action))
      ours = os.path.join(tmp, 'ours')
      bsuite_jax.write_unit('deep_sea/0', ours, bsuite_jax.log_rows(
          stats.episode_return, stats.total_bad_episodes,
          stats.denoised_return, 10), {})
      theirs = pd.read_csv(bsuite_jax.csv_path('deep_sea/0',
                                               os.path.join(tmp, 'bsuite')))
      mine = pd.read_csv(bsuite_jax.csv_path('deep_sea/0', ours))
    self.assertEqual(list(mine.columns), list(theirs.columns))
    self.assertEqual(len(mine), len(theirs))
    self.assertGreater(theirs.total_bad_episodes.iloc[-1], 0)
    self.assertGreater(theirs.denoised_return.iloc[-1], 0)  # both kinds
    for column in ('steps', 'episode', 'episode_len', 'total_bad_episodes',
                   'denoised_return'):
      np.testing.assert_array_equal(mine[column], theirs[column], column)
    for column in ('total_return', 'episode_return'):
      np.testing.assert_allclose(mine[column], theirs[column], atol=1e-5)


class StochasticLogTest(absltest.TestCase):

  def test_same_columns_and_log_points_as_bsuites_logger(self):
    """deep_sea_stochastic's noise is drawn differently here (JAX keys, not
    bsuite's RandomState), so the rows differ; their shape must not."""
    with tempfile.TemporaryDirectory() as tmp:
      [record] = bsuite_jax.run_id('boot_dqn', 'deep_sea_stochastic/0', [0],
                                   tmp, overrides=SMALL, max_episodes=40,
                                   episodes_per_call=20, progress_every=0)
      self.assertTrue(record['censored'])
      ours = pd.read_csv(bsuite_jax.csv_path(
          'deep_sea_stochastic/0', os.path.join(tmp, 'boot_dqn', 'seed_0')))
      logger = csv_logging.Logger('deep_sea_stochastic/0',
                                  os.path.join(tmp, 'bsuite'))
      env = wrappers.Logging(bsuite.load_from_id('deep_sea_stochastic/0'),
                             logger)
      rng = np.random.RandomState(0)
      for _ in range(40):
        timestep = env.reset()
        while not timestep.last():
          timestep = env.step(int(rng.randint(2)))
      theirs = pd.read_csv(bsuite_jax.csv_path('deep_sea_stochastic/0',
                                               os.path.join(tmp, 'bsuite')))
    self.assertEqual(list(ours.columns), list(theirs.columns))
    np.testing.assert_array_equal(ours.episode, theirs.episode)
    np.testing.assert_array_equal(ours.steps, theirs.steps)
    self.assertTrue(np.all(np.diff(ours.total_bad_episodes) >= 0))
    self.assertTrue(np.all(ours.total_bad_episodes <= ours.episode))


def hand_log(bad, size=10):
  """A log of len(bad) episodes with these bad-episode counters."""
  bad = np.asarray(bad)
  return bsuite_jax.log_rows(np.zeros(len(bad)), bad, np.zeros(len(bad)), size)


def bsuite_solution(rows, bsuite_id):
  """bsuite's own find_solution on our rows: (episode, solved)."""
  df = pd.DataFrame(rows)
  df['size'] = sweep.SETTINGS[bsuite_id]['size']
  analysis = (stochastic_analysis if 'stochastic' in bsuite_id else
              deep_sea_analysis)
  analyze_bsuite.restore_series_append()
  found = analysis.find_solution(df)
  return int(found.episode.iloc[0]), bool(found.solved.iloc[0])


class SolveRuleTest(absltest.TestCase):

  def test_hand_made_logs_agree_with_bsuites_find_solution(self):
    cases = [
        # always bad: never solved
        np.arange(1, 301),
        # treasure every episode from 50 on: 49 bad, 49/e < 0.9 first at
        # log point 60 (49/50 = 0.98, 49/60 = 0.82)
        np.minimum(np.arange(1, 301), 49),
        # good from 30: 29/30 fails; 29/40 = 0.725 passes at 40
        np.minimum(np.arange(1, 201), 29),
        # good early, for the stochastic rule's episode 100 floor
        np.minimum(np.arange(1, 400), 5),
        # 0.8 < ratio < 0.9 for a while: deep sea solves, stochastic later
        np.concatenate([np.arange(1, 101), 100 + np.arange(1, 301) * 0.85
                        ]).astype(int),
    ]
    for index, bad in enumerate(cases):
      for bsuite_id in ('deep_sea/0', 'deep_sea_stochastic/0'):
        with self.subTest(case=index, bsuite_id=bsuite_id):
          experiment = bsuite_id.split('/')[0]
          ours = bsuite_jax.solved_episode(bad, experiment)
          episode, solved = bsuite_solution(hand_log(bad), bsuite_id)
          self.assertEqual(ours is not None, solved)
          if solved:
            self.assertEqual(ours, episode)
    self.assertEqual(bsuite_jax.solved_episode(cases[1], 'deep_sea'), 60)
    self.assertEqual(bsuite_jax.solved_episode(cases[2], 'deep_sea'), 40)
    self.assertEqual(bsuite_jax.solved_episode(cases[3],
                                               'deep_sea_stochastic'), 100)


def command(*flags):
  """A small jitted-runner run_bsuite command: module, then its flags."""
  return ['experiments.run_bsuite', '--runner=jax', '--agent=boot_dqn',
          '--progress_every=0', '--hidden_sizes=8', '--num_ensemble=2',
          '--batch_size=16', '--min_replay_size=16', '--replay_capacity=1000',
          *flags]


class RunIdTest(absltest.TestCase):

  def test_short_run_stops_where_bsuite_says_solved(self):
    with tempfile.TemporaryDirectory() as tmp:
      # bsuite's BDQN+P defaults solve deep sea 10 near episode 80. Whole
      # runs, so at XLA's defaults, as `run_bsuite` runs them (at this
      # process's level 0 the two took 51 s against 28 s).
      records, printed = agent_testing.in_fresh_process(
          'run_id_printed', 'boot_dqn', 'deep_sea/0', [0, 1], tmp,
          max_episodes=150, episodes_per_call=25, progress_every=1e-9)
      self.assertLen(records, 2)
      self.check_progress_lines(printed, records)
      for seed, record in zip((0, 1), records):
        directory = os.path.join(tmp, 'boot_dqn', f'seed_{seed}')
        log = pd.read_csv(bsuite_jax.csv_path('deep_sea/0', directory))
        if record['solved_episode'] is None:
          self.assertTrue(record['censored'])
          self.assertEqual(record['episodes'], 150)
          continue
        self.assertFalse(record['censored'])
        self.assertEqual(log.episode.iloc[-1], record['solved_episode'])
        episode, solved = bsuite_solution(log.to_dict('records'),
                                          'deep_sea/0')
        self.assertTrue(solved)
        self.assertEqual(episode, record['solved_episode'])
        # bsuite's loader reads it as an id of the sweep.
        df, _ = csv_load.load_bsuite({'x': directory})
        self.assertEqual(set(df.bsuite_id), {'deep_sea/0'})
      self.assertTrue(any(r['solved_episode'] for r in records))
      # A seed alone gives the same log as in the group (lax.map).
      alone = os.path.join(tmp, 'alone')
      (alone_record,), _ = agent_testing.in_fresh_process(
          'run_id_printed', 'boot_dqn', 'deep_sea/0', [1], alone,
          max_episodes=150, episodes_per_call=25, progress_every=0)
      # Each record names the seeds that shared its program (its cost).
      self.assertEqual([r['run_seeds'] for r in records], [[0, 1]] * 2)
      self.assertEqual(alone_record['run_seeds'], [1])
      with open(bsuite_jax.csv_path('deep_sea/0', os.path.join(
          tmp, 'boot_dqn', 'seed_1'))) as f, open(bsuite_jax.csv_path(
              'deep_sea/0', os.path.join(alone, 'boot_dqn', 'seed_1'))) as g:
        self.assertEqual(f.read(), g.read())

  def check_progress_lines(self, printed, records):
    """A line per chunk while a seed runs, naming its first find once made
    (the finds come a chunk or more before the solve)."""
    lines = re.findall(r'seed (\d+): (\d+) ep\., regret \d+, first find '
                       r'(\w+)', printed)
    for seed in (0, 1):
      self.assertEqual(
          [int(e) for s, e, _ in lines if int(s) == seed],
          list(range(25, records[seed]['episodes'], 25)), printed)
    # Both kinds of line occur: before and after a find.
    self.assertEqual({shown == 'none' for _, _, shown in lines},
                     {True, False}, printed)
    for seed, episodes, shown in lines:
      first = records[int(seed)]['first_treasure_episode']
      expected = (str(first) if first is not None and first <= int(episodes)
                  else 'none')
      self.assertEqual(shown, expected, (seed, episodes))

  def test_censored_runs_are_never_finished(self):
    with tempfile.TemporaryDirectory() as tmp:
      [record] = bsuite_jax.run_id('boot_dqn', 'deep_sea/10', [0], tmp,
                                   overrides=SMALL, max_episodes=20,
                                   episodes_per_call=10, progress_every=0)
      self.assertIsNone(record['solved_episode'])
      self.assertTrue(record['censored'])
      self.assertIn('unsolved at 20 episodes (censored)',
                    bsuite_jax.describe(record))
      # A larger budget runs it again; the same budget skips it.
      marker = bsuite_jax.read_marker('deep_sea/10', os.path.join(
          tmp, 'boot_dqn', 'seed_0'))
      self.assertTrue(bsuite_jax.is_done(marker, 20))
      self.assertFalse(bsuite_jax.is_done(marker, 30))
      # Another run's marker is refused, not silently taken.
      with self.assertRaisesRegex(ValueError, 'holds another run'):
        bsuite_jax.run_id('boot_dqn', 'deep_sea/10', [0], tmp,
                          overrides=dict(SMALL, learning_rate=1e-4),
                          max_episodes=20, progress_every=0)

  def test_a_unit_trained_under_other_defaults_is_refused(self):
    with tempfile.TemporaryDirectory() as tmp:
      run = functools.partial(bsuite_jax.run_id, 'boot_dqn', 'deep_sea/10',
                              [0], tmp, overrides=SMALL, max_episodes=10,
                              episodes_per_call=10, progress_every=0)
      [record] = run()
      directory = os.path.join(tmp, 'boot_dqn', 'seed_0')
      path = bsuite_jax.marker_path('deep_sea/10', directory)
      # The resolved config, defaults included, not only the overrides.
      prior_scale = agents.defaults('boot_dqn')['prior_scale']
      self.assertEqual(record['config']['prior_scale'], repr(prior_scale))
      self.assertEqual(record['config']['batch_size'], '16')
      self.assertEqual(record['batching'], 'map')

      def rewrite(edit):
        with open(path) as f:
          marker = json.load(f)
        edit(marker)
        with open(path, 'w') as f:
          json.dump(marker, f)

      # As if the default prior scale had been another when the unit ran.
      rewrite(lambda m: m['config'].update(prior_scale='0.25'))
      with self.assertRaisesRegex(
          ValueError, 'other hyperparameters.*prior_scale: 0.25 -> '
          f'{prior_scale!r}'):
        run()
      # A record from before the layout version (1): a field removed since
      # is the same run at the setting the code kept, another run at any
      # other; a marker from before configs were recorded is taken as it is.
      def version_1(**fields):
        def edit(marker):
          marker['config'].pop(bsuite_jax.SCHEMA_KEY, None)
          marker['config'].update(prior_scale=repr(prior_scale), **fields)
        return edit
      rewrite(version_1(center_intrinsic='False'))
      self.assertEqual(run()[0]['episodes'], 10)
      rewrite(version_1(center_intrinsic='True'))
      with self.assertRaisesRegex(
          ValueError, 'center_intrinsic: True -> [(]no such field today'):
        run()
      rewrite(lambda m: m.pop('config'))
      self.assertEqual(run()[0]['episodes'], 10)

  def test_config_changes_compare_records_of_any_layout_version(self):
    def today(**fields):
      return dict(fields, **{bsuite_jax.SCHEMA_KEY: '2'})
    changes = bsuite_jax.config_changes
    self.assertEqual(changes(today(a='1', b='2'), today(a='1', b='3')),
                     ['b: 2 -> 3'])
    # Today's layout: a field only one side has is a change.
    self.assertEqual(changes(today(a='1'), today(a='1', c='4')),
                     ['c: (not recorded) -> 4'])
    self.assertEqual(changes(today(a='1', gone='1'), today(a='1')),
                     ['gone: 1 -> (no such field today)'])
    # Version 1 (no version entry): a field added since reads as its old
    # behaviour's value; a field removed since is dropped at its kept value.
    self.assertEqual(changes({'a': '1'}, today(a='1', rho_clip='None')), [])
    self.assertEqual(changes({'a': '1'}, today(a='1', rho_clip='0.25')),
                     ['rho_clip: None -> 0.25'])
    self.assertEqual(changes({'a': '1'}, today(a='1', c='4')),
                     ['c: (not recorded) -> 4'])
    self.assertEqual(changes({'a': '1', 'episodic_bonus': 'True'},
                             today(a='1')), [])
    # The version-1 fill applies only to fields the agent has today.
    self.assertNotIn('dltv_clock', bsuite_jax.upgraded_config(
        {'a': '1'}, ('a', 'rho_clip')))
    with self.assertRaisesRegex(ValueError, 'newer than this code'):
      changes({bsuite_jax.SCHEMA_KEY: '99'}, today())

  def test_a_half_done_run_from_before_a_field_was_added_resumes(self):
    # Its checkpoint folder records the config without the field: the same
    # run if the field holds the value that computes what it computed.
    recorded = dict(agent='pe_dqn', seed=3, batching='map',
                    config={'discount': '0.99'})
    def today(seed=3, **fields):
      return dict(recorded, seed=seed,
                  config=dict(recorded['config'], **fields,
                              **{bsuite_jax.SCHEMA_KEY: '2'}))
    with tempfile.TemporaryDirectory() as tmp:
      checkpoints.ChunkCheckpoints(tmp, recorded)
      reopen = functools.partial(
          checkpoints.ChunkCheckpoints, tmp,
          differences=bsuite_jax.checkpoint_differences)
      reopen(today(rho_clip='None'))
      for identity, named in [
          (today(rho_clip='0.25'), 'rho_clip'),
          (today(seed=4, rho_clip='None'), 'seed: 3 -> 4'),
          (today(discount='0.9'), 'discount: 0.99 -> 0.9')]:
        with self.subTest(named), self.assertRaisesRegex(ValueError, named):
          reopen(identity)
      # Without the rule, any difference is another run.
      with self.assertRaisesRegex(ValueError, 'belongs to another run'):
        checkpoints.ChunkCheckpoints(tmp, today(rho_clip='None'))

  def test_a_damaged_log_is_run_again_not_skipped(self):
    # The marker records its log, so a log cut short does not read as a
    # finished unit (the scores would be silently wrong).
    with tempfile.TemporaryDirectory() as tmp:
      run = lambda: bsuite_jax.run_id(
          'boot_dqn', 'deep_sea/0', [0], tmp, overrides=SMALL,
          max_episodes=30, stop_when_solved=False, episodes_per_call=10,
          progress_every=0)
      directory = os.path.join(tmp, 'boot_dqn', 'seed_0')
      path = bsuite_jax.csv_path('deep_sea/0', directory)
      run()
      with open(path) as f:
        whole = f.read()
      marker = bsuite_jax.read_marker('deep_sea/0', directory)
      self.assertEqual(marker['csv_rows'], whole.count('\n') - 1)
      with open(path, 'w') as f:
        f.write(whole[:whole.rindex('\n', 0, -1) + 1])  # last row cut
      out = io.StringIO()
      with contextlib.redirect_stdout(out):
        run()
      self.assertIn('its log changed since it was written', out.getvalue())
      self.assertIn('running it again', out.getvalue())
      with open(path) as f:
        self.assertEqual(f.read(), whole)
      # A marker written before fingerprints: the log must reach its last
      # log point.
      del marker['csv_rows'], marker['csv_sha256']
      with open(bsuite_jax.marker_path('deep_sea/0', directory), 'w') as f:
        json.dump(marker, f)
      self.assertEqual(unit_files.csv_mismatch(path, marker, 30), '')
      with open(path, 'w') as f:
        f.write(whole[:whole.rindex('\n', 0, -1) + 1])
      self.assertEqual(unit_files.csv_mismatch(path, marker, 30),
                       'its log ends at episode 25, not 30')
      # The scores never count it either.
      out = io.StringIO()
      with contextlib.redirect_stdout(out):
        self.assertEmpty(deep_sea_scores.load_units(tmp))
      self.assertIn('its log ends at episode 25, not 30', out.getvalue())
      with open(bsuite_jax.marker_path('deep_sea/0', directory), 'w') as f:
        f.write('{"identity": ')  # torn
      out = io.StringIO()
      with contextlib.redirect_stdout(out):
        self.assertIsNone(bsuite_jax.read_marker('deep_sea/0', directory))
      self.assertIn('cannot be read (JSONDecodeError', out.getvalue())

  def test_a_unit_held_by_another_process_is_refused(self):
    with tempfile.TemporaryDirectory() as tmp:
      directory = os.path.join(tmp, 'boot_dqn', 'seed_0')
      path = bsuite_jax.lock_path('deep_sea/10', directory)
      os.makedirs(os.path.dirname(path))
      holder = subprocess.Popen(
          [sys.executable, '-c', 'import filelock, sys, time; '
           f'lock = filelock.FileLock({path!r}); lock.acquire(); '
           'print("held", flush=True); time.sleep(120)'],
          stdout=subprocess.PIPE, text=True)
      try:
        self.assertEqual(holder.stdout.readline().strip(), 'held')
        with self.assertRaisesRegex(ValueError,
                                    'seed 0 is being run by another process'):
          bsuite_jax.run_id('boot_dqn', 'deep_sea/10', [0, 1], tmp,
                            overrides=SMALL, max_episodes=10,
                            episodes_per_call=10, progress_every=0)
        # Refused before anything was written for either seed.
        for seed in (0, 1):
          self.assertIsNone(bsuite_jax.read_marker('deep_sea/10', os.path.join(
              tmp, 'boot_dqn', f'seed_{seed}')))
      finally:
        holder.kill()
        holder.wait()
      # The holder is gone (as after a crash): the unit runs.
      [record] = bsuite_jax.run_id('boot_dqn', 'deep_sea/10', [0], tmp,
                                   overrides=SMALL, max_episodes=10,
                                   episodes_per_call=10, progress_every=0)
      self.assertEqual(record['episodes'], 10)

  def test_killed_run_resumes_to_the_same_log(self):
    flags = ('--bsuite_id=deep_sea/4', '--seeds=0', '--num_episodes=600',
             '--episodes_per_call=5', '--checkpoint_seconds=1',
             '--stop_when_solved=false')
    with tempfile.TemporaryDirectory() as tmp:
      whole = agent_testing.run_script(*command(*flags, f'--save_path={tmp}/a'), timeout=600)
      self.assertEqual(whole.returncode, 0, whole.stderr[-3000:])
      checkpoints = os.path.join(tmp, 'b', 'boot_dqn', 'seed_0',
                                 bsuite_jax.CHECKPOINTS, 'deep_sea-4')
      # orbax names a checkpoint by its step only once it is complete.
      agent_testing.kill_when(
          *command(*flags, f'--save_path={tmp}/b'),
          ready=lambda: os.path.isdir(checkpoints) and any(
              name.isdigit() for name in os.listdir(checkpoints)))
      self.assertTrue(os.path.isdir(checkpoints))
      resumed = agent_testing.run_script(*command(*flags, f'--save_path={tmp}/b'), timeout=600)
      self.assertEqual(resumed.returncode, 0, resumed.stderr[-3000:])
      self.assertIn('resuming at episode', resumed.stdout)
      resumed_at = int(re.search(r'resuming at episode (\d+)',
                                 resumed.stdout)[1])
      logs, records = [], []
      for name in ('a', 'b'):
        directory = os.path.join(tmp, name, 'boot_dqn', 'seed_0')
        with open(bsuite_jax.csv_path('deep_sea/4', directory)) as f:
          logs.append(f.read())
        with open(bsuite_jax.marker_path('deep_sea/4', directory)) as f:
          records.append(json.load(f))
      self.assertEqual(logs[0], logs[1])
      self.assertEqual([r['episodes'] for r in records], [600, 600])
      # The record says its seconds cover the episodes from the resume on.
      self.assertEqual([r['resumed_at_episode'] for r in records],
                       [0, resumed_at])
      self.assertGreater(resumed_at, 0)
      self.assertFalse(os.path.exists(checkpoints))
      again = agent_testing.run_script(*command(*flags, f'--save_path={tmp}/b'), timeout=600)
      self.assertIn('skipped', again.stdout)

  def test_unknown_ids_are_refused_with_the_flag_named(self):
    result = agent_testing.run_script(*command('--bsuite_id=catch/99', '--save_path=/x'), timeout=300)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--bsuite_id', result.stderr)
    self.assertIn('catch/99', result.stderr)
    self.assertNotIn('Traceback', result.stderr)



class CommittedUnitsTest(absltest.TestCase):

  def test_committed_units_were_trained_with_todays_configs(self):
    # The README's tables (docs/results/bsuite) hold only while the agents
    # compute what they computed: a default changed since a unit ran makes
    # it stale (rerun it with --overwrite). Studies elsewhere under
    # docs/results keep the configs they record. Today's code reproduces
    # those units bit for bit (pe_dqn deep_sea/2 seeds 0-2; boot_dqn and
    # tdu deep_sea/0).
    paths = sorted(glob.glob(os.path.join(
        agent_testing.ROOT, 'docs', 'results', 'bsuite', '*', 'seed_*',
        '*.csv.json')))
    self.assertGreater(len(paths), 100)
    configs = {}
    for path in paths:
      with open(path) as f:
        record = json.load(f)
      identity = record['identity']
      key = (identity['agent'], identity['bsuite_id'], identity['overrides'])
      if key not in configs:
        overrides = dict(ast.literal_eval(identity['overrides']))
        bsuite_id = identity['bsuite_id']
        if bsuite_id.split('/')[0] in bsuite_jax.EXPERIMENTS:
          agent = bsuite_jax.build_agent(identity['agent'], bsuite_id,
                                         overrides, identity['horizon'])
        else:  # the exact ports' runner
          agent = suite_jax.build_agent(identity['agent'], bsuite_id,
                                        envs.load(bsuite_id), overrides,
                                        identity['horizon'])
        configs[key] = bsuite_jax.config_record(agent.config)
      with self.subTest(path=os.path.relpath(path, agent_testing.ROOT)):
        self.assertIn(record.get('batching'), training.BATCHINGS)
        # Every committed record is in today's layout (migrated once),
        # and equals the config its agent resolves to today.
        self.assertEqual(record['config'].get(bsuite_jax.SCHEMA_KEY),
                         repr(bsuite_jax.CONFIG_SCHEMA))
        self.assertEqual(
            bsuite_jax.config_changes(record['config'], configs[key]), [])

if __name__ == '__main__':
  absltest.main()
