"""experiments.analyze_bsuite on real (tiny) logs of two agents."""

import contextlib
import glob
import io
import os
import tempfile
from unittest import mock

from absl.testing import absltest
import numpy as np
import pandas as pd
from bsuite.experiments import summary_analysis

from experiments import analyze_bsuite
from experiments import run_bsuite
from experiments.lib import units
from tests import agent_testing

PNG_MAGIC = b'\x89PNG\r\n\x1a\n'
AGENTS = ('dqn', 'c51')
IDS = ('bandit/0', 'catch/0', 'catch/1', 'deep_sea/0')
EPISODES = 6


class AnalyzeTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.TemporaryDirectory()
    cls.save_path = cls.tmp.name
    for agent_name in AGENTS:
      for bsuite_id in IDS:
        run_bsuite.run_one(units.Unit(agent_name, bsuite_id, 0),
                           run_bsuite.LoopOptions(cls.save_path, EPISODES,
                                                  progress_every=0))
    cls.output_dir = os.path.join(cls.save_path, 'analysis')
    cls.paths = analyze_bsuite.analyze(cls.save_path, None, cls.output_dir)

  @classmethod
  def tearDownClass(cls):
    cls.tmp.cleanup()
    super().tearDownClass()

  def test_finds_agent_folders(self):
    self.assertEqual(analyze_bsuite.find_agents(self.save_path),
                     sorted(AGENTS))
    # One seed each: no table of seeds.
    self.assertEqual([n for n in self.paths if 'seeds' in n], [])

  def test_scores(self):
    scores = pd.read_csv(self.paths['bsuite_scores.csv'])
    self.assertEqual(set(zip(scores.agent_name, scores.bsuite_env)),
                     {(a, e) for a in AGENTS
                      for e in ('bandit', 'catch', 'deep_sea')})
    self.assertTrue(scores.score.between(0.0, 1.0).all())
    # 6 episodes is far short of bsuite's counts.
    self.assertFalse(scores.finished.any())

  def test_bars_are_solid_only_on_all_ids_and_episodes(self):
    score_df = pd.DataFrame({
        'bsuite_env': ['bandit', 'catch', 'deep_sea', 'umbrella_length'],
        'finished': [True, True, False, True],
        'ids': [20, 12, 21, 23], 'sweep_ids': [20, 20, 21, 23],
        'score': [0.9, 0.8, 0.1, 0.4]})
    bars = analyze_bsuite.bar_plot_scores(score_df)
    self.assertEqual(list(bars.finished), [True, False, False, True])
    # The scores and bsuite's own flag stay as they were.
    self.assertEqual(list(score_df.finished), [True, True, False, True])
    self.assertEqual(list(bars.score), list(score_df.score))

  def test_tag_scores_average_the_experiment_scores(self):
    scores = pd.read_csv(self.paths['bsuite_scores.csv'])
    tags = pd.read_csv(self.paths['bsuite_scores_by_tag.csv'])
    self.assertEqual(set(tags.tag), set(analyze_bsuite.TAGS))
    self.assertLen(analyze_bsuite.TAGS, 7)
    for row in tags.itertuples():
      mine = scores[(scores.agent_name == row.agent_name) &
                    scores.tags.str.contains(row.tag)]
      if mine.empty:
        self.assertTrue(pd.isna(row.score))
      else:
        self.assertAlmostEqual(row.score, mine.score.mean())

  def test_tag_scores_say_how_many_of_their_experiments_are_whole(self):
    tags = pd.read_csv(self.paths['bsuite_scores_by_tag.csv'])
    for row in tags.itertuples():
      self.assertEqual(row.tag_experiments,
                       len(analyze_bsuite.tag_experiments(row.tag)))
      # Two of catch's 20 ids, one of bandit's: no experiment is whole,
      # and the mean over whole ones is none.
      self.assertEqual(row.experiments, 0)
      self.assertTrue(pd.isna(row.whole_score))
    self.assertEqual(analyze_bsuite.tag_experiments('basic'),
                     ['bandit', 'cartpole', 'catch', 'mnist', 'mountain_car'])
    with open(self.paths['bsuite_scores.md']) as f:
      text = f.read()
    # A few ids of an experiment are not its score: no tag score shown.
    self.assertIn('| basic | n/a (0 of 5 experiments) | n/a (0 of 5 '
                  'experiments) |', text)
    self.assertIn("bsuite's own average of whatever there is", text)

  def test_tag_table_scores_only_experiments_on_all_their_ids(self):
    experiments = ['bandit', 'catch', 'cartpole']  # all three: basic
    score_df = pd.DataFrame({
        analyze_bsuite.SWEEP_VAR: 'dqn', 'bsuite_env': experiments,
        'tags': [str(summary_analysis.BSUITE_INFO[e].tags)
                 for e in experiments],
        'score': [0.9, 0.5, 0.2], 'ids': [20, 20, 3],
        'sweep_ids': [20, 20, 19], 'finished': [True, True, False]})
    tags = analyze_bsuite.scores_by_tag(score_df, [analyze_bsuite.SWEEP_VAR])
    basic = tags.set_index('tag').loc['basic']
    # bsuite's average takes cartpole's 3 ids; the whole mean does not.
    self.assertAlmostEqual(basic.score, np.mean([0.9, 0.5, 0.2]))
    self.assertAlmostEqual(basic.whole_score, np.mean([0.9, 0.5]))
    self.assertEqual((basic.experiments, basic.tag_experiments), (2, 5))
    text = analyze_bsuite.markdown_table(score_df, tags)
    self.assertIn('| basic | 0.700 (2 of 5 experiments) |', text)

  def test_radar_draws_no_missing_tag_as_zero_and_fills_only_whole_agents(
      self):
    tags = list(analyze_bsuite.TAGS)
    whole = pd.DataFrame({
        analyze_bsuite.SWEEP_VAR: 'dqn', 'tag': tags,
        'score': np.linspace(0.1, 0.7, 7), 'experiments': 3,
        'tag_experiments': 3, 'whole_score': np.linspace(0.1, 0.7, 7)})
    part = whole.assign(**{analyze_bsuite.SWEEP_VAR: 'boot_dqn'})
    part.loc[0, 'whole_score'] = np.nan  # no whole experiment of the first
    part.loc[0, 'experiments'] = 0
    part.loc[1, 'experiments'] = 1     # one of three
    part.loc[1, 'score'] = 0.9         # bsuite's average of the parts
    from matplotlib import axes  # pylint: disable=g-import-not-at-top
    lines, fills = {}, []
    plot, fill = axes.Axes.plot, axes.Axes.fill

    def record_plot(ax, *args, **kwargs):
      if 'label' in kwargs:
        lines[kwargs['label']] = np.asarray(args[1], float)
      return plot(ax, *args, **kwargs)

    def record_fill(ax, *args, **kwargs):
      fills.append(kwargs['color'])
      return fill(ax, *args, **kwargs)
    with mock.patch.object(axes.Axes, 'plot', record_plot), \
        mock.patch.object(axes.Axes, 'fill', record_fill), \
        tempfile.TemporaryDirectory() as folder:
      analyze_bsuite.plot_radar(pd.concat([whole, part]),
                                os.path.join(folder, 'radar.png'))
    label = 'boot_dqn (5 of 7 tags on all their experiments)'
    self.assertEqual(sorted(lines), [label, 'dqn'])
    self.assertTrue(np.isnan(lines[label][0]))   # a gap, not 0
    self.assertAlmostEqual(lines[label][1], 0.2)
    self.assertTrue(np.isfinite(lines['dqn']).all())
    self.assertEqual(fills, ['C1'])              # dqn only (sorted second)

  def test_episodic_returns_match_the_raw_logs(self):
    curves = pd.read_csv(self.paths['episodic_returns.csv'])
    for agent_name in AGENTS:
      raw = pd.concat([pd.read_csv(p) for p in glob.glob(os.path.join(
          self.save_path, agent_name, 'seed_0', 'bsuite_id_-_catch-*.csv'))])
      expected = raw.groupby('episode').episode_return.mean()
      mine = curves[(curves.agent_name == agent_name) &
                    (curves.experiment == 'catch')].set_index('episode')
      self.assertEqual(list(mine.index), list(expected.index))
      self.assertEqual(set(mine.num_ids), {2})
      for episode, value in expected.items():
        self.assertAlmostEqual(mine.mean_episode_return[episode], value)
      self.assertEqual(mine.index.max(), EPISODES)

  def test_returns_legend_names_an_agent_missing_from_the_first_panel(self):
    curves = pd.DataFrame({
        'experiment': ['bandit', 'catch', 'catch'],
        analyze_bsuite.SWEEP_VAR: ['dqn', 'dqn', 'pe_dqn'],
        'episode': [1, 1, 1], 'mean_episode_return': [0.0, 1.0, 2.0]})
    from matplotlib import figure  # pylint: disable=g-import-not-at-top
    drawn = []
    original = figure.Figure.legend

    def legend(fig, handles, labels, **kwargs):
      drawn.append(list(labels))
      return original(fig, handles, labels, **kwargs)
    with mock.patch.object(figure.Figure, 'legend', legend), \
        tempfile.TemporaryDirectory() as folder:
      analyze_bsuite.plot_episodic_returns(curves,
                                           os.path.join(folder, 'r.png'))
    self.assertEqual(drawn, [['dqn', 'pe_dqn']])

  def test_markdown_table(self):
    with open(self.paths['bsuite_scores.md']) as f:
      text = f.read()
    self.assertIn('| experiment | c51 | dqn |', text)
    self.assertIn('| tag | c51 | dqn |', text)
    # A score resting on part of an experiment says on how many ids.
    self.assertRegex(text, r'\| deep_sea \| \d\.\d{3} \(\d+ of 21 ids\) '
                     r'\| \d\.\d{3} \(\d+ of 21 ids\) \|')
    self.assertIn("rests on k of the experiment's n ids", text)
    self.assertEqual(analyze_bsuite.experiment_size('deep_sea'), 21)
    self.assertEqual(analyze_bsuite.experiment_size('catch'), 20)
    self.assertIn('Not finished', text)

  def test_tag_table_against_bsuites_paper(self):
    text = analyze_bsuite.tag_comparison_table(self.save_path, 'dqn')
    rows = {line.split('|')[1].strip(): [c.strip() for c in
                                        line.split('|')[2:-1]]
            for line in text.splitlines()[2:]}
    self.assertEqual(sorted(rows), sorted(analyze_bsuite.TAGS))
    tags = pd.read_csv(self.paths['bsuite_scores_by_tag.csv'])
    tags = tags[tags.agent_name == 'dqn'].set_index('tag').score
    for tag, (score, experiments, word, agrees) in rows.items():
      self.assertEqual(score, f'{tags[tag]:.2f}', tag)
      self.assertEqual(word, analyze_bsuite.BSUITE_PAPER_DQN.get(tag, ''))
      if word:
        strong = tags[tag] >= analyze_bsuite.STRONG_SCORE
        self.assertEqual(agrees, 'yes' if strong == (word == 'strong')
                         else 'no', tag)
      else:
        self.assertEqual(agrees, '')
    # The experiments each tag's score rests on, of the tag's in bsuite.
    self.assertRegex(rows['basic'][1], r'^bandit \d\.\d\d, catch \d\.\d\d '
                     r'\(2 of 5\)$')
    self.assertRegex(rows['exploration'][1],
                     r'^deep_sea \d\.\d\d \(1 of 3\)$')

  def test_agents_side_by_side(self):
    held = {'bandit': 1, 'catch': 2, 'deep_sea': 2}  # deep_sea: 1 of 2 in
    with contextlib.redirect_stdout(io.StringIO()):
      text = analyze_bsuite.agents_table(self.save_path, ['dqn', 'c51'],
                                         sweep_ids=held.get)
    experiments, tags = text.split('\n\n')[:2]
    rows = {line.split('|')[1].strip(): [c.strip() for c in
                                        line.split('|')[2:-1]]
            for line in (experiments + '\n' + tags).splitlines()
            if line.startswith('| ')}
    self.assertEqual(rows['experiment'], ['dqn', 'c51'])
    self.assertEqual(rows['deep_sea'], ['(1 of 2 ids)'] * 2)
    self.assertNotIn('cartpole', rows)  # no agent has a log: no row
    # A held experiment's score is each agent's own (bsuite's score).
    scores = pd.read_csv(self.paths['bsuite_scores.csv']).set_index(
        ['agent_name', 'bsuite_env']).score
    for column, agent_name in enumerate(('dqn', 'c51')):
      for experiment in ('bandit', 'catch'):
        cell = rows[experiment][column]
        self.assertTrue(cell.endswith('*'))  # 6 of bsuite's episodes
        self.assertEqual(cell, f'{scores[agent_name, experiment]:.3f}*')
    # basic: bandit and catch held, 3 more of its experiments missing.
    self.assertEqual(rows['basic'], ['(2 of 5 experiments)'] * 2)
    self.assertEqual(rows['exploration'], ['(0 of 3 experiments)'] * 2)
    # A tag whose experiments are all held is their mean (bsuite's).
    with mock.patch.object(analyze_bsuite.sweep, 'SWEEP',
                           ('bandit/0', 'catch/0', 'catch/1')), \
        contextlib.redirect_stdout(io.StringIO()):
      text = analyze_bsuite.agents_table(self.save_path, ['dqn'],
                                         sweep_ids=held.get)
    basic = next(line for line in text.splitlines()
                 if line.startswith('| basic |'))
    self.assertEqual(basic, '| basic | %.3f |' % np.mean(
        [scores['dqn', 'bandit'], scores['dqn', 'catch']]))
    self.assertIn("\\* scored on the episodes that ran", text)

  def test_plots_are_pngs(self):
    for name, path in self.paths.items():
      if name.endswith('.png'):
        with open(path, 'rb') as f:
          self.assertEqual(f.read(8), PNG_MAGIC, name)
        self.assertGreater(os.path.getsize(path), 5000, name)

  def test_bad_input_is_named(self):
    with self.assertRaisesRegex(ValueError, '--agents.*nope'):
      analyze_bsuite.analyze(self.save_path, ['nope'], self.output_dir)
    with tempfile.TemporaryDirectory() as empty:
      with self.assertRaisesRegex(ValueError, 'No agent results'):
        analyze_bsuite.analyze(empty, None, self.output_dir)

  def test_command_line(self):
    result = agent_testing.run_script(
        'experiments.analyze_bsuite', f'--save_path={self.save_path}',
        '--agents=dqn', f'--output_dir={os.path.join(self.save_path, "cli")}',
        timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    self.assertIn('| experiment | dqn |', result.stdout)
    self.assertIn('bsuite_radar.png', result.stdout)
    # Progress and results only: no font or plot-style warnings.
    self.assertNotIn('findfont', result.stderr)
    self.assertNotIn('Using alpha', result.stderr)
    self.assertLess(len((result.stdout + result.stderr).splitlines()), 60)


class LayoutsTest(absltest.TestCase):
  """Every runner's layout, side by side in one --save_path."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    from experiments.lib import bsuite_jax  # pylint: disable=g-import-not-at-top
    cls.tmp = tempfile.TemporaryDirectory()
    cls.save_path = cls.tmp.name
    # bsuite's loop and lockstep seeds into dqn/seed_K/, a jitted runner's
    # unit into dqn/seed_5/, and one seed's unit in dqn/ itself, where
    # bsuite's loop once wrote it.
    options = run_bsuite.LoopOptions(cls.save_path, EPISODES,
                                     progress_every=0)
    run_bsuite.run_one(units.Unit('dqn', 'catch/0', 0), options)
    run_bsuite.run_one(units.Unit('dqn', 'catch/0', 3), options)
    old = units.seed_folder(cls.save_path, 'dqn', 3)
    for name in os.listdir(old):
      if name.startswith('bsuite_id'):
        os.replace(os.path.join(old, name),
                   os.path.join(cls.save_path, 'dqn', name))
    for bsuite_id in ('bandit/0', 'deep_sea/0'):
      run_bsuite.run_lockstep(units.make_units('dqn', [bsuite_id], [0, 1]),
                              options)
    bsuite_jax.run_id('dqn', 'deep_sea/0', [5], cls.save_path,
                      max_episodes=10, episodes_per_call=10,
                      progress_every=0)
    with open(os.path.join(cls.save_path, 'dqn',
                           'bsuite_id_-_catch-1.csv'), 'w') as f:
      f.write('\x00\x01 not a log\n')

  @classmethod
  def tearDownClass(cls):
    cls.tmp.cleanup()
    super().tearDownClass()

  def test_every_layout_is_read(self):
    # The lockstep seed_K folders are results, not "No agent results".
    self.assertEqual(
        [run for run, _ in analyze_bsuite.result_folders(self.save_path,
                                                         'dqn')],
        ['single', 'seed_0', 'seed_1', 'seed_5'])
    self.assertEqual(analyze_bsuite.find_agents(self.save_path), ['dqn'])
    df, sweep_vars = analyze_bsuite.load(self.save_path, ['dqn'])
    self.assertEqual(sweep_vars, ['agent_name', 'run'])
    self.assertEqual(
        {run: tuple(sorted(ids)) for run, ids in
         df.groupby('run').bsuite_id.unique().items()},
        {'single': ('catch/0',),
         'seed_0': ('bandit/0', 'catch/0', 'deep_sea/0'),
         'seed_1': ('bandit/0', 'deep_sea/0'), 'seed_5': ('deep_sea/0',)})
    scores = analyze_bsuite.scores(df, sweep_vars)
    runs = dict(zip(scores.bsuite_env, scores.runs))
    self.assertEqual(runs, {'bandit': 2, 'catch': 2, 'deep_sea': 3})
    # The mean of bsuite's score of each run.
    from bsuite.experiments import summary_analysis  # pylint: disable=g-import-not-at-top
    per_run = summary_analysis.bsuite_score(df, sweep_vars)
    bandit = per_run[per_run.bsuite_env == 'bandit'].score.mean()
    self.assertAlmostEqual(
        float(scores[scores.bsuite_env == 'bandit'].score.iloc[0]), bandit)

  def test_seeds_keep_only_those_seeds_in_every_layout(self):
    # seed_0/ and seed_1/ by folder; the log in dqn/ itself by its record
    # (seed 3); seed_5/'s jitted unit by folder.
    cases = {(0,): {'seed_0'}, (1, 5): {'seed_1', 'seed_5'},
             (3,): {'single'}, ('0', '3'): {'seed_0', 'single'}}
    for seeds, runs in cases.items():
      with self.subTest(seeds=seeds):
        df, _ = analyze_bsuite.load(self.save_path, ['dqn'], seeds=seeds)
        self.assertEqual(set(df.run), runs)
    all_runs, _ = analyze_bsuite.load(self.save_path, ['dqn'])
    self.assertEqual(set(all_runs.run),
                     {'single', 'seed_0', 'seed_1', 'seed_5'})
    with self.assertRaisesRegex(ValueError, r'--seeds \[7\]'):
      analyze_bsuite.load(self.save_path, ['dqn'], seeds=[7])
    for bad in (['-1'], ['x'], ['1.5'], []):
      with self.subTest(bad=bad):
        with self.assertRaisesRegex(ValueError, '--seeds'):
          analyze_bsuite.load(self.save_path, ['dqn'], seeds=bad)

  def test_seeds_flag(self):
    output = os.path.join(self.save_path, 'out_seed1')
    result = agent_testing.run_script(
        'experiments.analyze_bsuite', f'--save_path={self.save_path}',
        f'--output_dir={output}', '--agents=dqn', '--seeds=1', timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    scores = pd.read_csv(os.path.join(output, 'bsuite_scores.csv'))
    self.assertEqual(set(scores.bsuite_env), {'bandit', 'deep_sea'})
    self.assertEqual(set(scores.runs), {1})
    # The deep sea report too: its one unit is seed 5's.
    self.assertIn('seeds 1. No deep sea report.', result.stdout)
    self.assertFalse(os.path.exists(os.path.join(output,
                                                 'deep_sea_units.csv')))
    result = agent_testing.run_script(
        'experiments.analyze_bsuite', f'--save_path={self.save_path}',
        f'--output_dir={output}', '--agents=dqn', '--seeds=one',
        timeout=300)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn("--seeds: 'one' is not a seed", result.stderr)

  def test_a_bad_log_is_named_and_left_out(self):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      df, _ = analyze_bsuite.load(self.save_path, ['dqn'])
    self.assertIn('bsuite_id_-_catch-1.csv: no episode rows', out.getvalue())
    self.assertNotIn('catch/1', set(df.bsuite_id))

  def test_units_do_not_hide_the_other_logs(self):
    # A jitted unit under --save_path must not send the whole folder to the
    # deep sea report and drop the plain and lockstep results, with
    # --agents=dqn or without.
    for flags in ((), ('--agents=dqn',)):
      with self.subTest(flags=flags):
        output = os.path.join(self.save_path, 'out' + str(len(flags)))
        result = agent_testing.run_script(
            'experiments.analyze_bsuite', f'--save_path={self.save_path}',
            f'--output_dir={output}', *flags, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertIn('| experiment | dqn |', result.stdout)
        self.assertIn('| bandit |', result.stdout)
        self.assertTrue(os.path.exists(os.path.join(output,
                                                    'bsuite_scores.csv')))
        scores = pd.read_csv(os.path.join(output, 'bsuite_scores.csv'))
        self.assertIn('catch', set(scores.bsuite_env))




class OneUnitCountsOnceTest(absltest.TestCase):

  def test_a_seed_in_both_layouts_is_read_once(self):
    import contextlib  # pylint: disable=g-import-not-at-top
    import io  # pylint: disable=g-import-not-at-top
    import json  # pylint: disable=g-import-not-at-top
    import shutil  # pylint: disable=g-import-not-at-top
    import tempfile  # pylint: disable=g-import-not-at-top
    from tests import agent_testing  # pylint: disable=g-import-not-at-top
    log = os.path.join(agent_testing.ROOT, 'docs', 'results', 'bsuite',
                       'dqn', 'seed_0', 'bsuite_id_-_bandit-0.csv')
    with tempfile.TemporaryDirectory() as tmp:
      for folder, seed in (('dqn', 0), (os.path.join('dqn', 'seed_0'), 0),
                           (os.path.join('dqn', 'seed_1'), 1)):
        os.makedirs(os.path.join(tmp, folder))
        target = os.path.join(tmp, folder, os.path.basename(log))
        shutil.copy(log, target)
        with open(target + '.json', 'w') as f:
          json.dump({'identity': {'seed': seed}, 'episodes': 10000}, f)
      printed = io.StringIO()
      with contextlib.redirect_stdout(printed):
        df, _ = analyze_bsuite.load(tmp, ['dqn'])
      self.assertEqual(sorted(df[analyze_bsuite.RUN_VAR].unique()),
                       ['seed_1', 'single'])
      self.assertIn('seed 0 of bandit/0 is read from', printed.getvalue())




class DamagedDataTest(absltest.TestCase):

  def test_damaged_logs_and_records_are_named_and_left_out(self):
    import contextlib  # pylint: disable=g-import-not-at-top
    import io  # pylint: disable=g-import-not-at-top
    import shutil  # pylint: disable=g-import-not-at-top
    import tempfile  # pylint: disable=g-import-not-at-top
    from tests import agent_testing  # pylint: disable=g-import-not-at-top
    source = os.path.join(agent_testing.ROOT, 'docs', 'results', 'bsuite',
                          'dqn', 'seed_0')
    names = [f'bsuite_id_-_bandit-{i}.csv' for i in range(5)]
    with tempfile.TemporaryDirectory() as tmp:
      folder = os.path.join(tmp, 'dqn', 'seed_0')
      os.makedirs(folder)
      for name in names:
        for suffix in ('', '.json'):
          shutil.copy(os.path.join(source, name + suffix), folder)
      path = lambda i: os.path.join(folder, names[i])
      with open(path(1) + '.json', 'w') as f:
        f.write('{garbage')                       # a garbage record
      text = open(path(2)).read()
      with open(path(2), 'w') as f:
        f.write(text[:-20])                       # cut mid-row
      os.remove(path(3) + '.json')                # no record: NaN checked
      with open(path(3), 'w') as f:
        f.write(text.replace('\n2,', '\n2,nan,', 1) if '\n2,' in text
                else text.rstrip('\n') + ',\n')
      os.remove(path(4) + '.json')
      with open(path(4), 'w') as f:
        lines = text.splitlines()
        f.write('\n'.join(lines[:-1] + [lines[-1].rsplit(',', 1)[0] + ',']))
      printed = io.StringIO()
      with contextlib.redirect_stdout(printed):
        df, _ = analyze_bsuite.load(tmp, ['dqn'])
      out = printed.getvalue()
      self.assertEqual(sorted(df.bsuite_id.unique()), ['bandit/0'])
      self.assertIn(f'Skipped {path(1)}: its record', out)
      self.assertIn('cannot be read', out)
      self.assertIn(f'Skipped {path(2)}: its log changed', out)
      self.assertIn(f'Skipped {path(4)}: row', out)
      self.assertIn(f'Skipped {path(3)}', out)


class SeedsTableTest(absltest.TestCase):
  """seeds_table: a seed counts for an experiment only with all its ids."""

  def test_scores_per_seed_median_range_and_missing_ids(self):
    with tempfile.TemporaryDirectory() as save_path:
      for bsuite_id, seeds in (('bandit/0', (0, 1, 2)), ('bandit/1', (0, 1))):
        for seed in seeds:
          run_bsuite.run_one(units.Unit('dqn', bsuite_id, seed),
                             run_bsuite.LoopOptions(save_path, EPISODES,
                                                    progress_every=0))
      runs = ('seed_0', 'seed_1', 'seed_2')
      with contextlib.redirect_stdout(io.StringIO()):
        loaded = analyze_bsuite.load(save_path, ['dqn'])
        text = analyze_bsuite.seeds_table(save_path, 'dqn', runs,
                                          sweep_ids=lambda e: 2,
                                          loaded=loaded)
        alone = [analyze_bsuite.whole_suite_table(save_path, 'dqn', run,
                                                  loaded=loaded)
                 for run in runs[:2]]
        tags_alone = [analyze_bsuite.tag_comparison_table(
            save_path, 'dqn', (run,), loaded=loaded) for run in runs]
        tags = analyze_bsuite.tag_comparison_table(save_path, 'dqn', runs,
                                                   loaded=loaded)
        # The analysis writes the table for an agent with several seeds.
        paths = analyze_bsuite.analyze(save_path, None,
                                       os.path.join(save_path, 'analysis'))
      with open(paths['bsuite_seeds_dqn.md']) as f:
        self.assertEqual(f.read(), analyze_bsuite.seeds_table(
            save_path, 'dqn', runs, loaded=loaded) + '\n')
    rows = {line.split('|')[1].strip(): [c.strip() for c in
                                        line.split('|')[2:-1]]
            for line in text.splitlines() if line.startswith('| ')}
    self.assertEqual(rows['experiment'], ['seed 0', 'seed 1', 'seed 2',
                                          'median', 'range', 'seeds'])
    seed_0, seed_1, seed_2, median, spread, count = rows['bandit']
    # Each seed's score is its run's alone (whole_suite_table's).
    for table, cell in zip(alone, (seed_0, seed_1)):
      self.assertIn(f'| bandit | {cell.rstrip("*")} |', table)
    self.assertEqual(seed_2, '(1 of 2 ids)')
    scores = sorted(float(c.rstrip('*')) for c in (seed_0, seed_1))
    self.assertAlmostEqual(float(median), sum(scores) / 2, delta=0.0011)
    self.assertEqual(spread, f'{scores[0]:.3f}-{scores[1]:.3f}')
    self.assertEqual(count, '2')
    self.assertNotIn('catch', rows)  # no log: no row
    # No tag has all its experiments here: no seed counts for any.
    for tag in analyze_bsuite.TAGS:
      self.assertEqual(rows[tag], ['', '', '', '', '', '0'], tag)
    self.assertTrue(seed_0.endswith('*'))  # 6 of bsuite's 10,000 episodes
    self.assertIn("\\* scored on the episodes that ran", text)
    # The tag comparison over seeds: the median and range of each seed's
    # own tag score, and on how many seeds the tag agrees.
    def basic_row(table):
      return next(line.split('|')[2:-1] for line in table.splitlines()
                  if line.startswith('| basic |'))
    per_seed = [float(basic_row(t)[0]) for t in tags_alone]
    score, experiments, word, agrees = (c.strip() for c in basic_row(tags))
    self.assertEqual(score, f'{np.median(per_seed):.2f} ({min(per_seed):.2f}'
                     f'-{max(per_seed):.2f}, 3 seeds)')
    self.assertRegex(experiments, r'^bandit \d\.\d\d \(1 of 5\)$')
    self.assertEqual(word, 'strong')
    agreeing = sum(v >= analyze_bsuite.STRONG_SCORE for v in per_seed)
    self.assertEqual(agrees, {3: 'yes', 0: 'no'}.get(
        agreeing, f'on {agreeing} of 3 seeds'))


class WindowedRegretTest(absltest.TestCase):
  """windowed_regret: mean regret per episode between logged episodes."""

  def test_against_per_episode_regret(self):
    rng = np.random.default_rng(3)
    per_episode = rng.uniform(0.0, 1.0, size=300)
    logged = [1, 2, 5, 10, 20, 50, 100, 200, 300]
    log = pd.DataFrame({'episode': logged,
                        'total_regret': np.cumsum(per_episode)[
                            np.array(logged) - 1]})
    got = analyze_bsuite.windowed_regret(log, (0, 10, 100, 300))
    want = [per_episode[:10].mean(), per_episode[10:100].mean(),
            per_episode[100:300].mean()]
    np.testing.assert_allclose(got, want, rtol=1e-12)

  def test_bad_edges_are_named(self):
    log = pd.DataFrame({'episode': [1, 10], 'total_regret': [0.5, 2.0]})
    with self.assertRaisesRegex(ValueError, 'episode 5 is not logged'):
      analyze_bsuite.windowed_regret(log, (0, 5, 10))
    with self.assertRaisesRegex(ValueError, 'increasing'):
      analyze_bsuite.windowed_regret(log, (10, 1))
    with self.assertRaisesRegex(ValueError, 'total_regret'):
      analyze_bsuite.windowed_regret(log[['episode']], (0, 10))


if __name__ == '__main__':
  absltest.main()
