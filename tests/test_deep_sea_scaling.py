"""experiments.paper.deep_sea_scaling at a tiny size: tables, bsuite logs, resume."""

import contextlib
import functools
import glob
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from unittest import mock

from absl.testing import absltest
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from experiments.lib import bsuite_jax
from experiments.lib import checkpoints
from experiments.lib import deep_sea_groups
from experiments.lib import parallel
from experiments.lib import run_tables
from experiments.lib import seed_statistics
from experiments.paper import deep_sea_scaling
from tests import agent_testing

PNG_MAGIC = b'\x89PNG\r\n\x1a\n'
AGENTS = ('dqn', 'boot_dqn')
SIZES = (4, 5)
SEEDS = 2
EPISODES = 8


class DeepSeaScalingTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.TemporaryDirectory()
    cls.dir = cls.tmp.name
    cls.summary = deep_sea_scaling.run(cls.dir, AGENTS, SIZES, SEEDS,
                                       EPISODES, progress_every=0)
    cls.runs = pd.read_csv(os.path.join(cls.dir,
                                        deep_sea_scaling.RUNS_FILE))

  @classmethod
  def tearDownClass(cls):
    cls.tmp.cleanup()
    super().tearDownClass()

  def test_one_row_per_agent_size_seed(self):
    self.assertEqual(list(self.runs.columns),
                     list(deep_sea_scaling.RUN_COLUMNS))
    self.assertLen(self.runs, len(AGENTS) * len(SIZES) * SEEDS)
    keys = set(zip(self.runs.agent, self.runs['size'], self.runs.seed))
    self.assertLen(keys, len(self.runs))
    self.assertTrue((self.runs.steps == self.runs['size'] * EPISODES).all())

  def test_regret_is_bsuites_own_count(self):
    for row in self.runs.itertuples():
      log = pd.read_csv(os.path.join(
          self.dir, 'logs', row.agent,
          f'bsuite_id_-_deep_sea_{row.size}-{row.seed}.csv'))
      last = log.sort_values('episode').iloc[-1]
      self.assertEqual(last.episode, EPISODES)  # 8 is a bsuite log point.
      self.assertEqual(row.regret, last.total_bad_episodes)
      # Non-rewarding episodes: each good episode found the treasure (+1).
      good = EPISODES - row.regret
      self.assertAlmostEqual(last.denoised_return, good)
      if good:
        self.assertBetween(row.first_treasure_episode, 1, EPISODES)
      else:
        self.assertTrue(np.isnan(row.first_treasure_episode))

  def test_summary_is_median_and_iqr_of_the_runs(self):
    summary = pd.read_csv(os.path.join(self.dir,
                                       deep_sea_scaling.SUMMARY_FILE))
    self.assertEqual(list(summary.columns),
                     list(deep_sea_scaling.SUMMARY_COLUMNS))
    self.assertLen(summary, len(AGENTS) * len(SIZES))
    for row in summary.itertuples():
      regrets = self.runs[(self.runs.agent == row.agent) &
                          (self.runs['size'] == row.size)].regret
      self.assertEqual(row.num_seeds, SEEDS)
      self.assertAlmostEqual(row.median_regret, np.median(regrets))
      self.assertAlmostEqual(row.q25_regret, np.percentile(regrets, 25))
      self.assertAlmostEqual(row.q75_regret, np.percentile(regrets, 75))
    self.assertLen(self.summary, len(summary))

  def test_markdown_table_has_a_row_per_agent_and_size(self):
    with open(os.path.join(self.dir, deep_sea_scaling.TABLE_FILE)) as f:
      lines = f.read().splitlines()
    self.assertLen(lines, 2 + len(AGENTS) * len(SIZES))
    for row, line in zip(self.summary, lines[2:]):
      self.assertTrue(line.startswith(
          f'| {row["agent"]} | {row["size"]} | {EPISODES} | '), line)

  def test_plot(self):
    with open(os.path.join(self.dir, deep_sea_scaling.PLOT_FILE), 'rb') as f:
      self.assertEqual(f.read(8), PNG_MAGIC)
    # What is drawn: one line per agent through its median regrets, and a
    # legend that names every agent whole.
    figures = []
    close = deep_sea_scaling.plt.close
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(
        deep_sea_scaling.plt, 'close',
        side_effect=lambda fig: (figures.append(fig), close(fig))):
      deep_sea_scaling.plot(self.summary, os.path.join(tmp, 'plot.png'))
    [figure] = figures
    [ax] = figure.axes
    drawn = list(dict.fromkeys(r['agent'] for r in self.summary))
    self.assertCountEqual(drawn, AGENTS)
    self.assertEqual([t.get_text() for t in ax.get_legend().get_texts()],
                     drawn)
    self.assertLen(ax.get_lines(), len(drawn))
    for line, agent in zip(ax.get_lines(), drawn):
      rows = sorted((r for r in self.summary if r['agent'] == agent),
                    key=lambda r: r['size'])
      np.testing.assert_array_equal(line.get_xdata(), [r['size'] for r in rows])
      np.testing.assert_allclose(line.get_ydata(),
                                 [r['median_regret'] for r in rows])

  def test_resume_runs_only_what_is_missing(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, deep_sea_scaling.RUNS_FILE)
      # A table from an earlier, cut-off sweep: one run missing.
      kept = self.runs[~((self.runs.agent == 'dqn') &
                         (self.runs['size'] == 4) & (self.runs.seed == 1))]
      kept.to_csv(path, index=False)
      deep_sea_scaling.run(tmp, ['dqn'], [4], SEEDS, EPISODES,
                           progress_every=0)
      after = pd.read_csv(path)
      self.assertLen(after, len(self.runs))
      rerun = after.iloc[-1]
      self.assertEqual((rerun.agent, rerun['size'], rerun.seed),
                       ('dqn', 4, 1))
      # Same seed, same run: the rerun reproduces the original regret.
      original = self.runs[(self.runs.agent == 'dqn') &
                           (self.runs['size'] == 4) & (self.runs.seed == 1)]
      self.assertEqual(rerun.regret, original.regret.item())
      # Nothing left to do: a second call appends nothing.
      deep_sea_scaling.run(tmp, ['dqn'], [4], SEEDS, EPISODES,
                           progress_every=0)
      self.assertLen(pd.read_csv(path), len(self.runs))

  def test_rows_of_another_resolved_config_are_refused_by_name(self):
    args = (['dqn'], [4], 1, 2)
    with tempfile.TemporaryDirectory() as tmp:
      deep_sea_scaling.run(tmp, *args, progress_every=0)
      configs_path = os.path.join(tmp, deep_sea_scaling.CONFIGS_FILE)
      with open(configs_path) as f:
        configs = json.load(f)
      # The resolved config of the group, defaults included.
      self.assertEqual(configs, {'dqn/4/2/bsuite': deep_sea_scaling
                                 .resolved_config('dqn', 4, 2, 'bsuite')})
      # Unchanged: the rerun finds its rows done and appends nothing.
      deep_sea_scaling.run(tmp, *args, progress_every=0)
      runs_path = os.path.join(tmp, deep_sea_scaling.RUNS_FILE)
      self.assertLen(pd.read_csv(runs_path), 1)
      # A default that changed since the rows were written.
      configs['dqn/4/2/bsuite']['learning_rate'] = repr(0.123)
      with open(configs_path, 'w') as f:
        json.dump(configs, f)
      with self.assertRaisesRegex(ValueError, r'dqn at size 4 .*'
                                  r'learning_rate: 0\.123 -> '):
        deep_sea_scaling.run(tmp, *args, progress_every=0)
      self.assertLen(pd.read_csv(runs_path), 1)
      # --overwrite redoes the rows under today's config and records it.
      deep_sea_scaling.run(tmp, *args, progress_every=0, overwrite=True)
      with open(configs_path) as f:
        self.assertEqual(json.load(f)['dqn/4/2/bsuite'],
                         deep_sea_scaling.resolved_config('dqn', 4, 2,
                                                          'bsuite'))
      # A table written before configs were recorded is not checked.
      os.remove(configs_path)
      deep_sea_scaling.run(tmp, *args, progress_every=0)
      self.assertLen(pd.read_csv(runs_path), 1)

  def test_a_preset_is_its_own_config_and_its_own_checkpoints(self):
    with tempfile.TemporaryDirectory() as tmp:
      configs_path = os.path.join(tmp, deep_sea_scaling.CONFIGS_FILE)
      wanted = [deep_sea_scaling.task_key('pe_dqn', 20, 0, 300)]
      rows = [{'agent': 'pe_dqn', 'size': '20', 'seed': '0',
               'num_episodes': '300'}]
      configs = deep_sea_scaling.check_recorded_configs(configs_path, [],
                                                        wanted, 'jax')
      with open(configs_path, 'w') as f:
        json.dump(configs, f)
      # Rows of our preset are never joined by the paper preset's: the
      # table names the fields it changes (Table 4's learning rate).
      with self.assertRaisesRegex(ValueError, r'pe_dqn at size 20 .*'
                                  r"learning_rate: 0\.001 -> 0\.0005"):
        deep_sea_scaling.check_recorded_configs(configs_path, rows, wanted,
                                                'jax', {'preset': 'paper'})
      paper = deep_sea_scaling.resolved_config('pe_dqn', 20, 300, 'jax',
                                               {'preset': 'paper'})
      self.assertEqual(paper['quantile_prior_scale'], '20.0')  # not scaled
      # A preset group's checkpoints are its own, and not stale.
      tasks = deep_sea_scaling.group_tasks(wanted, 100, False, 'map', tmp,
                                           {'preset': 'paper'})
      folder, identity = deep_sea_groups.group_checkpoint_folder(
          tmp, 'pe_dqn', 20, [0], 300, 100, 'map',
          overrides={'preset': 'paper'})
      self.assertEqual(identity['overrides'], {'preset': "'paper'"})
      self.assertNotEqual(folder, deep_sea_groups.group_checkpoint_folder(
          tmp, 'pe_dqn', 20, [0], 300, 100, 'map')[0])
      os.makedirs(folder)
      deep_sea_scaling.remove_stale_checkpoints(tmp, tasks, 'map')
      self.assertTrue(os.path.isdir(folder))

  def test_hyperparameter_flags_reach_each_agent_and_its_record(self):
    with tempfile.TemporaryDirectory() as tmp:
      command = [sys.executable, '-m', 'experiments.paper.deep_sea_scaling',
                 '--agents=dqn', '--sizes=4', '--seeds=1',
                 '--num_episodes=2', '--progress_every=0',
                 f'--save_path={tmp}']
      done = subprocess.run(command + ['--learning_rate=0.0005'],
                            capture_output=True, text=True, check=False)
      self.assertEqual(done.returncode, 0, done.stderr[-2000:])
      with open(os.path.join(tmp, deep_sea_scaling.CONFIGS_FILE)) as f:
        record = json.load(f)['dqn/4/2/bsuite']
      self.assertEqual(record, deep_sea_scaling.resolved_config(
          'dqn', 4, 2, 'bsuite', {'learning_rate': 0.0005}))
      self.assertEqual(record['learning_rate'], '0.0005')
      # Another agent's hyperparameter is a usage error that names it,
      # before any run.
      refused = subprocess.run(command + ['--disagreement=exact'],
                               capture_output=True, text=True, check=False)
      self.assertEqual(refused.returncode, 1)
      self.assertIn('--disagreement is not a hyperparameter of dqn',
                    refused.stderr)
      self.assertLen(pd.read_csv(
          os.path.join(tmp, deep_sea_scaling.RUNS_FILE)), 1)

  def test_tables_from_runs_of_several_horizons(self):
    with tempfile.TemporaryDirectory() as tmp:
      # Hand-made rows: size 4 run for 8 episodes, size 5 for 12, and an
      # agent that was not asked for.
      rows = [('dqn', 4, 0, 8, 3), ('dqn', 4, 1, 8, 5), ('dqn', 5, 0, 12, 9),
              ('dqn', 5, 1, 12, 12), ('dqn', 5, 2, 12, 6),
              ('boot_dqn', 4, 0, 8, 1)]
      pd.DataFrame([{'agent': a, 'size': s, 'seed': seed, 'num_episodes': n,
                     'regret': r, 'first_treasure_episode': r + 1 if r < n
                     else '', 'steps': n * s, 'seconds': 1.0}
                    for a, s, seed, n, r in rows]).to_csv(
                        os.path.join(tmp, deep_sea_scaling.RUNS_FILE),
                        index=False)
      summary = deep_sea_scaling.tables_from_runs(tmp, ['dqn'])
      self.assertEqual([(r['size'], r['num_episodes'], r['num_seeds'])
                        for r in summary], [(4, 8, 2), (5, 12, 3)])
      self.assertEqual([r['median_regret'] for r in summary], [4.0, 9.0])
      self.assertEqual(summary[1]['seeds_found_treasure'], 2)
      written = pd.read_csv(os.path.join(tmp, deep_sea_scaling.SUMMARY_FILE))
      self.assertEqual(list(written.median_regret), [4.0, 9.0])
      with open(os.path.join(tmp, deep_sea_scaling.PLOT_FILE), 'rb') as f:
        self.assertEqual(f.read(8), PNG_MAGIC)
      with self.assertRaisesRegex(ValueError, "'ucb'"):
        deep_sea_scaling.tables_from_runs(tmp, ['ucb'])

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, 'nope'):
      deep_sea_scaling.run(self.dir, ['nope'], [4], 1, 1)
    with self.assertRaisesRegex(ValueError, 'sizes'):
      deep_sea_scaling.run(self.dir, ['dqn'], [1], 1, 1)


class JaxBackendTest(absltest.TestCase):

  def test_same_regret_as_the_bsuite_runner(self):
    # The JAX deep sea and the jitted training reproduce bsuite's loop, so
    # each seed's regret and first treasure match the bsuite runner's.
    # BDQN+P learns from step 128 on (160 steps); 15 episodes per call makes
    # the last call run past 40 episodes, which must not count.
    args = (['boot_dqn'], [4], 2, 40)
    with tempfile.TemporaryDirectory() as tmp:
      deep_sea_scaling.run(os.path.join(tmp, 'bsuite'), *args,
                           progress_every=0)
      deep_sea_scaling.run(os.path.join(tmp, 'jax'), *args, progress_every=0,
                           runner='jax', episodes_per_call=15)
      runs = {runner: pd.read_csv(os.path.join(
          tmp, runner, deep_sea_scaling.RUNS_FILE)).sort_values('seed')
              for runner in ('bsuite', 'jax')}
    for column in ('seed', 'regret', 'first_treasure_episode', 'steps'):
      np.testing.assert_array_equal(runs['jax'][column],
                                    runs['bsuite'][column], err_msg=column)
    self.assertTrue((runs['jax'].regret < 40).any())  # Treasure was found.

  def test_groups_in_worker_processes_give_the_same_rows(self):
    # Two (agent, size) groups in two spawned workers, against one process.
    args = (['dqn'], [3, 4], 2, 12)
    with tempfile.TemporaryDirectory() as tmp:
      runs = {}
      for workers in (1, 2):
        folder = os.path.join(tmp, str(workers))
        deep_sea_scaling.run(folder, *args, num_workers=workers,
                             progress_every=0, runner='jax',
                             episodes_per_call=6)
        runs[workers] = pd.read_csv(os.path.join(
            folder, deep_sea_scaling.RUNS_FILE)).sort_values(['size', 'seed'])
        # Each group's checkpoints are gone once its rows are written.
        self.assertEqual(os.listdir(os.path.join(
            folder, deep_sea_scaling.CHECKPOINT_FOLDER)), [])
    self.assertLen(runs[2], 4)
    for column in ('size', 'seed', 'regret', 'first_treasure_episode'):
      np.testing.assert_array_equal(runs[2][column], runs[1][column],
                                    err_msg=column)

  def test_local_workers_do_not_preallocate_gpu_memory(self):
    # Several workers share one GPU: each must leave the rest of its memory
    # to the others, unless the user set the variable.
    name = 'XLA_PYTHON_CLIENT_PREALLOCATE'
    tasks = [(name,), (name,)]
    saved = os.environ.pop(name, None)
    try:
      seen = [value for _, value in parallel.run_tasks(os.getenv, tasks, 2)]
      self.assertEqual(seen, ['false', 'false'])
      os.environ[name] = 'true'
      seen = [value for _, value in parallel.run_tasks(os.getenv, tasks, 2)]
      self.assertEqual(seen, ['true', 'true'])
    finally:
      os.environ.pop(name, None)
      if saved is not None:
        os.environ[name] = saved

  def test_stopping_once_every_seed_found_keeps_the_first_finds(self):
    # Learning tests stop at the chunk where the last seed finds the
    # treasure; chunks continue one training, so first finds equal the
    # full run's, and fewer episodes run.
    seeds = [0, 1, 2, 3]  # First finds at episodes 3, 3, 2 and 7.
    full = deep_sea_groups.run_seeds_jax('boot_dqn', 3, seeds, 60, 60,
                                          progress=False)
    firsts = [row['first_treasure_episode'] for row in full]
    self.assertNotIn('', firsts)
    stopped = deep_sea_groups.run_seeds_jax('boot_dqn', 3, seeds, 60, 5,
                                             progress=False,
                                             stop_when_all_found=True)
    self.assertEqual([row['first_treasure_episode'] for row in stopped],
                     firsts)
    ran = stopped[0]['num_episodes']
    self.assertEqual(ran, 5 * -(-max(firsts) // 5))  # The finding chunk's end.
    self.assertLess(ran, 60)

  def test_per_seed_values_are_checked_by_the_agent_and_one_serves_all(self):
    with self.assertRaisesRegex(ValueError, r'`learning_rate`: \(3,\) values '
                                'for 2 agents'):
      deep_sea_groups.build_group('dqn', 3, [0, 1], 10, 5,
                                  {'learning_rate': [1e-3, 1e-3, 1e-3]})
    group = deep_sea_groups.build_group('dqn', 3, [0, 1], 10, 5,
                                        {'learning_rate': 1e-3})
    np.testing.assert_array_equal(group.hyperparameters['learning_rate'],
                                  np.float32([1e-3, 1e-3]))

  def test_bad_runner_or_backend(self):
    run = functools.partial(deep_sea_scaling.run, tempfile.gettempdir(),
                            ['dqn'], [4], 1, 1)
    with self.assertRaisesRegex(ValueError, r"runner must be one of "
                                r"\('bsuite', 'jax'\), got 'gpu'"):
      run(runner='gpu')
    with self.assertRaisesRegex(ValueError, "backend must be one of"):
      run(backend='jax')
    with self.assertRaisesRegex(ValueError, '--backend=ray runs bsuite-loop '
                                'tasks; the jax runner trains its groups '
                                'locally'):
      run(runner='jax', backend='ray')


class ResultsTableTest(absltest.TestCase):

  def test_append_row_requires_every_column(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'runs.csv')
      run_tables.append_row(path, {'a': 1, 'b': 2}, ('a', 'b'))
      run_tables.append_row(path, {'a': 3, 'b': 4}, ('a', 'b'))
      self.assertEqual(run_tables.read_rows(path, ('a', 'b')),
                       [{'a': '1', 'b': '2'}, {'a': '3', 'b': '4'}])
      with self.assertRaisesRegex(ValueError, 'b'):
        run_tables.append_row(path, {'a': 5}, ('a', 'b'))

  def test_a_row_cut_off_mid_write_is_dropped_and_ended(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'runs.csv')
      run_tables.append_row(path, {'a': 1, 'b': 2}, ('a', 'b'))
      with open(path, 'a') as f:
        f.write('3')  # Killed while writing the next row.
      self.assertEqual(run_tables.read_rows(path, ('a', 'b')),
                       [{'a': '1', 'b': '2'}])
      run_tables.append_row(path, {'a': 5, 'b': 6}, ('a', 'b'))
      self.assertEqual(run_tables.read_rows(path, ('a', 'b')),
                       [{'a': '1', 'b': '2'}, {'a': '5', 'b': '6'}])
      with self.assertRaisesRegex(ValueError, 'lacks the columns'):
        run_tables.read_rows(path, ('a', 'c'))

  def test_median_and_iqr(self):
    self.assertEqual(seed_statistics.median_and_iqr([1, 2, 3, 4, 5]), (3.0, 2.0, 4.0))
    with self.assertRaises(ValueError):
      seed_statistics.median_and_iqr([])

  def test_regret_statistics_by_hand(self):
    # Four seeds of 100 episodes: first finds 11, 31, 21 and none.
    rows = [{'regret': 15, 'first_treasure_episode': 11},
            {'regret': 40, 'first_treasure_episode': '31'},
            {'regret': 20, 'first_treasure_episode': 21.0},
            {'regret': 100, 'first_treasure_episode': ''}]
    stats = seed_statistics.regret_statistics(rows)
    self.assertEqual(stats['num_seeds'], 4)
    self.assertEqual(stats['median_regret'], 30.0)
    self.assertEqual(stats['q25_regret'], np.percentile([15, 40, 20, 100],
                                                        25))
    self.assertEqual(stats['q75_regret'], 55.0)
    self.assertEqual((stats['min_regret'], stats['max_regret']), (15, 100))
    self.assertEqual(stats['seeds_found_treasure'], 3)
    self.assertEqual(stats['median_first_treasure'], 21.0)
    # Bad episodes after the first find: 15-10, 40-30, 20-20.
    self.assertEqual(stats['median_bad_after_first'], 5.0)
    self.assertEqual(list(stats), list(seed_statistics.REGRET_COLUMNS))
    none_found = seed_statistics.regret_statistics(rows[3:])
    self.assertEqual(none_found['median_first_treasure'], '')
    self.assertEqual(none_found['median_bad_after_first'], '')
    with self.assertRaises(ValueError):
      seed_statistics.regret_statistics([])

  def test_regret_markdown(self):
    rows = [{'regret': 15, 'first_treasure_episode': 11},
            {'regret': 40, 'first_treasure_episode': 31},
            {'regret': 100, 'first_treasure_episode': ''}]
    summary = [{'agent': 'pe_dqn', 'size': 30,
                **seed_statistics.regret_statistics(rows)},
               {'agent': 'pe_dqn_ind', 'size': 30,
                **seed_statistics.regret_statistics(rows[2:])}]
    lines = seed_statistics.regret_markdown(summary, ('agent', 'size')).splitlines()
    self.assertLen(lines, 4)
    self.assertEqual(lines[0].count('|'), 8)
    self.assertEqual(
        lines[2], '| pe_dqn | 30 | 40 [27.5, 70] | 15 - 100 | 2/3 | '
        '21 (of 2) | 7.5 (of 2) |')  # after the find: 5 and 10
    self.assertEqual(lines[3], '| pe_dqn_ind | 30 | 100 [100, 100] | 100 | '
                     '0/1 | - | - |')


class CheckpointTest(absltest.TestCase):
  """--runner=jax saves each group between compiled calls and resumes."""

  def test_killed_run_resumes_with_the_uninterrupted_results(self):
    flags = ['--runner=jax', '--agents=boot_dqn', '--sizes=4', '--seeds=2',
             '--num_episodes=120', '--episodes_per_call=4']
    run = lambda *extra: agent_testing.run_script(
        'experiments.paper.deep_sea_scaling', *flags, *extra)
    with tempfile.TemporaryDirectory() as tmp:
      full = run('--nocheckpoints', f'--save_path={tmp}/full')
      self.assertEqual(full.returncode, 0, full.stderr[-3000:])
      killed_dir = os.path.join(tmp, 'killed')
      pattern = os.path.join(killed_dir, 'checkpoints', '*', '*')
      saved = lambda: sorted(int(os.path.basename(p)) for p in
                             glob.glob(pattern) if os.path.basename(p).isdigit())
      agent_testing.kill_when('experiments.paper.deep_sea_scaling', *flags,
                              f'--save_path={killed_dir}',
                              ready=lambda: len(saved()) >= 2)
      steps = saved()
      self.assertLen(steps, 2)  # Killed mid-run; the last two are kept.
      self.assertLess(steps[-1], 120)
      # The newest checkpoint torn (as by a dying disk): the resumed run
      # says so and falls back to the one before.
      (newest,) = glob.glob(os.path.join(killed_dir, 'checkpoints', '*',
                                         str(steps[-1])))
      for folder, _, files in os.walk(newest):
        for name in files:
          open(os.path.join(folder, name), 'w').close()
      resumed = run(f'--save_path={killed_dir}')
      self.assertEqual(resumed.returncode, 0, resumed.stderr[-3000:])
      self.assertIn(f'{steps[-1]} is unreadable', resumed.stdout)
      self.assertIn(f'resuming at episode {steps[0]}/120', resumed.stdout)
      columns = ['seed', 'regret', 'first_treasure_episode']
      read = lambda d: pd.read_csv(os.path.join(
          d, deep_sea_scaling.RUNS_FILE))[columns]
      expected = read(os.path.join(tmp, 'full'))
      self.assertLess(expected['regret'].max(), 120)  # The treasure found.
      pd.testing.assert_frame_equal(read(killed_dir), expected)
      # The group's rows are in the table: its checkpoints are gone.
      self.assertEqual(os.listdir(os.path.join(killed_dir, 'checkpoints')),
                       [])
      # A group folder left by a kill after its rows were written (or by
      # another run) is removed by the next run, which has nothing to do.
      stale = os.path.join(killed_dir, 'checkpoints', 'boot_dqn_size4_0')
      os.makedirs(os.path.join(stale, '8'))
      again = run(f'--save_path={killed_dir}')
      self.assertEqual(again.returncode, 0, again.stderr[-3000:])
      self.assertIn('0 to run', again.stdout)
      self.assertFalse(os.path.exists(stale))

  def test_diverged_training_stops_and_keeps_the_last_good_checkpoint(self):
    with tempfile.TemporaryDirectory() as tmp:
      with self.assertRaisesRegex(FloatingPointError,
                                  r'dqn size 4 seeds \[0, 1\], episode '
                                  r'\d+: non-finite') as raised:
        deep_sea_groups.run_seeds_jax(
            'dqn', 4, [0, 1], 100, 10, progress=False,
            overrides={'learning_rate': 1e9}, checkpoint_dir=tmp)
      episode = int(re.search(r'episode (\d+)', str(raised.exception))[1])
      steps = [int(name) for _, folders, _ in os.walk(tmp)
               for name in folders if name.isdigit()]
      # Only chunks before the divergence were saved.
      self.assertTrue(all(step < episode for step in steps), (steps, episode))

  def test_a_checkpoint_of_another_resolved_config_is_refused_by_name(self):
    with tempfile.TemporaryDirectory() as tmp:
      # Two chunks: the first is checkpointed (the run's own rows would
      # delete it only in the consumer).
      first = deep_sea_groups.run_seeds_jax('dqn', 4, [0], 2, 1,
                                             progress=False,
                                             checkpoint_dir=tmp)
      (identity_path,) = glob.glob(os.path.join(tmp, '*', 'run.json'))
      with open(identity_path) as f:
        identity = json.load(f)
      # The resolved config is recorded, defaults included.
      self.assertEqual(identity['config'], bsuite_jax.config_record(
          deep_sea_groups.build_group('dqn', 4, [0], 2, 1).agent.config))
      # ... the same as the runs table's guard records for the jax runner.
      self.assertEqual(identity['config'],
                       deep_sea_scaling.resolved_config('dqn', 4, 2, 'jax'))
      # Unchanged: the same run resumes from it with the same rows.
      out = io.StringIO()
      with contextlib.redirect_stdout(out):
        resumed = deep_sea_groups.run_seeds_jax('dqn', 4, [0], 2, 1,
                                                 progress=False,
                                                 checkpoint_dir=tmp)
      self.assertIn('resuming at episode 1/2', out.getvalue())
      self.assertEqual(resumed[0]['regret'], first[0]['regret'])
      # A default that changed since (as if the code's default moved).
      identity['config']['learning_rate'] = repr(0.123)
      with open(identity_path, 'w') as f:
        json.dump(identity, f)
      with self.assertRaisesRegex(ValueError,
                                  r'learning_rate: 0\.123 -> '):
        deep_sea_groups.run_seeds_jax('dqn', 4, [0], 2, 1, progress=False,
                                       checkpoint_dir=tmp)

  def test_a_full_disk_is_one_oserror_before_anything_is_written(self):
    # orbax's writer threads report a full disk as hundreds of lines of
    # tracebacks; the room is checked first, and the runners turn the
    # OSError into one line.
    tree = {'w': np.zeros((1000,), np.float32)}
    with tempfile.TemporaryDirectory() as tmp:
      saver = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      self.assertEqual(checkpoints.checkpoint_bytes(tree, {'a': 1}),
                       4000 + len('{"a": 1}'))
      full = shutil._ntuple_diskusage(10 ** 9, 10 ** 9 - 1000, 1000)  # pylint: disable=protected-access
      with mock.patch.object(shutil, 'disk_usage', return_value=full):
        with self.assertRaisesRegex(OSError, r'no space left for a '
                                    r'checkpoint \(about 1\.1 MB needed'):
          saver.save(1, tree)
      self.assertEqual(saver.steps(), [])
      saver.save(1, tree)  # with room
      self.assertEqual(saver.steps(), [1])

  def test_a_folder_of_another_run_is_named(self):
    with tempfile.TemporaryDirectory() as tmp:
      checkpoints.ChunkCheckpoints(tmp, {'seeds': [0, 1]})
      with self.assertRaisesRegex(ValueError, 'run.json belongs to another'):
        checkpoints.ChunkCheckpoints(tmp, {'seeds': [0, 2]})

  def test_restores_the_saved_tree_or_sets_unreadable_folders_aside(self):
    with tempfile.TemporaryDirectory() as root:
      tmp = os.path.join(root, 'unit')
      saver = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      like = lambda step: {'x': np.zeros((2, step), np.int32)}
      self.assertIsNone(saver.restore_latest(like))
      saver.save(3, {'x': np.arange(6, dtype=np.int32).reshape(2, 3)})
      step, tree = saver.restore_latest(like)
      self.assertEqual(step, 3)
      np.testing.assert_array_equal(tree['x'], [[0, 1, 2], [3, 4, 5]])
      for folder, _, files in os.walk(os.path.join(tmp, '3')):
        for name in files:
          open(os.path.join(folder, name), 'w').close()
      reports = []
      self.assertIsNone(saver.restore_latest(like, report=reports.append))
      self.assertLen(reports, 2)
      self.assertIn(os.path.join(tmp, '3'), reports[0])
      self.assertIn('No readable checkpoint', reports[1])
      self.assertEqual(sorted(os.listdir(root)), ['unit', 'unit.unreadable'])

  def test_a_restored_tree_runs_the_fresh_trees_program(self):
    # orbax restores arrays committed to a device; jit would compile them
    # into another program (sharding annotations), so that every resume
    # compiled again and missed the compilation cache.
    step_fn = jax.jit(lambda tree: {'x': tree['x'] * 2, 'k': tree['k'] + 1})
    fresh = jax.jit(lambda: {'x': jnp.ones((2, 3)), 'k': jnp.int32(4)})()
    self.assertFalse(fresh['x'].committed)
    expected = step_fn(fresh)
    with tempfile.TemporaryDirectory() as tmp:
      saver = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      saver.save(1, fresh)
      _, tree = saver.restore_latest(lambda step: fresh)
    self.assertFalse(any(leaf.committed for leaf in jax.tree.leaves(tree)))
    self.assertEqual(step_fn.lower(tree).as_text(),
                     step_fn.lower(fresh).as_text())
    result = step_fn(tree)
    self.assertEqual(step_fn._cache_size(), 1)  # pylint: disable=protected-access
    np.testing.assert_array_equal(result['x'], expected['x'])
    self.assertEqual(int(result['k']), 5)
    # Committed leaves anywhere (not only from orbax) become uncommitted;
    # NumPy leaves stay as they are.
    pinned = {'a': jax.device_put(jnp.arange(3), jax.devices()[0]),
              'b': np.arange(2)}
    loose = checkpoints.uncommitted(pinned)
    self.assertFalse(loose['a'].committed)
    self.assertIs(loose['b'], pinned['b'])
    np.testing.assert_array_equal(loose['a'], [0, 1, 2])


class CommandLineTest(absltest.TestCase):

  def run_module(self, *flags):
    return agent_testing.run_script('experiments.paper.deep_sea_scaling',
                                    *flags, timeout=300)

  def test_runs_and_reports(self):
    with tempfile.TemporaryDirectory() as tmp:
      result = self.run_module('--agents=dqn', '--sizes=4', '--seeds=1',
                               '--num_episodes=3', f'--save_path={tmp}')
      self.assertEqual(result.returncode, 0, result.stderr[-3000:])
      self.assertIn('1 runs requested, 0 already', result.stdout)
      self.assertRegex(result.stdout, r'dqn\s+4\s+1\s+\d+\.\d')
      self.assertIn(deep_sea_scaling.PLOT_FILE, result.stdout)

  def test_jax_runner_runs_and_reports(self):
    with tempfile.TemporaryDirectory() as tmp:
      result = self.run_module('--agents=dqn', '--sizes=4', '--seeds=2',
                               '--num_episodes=4', '--runner=jax',
                               '--episodes_per_call=2', f'--save_path={tmp}')
      self.assertEqual(result.returncode, 0, result.stderr[-3000:])
      self.assertIn('episode 2/4', result.stdout)  # Progress between calls.
      self.assertIn('episode 4/4', result.stdout)
      self.assertRegex(result.stdout, r'dqn\s+4\s+2\s+\d+\.\d')

  def test_tables_only_runs_nothing(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, deep_sea_scaling.RUNS_FILE)
      pd.DataFrame([{'agent': 'dqn', 'size': 4, 'seed': 0,
                     'num_episodes': 8, 'regret': 3,
                     'first_treasure_episode': 4, 'steps': 32,
                     'seconds': 1.0}]).to_csv(path, index=False)
      result = self.run_module('--agents=dqn', '--sizes=4', '--seeds=3',
                               '--tables_only', f'--save_path={tmp}')
      self.assertEqual(result.returncode, 0, result.stderr[-3000:])
      self.assertNotIn('runs requested', result.stdout)
      self.assertRegex(result.stdout, r'dqn\s+4\s+1\s+3\.0')
      self.assertLen(pd.read_csv(path), 1)  # Seeds 1 and 2 were not run.

  def test_bad_flags_are_named(self):
    result = self.run_module('--sizes=1')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--sizes', result.stderr)
    result = self.run_module('--agents=nope')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--agents', result.stderr)


if __name__ == '__main__':
  absltest.main()
