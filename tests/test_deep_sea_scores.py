"""experiments.lib.deep_sea_scores: the units' table, bsuite's score, the plot."""

import os
import tempfile

from unittest import mock

from absl.testing import absltest
import matplotlib.axes
import numpy as np
import pandas as pd

from experiments.lib import bsuite_jax
from experiments.lib import deep_sea_scores
from experiments.lib import doc_blocks
from tests import agent_testing


def write(save_path, agent, bsuite_id, seed, bad, censored=False,
          first_treasure=None, seconds=1.0, run_seeds=None,
          resumed_at_episode=None, device=None):
  """A unit whose bad-episode counter is `bad` (one entry per episode)."""
  size = 10 + 2 * int(bsuite_id.split('/')[1])
  bad = np.asarray(bad)
  solved = bsuite_jax.solved_episode(bad, 'deep_sea')
  record = dict(
      identity=bsuite_jax.identity(agent, bsuite_id, seed, {}), size=size,
      solved_episode=solved, episodes=len(bad), censored=censored,
      stop_when_solved=True, regret_at_end=int(bad[-1]),
      first_treasure_episode=first_treasure, seconds=seconds,
      env_steps_per_second=10.0)
  if run_seeds is not None:
    record['run_seeds'] = run_seeds
  if resumed_at_episode is not None:
    record['resumed_at_episode'] = resumed_at_episode
  if device is not None:
    record['device'] = device
  bsuite_jax.write_unit(bsuite_id, os.path.join(save_path, agent,
                                                f'seed_{seed}'),
                        bsuite_jax.log_rows(np.zeros(len(bad)), bad,
                                            np.zeros(len(bad)), size), record)


class ReportTest(absltest.TestCase):

  def test_cells_scores_and_plot(self):
    with tempfile.TemporaryDirectory() as tmp:
      # Seed 0 solves size 10 at 60 and is cut unsolved at 300 on size 12;
      # seed 1 solves both.
      write(tmp, 'a', 'deep_sea/0', 0, np.minimum(np.arange(1, 61), 49))
      write(tmp, 'a', 'deep_sea/1', 0, np.arange(1, 301), censored=True)
      write(tmp, 'a', 'deep_sea/0', 1, np.minimum(np.arange(1, 41), 29))
      write(tmp, 'a', 'deep_sea/1', 1, np.minimum(np.arange(1, 61), 49))
      self.assertTrue(deep_sea_scores.has_units(tmp))
      paths = deep_sea_scores.report(tmp, os.path.join(tmp, 'out'))
      units = deep_sea_scores.load_units(tmp)
      self.assertEqual(list(units.solved_episode.fillna(-1)),
                       [60, 40, -1, 60])
      with open(paths[deep_sea_scores.TABLE_FILE]) as f:
        table = f.read()
      self.assertIn('| 10 | 50 [40, 60] |', table)  # the summary
      self.assertIn('| 12 | 1/2 solved; >300 |', table)
      self.assertIn('| a | 10 | 60 | 40 | 50 |', table)
      self.assertIn('| a | 12 | >300 | 60 | 60 (1/2) |', table)
      # bsuite's own score: seed 0 beat 1 of 2 sizes, seed 1 both.
      self.assertIn('| a | 2 | 1 | 0.500 (2) | 1.000 (2) |', table)
      self.assertGreater(os.path.getsize(paths[deep_sea_scores.PLOT_FILE]),
                         5000)

  def test_report_covers_only_the_agents_and_seeds_asked_for(self):
    with tempfile.TemporaryDirectory() as tmp:
      write(tmp, 'a', 'deep_sea/0', 0, np.minimum(np.arange(1, 61), 49))
      write(tmp, 'a', 'deep_sea/0', 1, np.minimum(np.arange(1, 41), 29))
      write(tmp, 'b', 'deep_sea/0', 0, np.minimum(np.arange(1, 31), 19))
      out = os.path.join(tmp, 'out')
      paths = deep_sea_scores.report(tmp, out, agents=['a'], seeds=[1])
      units = pd.read_csv(paths[deep_sea_scores.UNITS_FILE])
      self.assertEqual(list(zip(units.agent, units.seed)), [('a', 1)])
      with open(paths[deep_sea_scores.TABLE_FILE]) as f:
        table = f.read()
      self.assertIn('| 10 | 40 |', table)  # seed 1's episode alone
      self.assertNotIn('| b |', table)
      every = deep_sea_scores.load_units(tmp)
      self.assertLen(every, 3)
      self.assertLen(deep_sea_scores.select_units(every, seeds=[0]), 2)
      self.assertLen(deep_sea_scores.select_units(every, agents=['b']), 1)
      with self.assertRaisesRegex(ValueError, 'agents b, seeds 1'):
        deep_sea_scores.report(tmp, out, agents=['b'], seeds=[1])

  def test_median_line_keeps_sizes_with_the_usual_seeds_all_solved(self):
    rows = []
    for size, solved in ((10, (60, 40, 50)), (12, (90, 80, 70, 60, 50)),
                         (14, (100, None, 120)), (16, (200,)),
                         (18, (300, 310, 320))):
      rows += [dict(size=size, seed=seed, solved_episode=episode)
               for seed, episode in enumerate(solved)]
    line = deep_sea_scores.median_line(pd.DataFrame(rows))
    # 3 seeds is the usual count: 12's five count, 16's one does not; 14
    # has an unsolved seed.
    self.assertEqual(dict(line), {10: 50.0, 12: 70.0, 18: 310.0})

  def test_seed_outcomes_count_an_unsolved_seed_as_its_budget_plus_one(self):
    units = pd.DataFrame(dict(
        seed=[0, 1, 2], solved_episode=[500, np.nan, 3000],
        episodes=[500, 2000, 3000], first_treasure_episode=[321, np.nan, 275]))
    self.assertEqual(deep_sea_scores.seed_outcomes(units), dict(
        seeds='0,1,2', solved='500, >2000, 3000', first_find='321, -, 275',
        median_solved=2001.0))

  def test_plot_gives_an_agent_one_colour_in_every_panel(self):
    with tempfile.TemporaryDirectory() as tmp:
      for agent in ('a', 'b'):
        write(tmp, agent, 'deep_sea/0', 0, np.minimum(np.arange(1, 61), 49))
      # 'a' is missing from the stochastic panel, so 'b' comes first there.
      write(tmp, 'b', 'deep_sea_stochastic/0', 0,
            np.minimum(np.arange(1, 161), 100))
      drawn = []
      original = matplotlib.axes.Axes.plot
      def record(ax, *args, **kwargs):
        drawn.append((ax.get_title(), kwargs.get('label'),
                      kwargs.get('color')))
        return original(ax, *args, **kwargs)
      with mock.patch.object(matplotlib.axes.Axes, 'plot', record):
        deep_sea_scores.plot(deep_sea_scores.load_units(tmp),
                             os.path.join(tmp, 'plot.png'))
      colors = {}
      for _, label, color in drawn:
        if label in ('a', 'b'):
          colors.setdefault(label, set()).add(tuple(color))
      self.assertLen(colors['b'], 1)  # one colour in both panels
      self.assertNotEqual(colors['a'], colors['b'])
      self.assertLen([d for d in drawn if d[1] == 'b'], 2)

  def test_summary_marks_sizes_with_fewer_or_more_seeds(self):
    with tempfile.TemporaryDirectory() as tmp:
      solved_at = lambda e: np.minimum(np.arange(1, e + 1), e - 11)
      for bsuite_id in ('deep_sea/0', 'deep_sea/1'):  # the usual: 2 seeds
        for seed in (0, 1):
          write(tmp, 'a', bsuite_id, seed, solved_at(60))
      for seed in range(3):  # size 14: an extra seed
        write(tmp, 'a', 'deep_sea/2', seed, solved_at(60))
      write(tmp, 'a', 'deep_sea/3', 0, solved_at(60))  # size 16: one to go
      table = deep_sea_scores.summary(deep_sea_scores.load_units(tmp),
                                      'deep_sea')
      self.assertIn('| 10 | 60 [60, 60] |', table)
      self.assertIn('| 14 | 60 [60, 60] (3 seeds) |', table)
      self.assertIn('| 16 | 60 [60, 60] (1 of 2 seeds) |', table)

  def test_headline_counts_sizes_solved_on_every_seed(self):
    with tempfile.TemporaryDirectory() as tmp:
      solved_at = lambda e: np.minimum(np.arange(1, e + 1), e - 11)
      for seed in (0, 1):  # sizes 10 and 12 solved on both seeds
        write(tmp, 'a', 'deep_sea/0', seed, solved_at(60))
        write(tmp, 'a', 'deep_sea/1', seed, solved_at(60))
      write(tmp, 'a', 'deep_sea/2', 0, solved_at(60))  # 14: one seed cut
      write(tmp, 'a', 'deep_sea/2', 1, np.arange(1, 301), censored=True)
      write(tmp, 'a', 'deep_sea/3', 0, solved_at(60))  # 16: solved again
      write(tmp, 'b', 'deep_sea/0', 0, np.arange(1, 301), censored=True)
      units = deep_sea_scores.load_units(tmp)
      self.assertEqual(deep_sea_scores.solved_up_to(
          units[units.agent == 'a']), (12, 3, 4))
      table = deep_sea_scores.headline(units, experiments=('deep_sea',),
                                       seeds=(0, 1))
      # Size 16 has seed 0 only: left out, not counted as solved.
      self.assertIn('| a | up to 12 (2 of 3 sizes; left out, with fewer '
                    'seeds: size 16) |', table)
      self.assertIn('| b | no size with seeds 0, 1 (sizes 10 with fewer) |',
                    table)
      table = deep_sea_scores.headline(units, experiments=('deep_sea',),
                                       seeds=(0,))
      self.assertIn('| a | up to 16 (4 of 4 sizes) |', table)
      self.assertIn('| b | none from the smallest (0 of 1 sizes) |', table)

  def test_large_sizes_table(self):
    with tempfile.TemporaryDirectory() as tmp:
      # Size 40 (deep_sea/15): seed 0 finds at 470 and is solved at 600
      # with 497 bad episodes; seed 1 is cut at 300 without a find.
      bad = np.minimum(np.arange(1, 601), 497)
      write(tmp, 'a', 'deep_sea/15', 0, bad, first_treasure=470)
      write(tmp, 'a', 'deep_sea/15', 1, np.arange(1, 301), censored=True)
      write(tmp, 'a', 'deep_sea/14', 0, bad)  # size 38: not in the table
      units = deep_sea_scores.load_units(tmp)
      self.assertEqual(units.solved_episode[units.bsuite_id ==
                                            'deep_sea/15'].iloc[0], 600)
      table = deep_sea_scores.large_sizes(units)
      self.assertIn('| a | 40 | 600 (find 470; 497) | >300 (no find; 300) '
                    '| 1/2 | 398.5 |', table)
      self.assertNotIn('| a | 38 |', table)
      self.assertEqual(deep_sea_scores.large_sizes(
          units[units['size'] < 40]), '')

  def test_costs_count_each_run_once(self):
    with tempfile.TemporaryDirectory() as tmp:
      bad = np.minimum(np.arange(1, 61), 49)
      # Legacy units (no run_seeds): an id's seeds shared one run of 5 s.
      write(tmp, 'a', 'deep_sea/0', 0, bad, seconds=4.0)
      write(tmp, 'a', 'deep_sea/0', 1, bad, seconds=5.0)
      # Seeds run one per program: two runs, 3 s and 6 s.
      write(tmp, 'a', 'deep_sea/1', 0, bad, seconds=3.0, run_seeds=[0])
      write(tmp, 'a', 'deep_sea/1', 1, bad, seconds=6.0, run_seeds=[1])
      lines = deep_sea_scores.costs(deep_sea_scores.load_units(tmp))
      self.assertEqual(len(lines), 1)
      self.assertIn('a deep_sea: 4 units in 3 runs, 0.00 h', lines[0])
      self.assertNotIn('resumed', lines[0])
      self.assertAlmostEqual(
          deep_sea_scores.load_units(tmp).groupby(['bsuite_id', 'run'])
          .seconds.max().sum(), 14.0)
      write(tmp, 'a', 'deep_sea/2', 0, bad, seconds=2.0, run_seeds=[0],
            resumed_at_episode=30)
      [line] = deep_sea_scores.costs(deep_sea_scores.load_units(tmp))
      self.assertIn('5 units in 4 runs', line)
      self.assertIn('; 1 resumed after a stop, counted from the resume only',
                    line)

  def test_units_trained_on_a_gpu_are_marked_and_costed_apart(self):
    with tempfile.TemporaryDirectory() as tmp:
      solved_at = lambda e: np.minimum(np.arange(1, e + 1), e - 11)
      write(tmp, 'a', 'deep_sea/0', 0, solved_at(60))  # no device: CPU
      write(tmp, 'a', 'deep_sea/0', 1, solved_at(40), device='cpu')
      write(tmp, 'a', 'deep_sea/1', 0, solved_at(60), device='gpu: H')
      write(tmp, 'a', 'deep_sea/1', 1, solved_at(60))
      for seed in (0, 1):
        write(tmp, 'a', 'deep_sea/15', seed, np.arange(1, 301),
              censored=True, device='gpu: H')
      units = deep_sea_scores.load_units(tmp)
      self.assertEqual(list(units.device),
                       ['cpu', 'cpu', 'gpu: H', 'cpu', 'gpu: H', 'gpu: H'])
      summary = deep_sea_scores.summary(units, 'deep_sea')
      self.assertIn('| 10 | 50 [40, 60] |', summary)  # CPU only: no mark
      self.assertIn('| 12 | 60 [60, 60]* |', summary)  # one of two on a GPU
      self.assertIn('| 40 | 0/2 solved; >300*, >300* |', summary)
      self.assertIn('>300* (no find; 300)',
                    deep_sea_scores.large_sizes(units))
      table = deep_sea_scores.markdown(
          units, deep_sea_scores.bsuite_scores(tmp, units))
      self.assertIn('| a | 12 | 60* | 60 |', table)
      self.assertIn(deep_sea_scores.ACCELERATOR_NOTE, table)
      self.assertNotIn(deep_sea_scores.ACCELERATOR_NOTE,
                       deep_sea_scores.markdown(
                           units[units.device == 'cpu'],
                           deep_sea_scores.bsuite_scores(
                               tmp, units[units.device == 'cpu'])))
      lines = deep_sea_scores.costs(units)
      self.assertLen(lines, 2)
      self.assertTrue(lines[0].startswith('a deep_sea: 3 units in 2 runs'),
                      lines)
      self.assertTrue(lines[1].startswith('a deep_sea on gpu: H: 3 units in '
                                          '2 runs'), lines)

  def test_records_say_where_they_trained(self):
    from unittest import mock  # pylint: disable=g-import-not-at-top
    device = lambda platform, kind: mock.Mock(platform=platform,
                                              device_kind=kind)
    with mock.patch.object(bsuite_jax.jax, 'devices',
                           return_value=[device('gpu', 'NVIDIA H200')]):
      self.assertEqual(bsuite_jax.device_name(), 'gpu: NVIDIA H200')
    with mock.patch.object(bsuite_jax.jax, 'devices',
                           return_value=[device('cpu', 'cpu')]):
      self.assertEqual(bsuite_jax.device_name(), 'cpu')

  def test_analyze_bsuite_reports_units(self):
    with tempfile.TemporaryDirectory() as tmp:
      write(tmp, 'a', 'deep_sea/0', 0, np.minimum(np.arange(1, 61), 49))
      result = agent_testing.run_script('experiments.analyze_bsuite',
                                        f'--save_path={tmp}', timeout=300)
      self.assertEqual(result.returncode, 0, result.stderr[-3000:])
      self.assertIn('| a | 10 | 60 |', result.stdout)
      self.assertTrue(os.path.exists(os.path.join(
          tmp, 'analysis', deep_sea_scores.PLOT_FILE)))



def _units(rows):
  """Units of one arm: (size, seed, solved episode or None, episodes)."""
  return pd.DataFrame([dict(size=size, seed=seed, solved_episode=(
      np.nan if solved is None else float(solved)), episodes=episodes)
                       for size, seed, solved, episodes in rows])


class CompareArmsTest(absltest.TestCase):

  def test_counts_sizes_by_median_with_unsolved_at_budget_plus_one(self):
    a = _units([(10, s, e, 2000) for s, e in enumerate((60, 70, 50))] +
               [(12, s, e, 2000) for s, e in enumerate((80, 90, 100))] +
               [(14, s, e, 2000) for s, e in enumerate((None, None, 500))] +
               [(16, 0, 10, 2000)])  # one seed: not compared
    b = _units([(10, s, e, 2000) for s, e in enumerate((80, 90, 80))] +
               [(12, s, e, 2000) for s, e in enumerate((90, 90, 70))] +
               [(14, s, e, 2000) for s, e in enumerate((900, 700, 800))] +
               [(16, s, 20, 2000) for s in range(3)])
    self.assertEqual(deep_sea_scores.solve_samples(a)[14],
                     [2001.0, 2001.0, 500.0])
    result = deep_sea_scores.compare_arms(a, b)
    self.assertEqual(result['sizes'], [10, 12, 14])
    self.assertEqual(result['median_a'], [60.0, 90.0, 2001.0])
    self.assertEqual(result['median_b'], [80.0, 90.0, 800.0])
    self.assertEqual((result['sooner'], result['level'], result['later']),
                     (1, 1, 1))
    self.assertAlmostEqual(result['sign_p'], 1.0)
    self.assertAlmostEqual(result['ratio_median'], 1.0)
    self.assertEqual(result['ratio_range'], (0.75, 2001 / 800))
    # Size 10: every seed of A before every seed of B.
    self.assertAlmostEqual(result['rank_p'][0], 0.1)
    self.assertEqual((result['seeds_a'], result['seeds_b']),
                     ([3, 3, 3], [3, 3, 3]))

  def test_sooner_everywhere_is_what_the_sign_test_sees(self):
    a = _units([(n, s, 100 * n, 2000) for n in range(10, 30, 2)
                for s in range(3)])
    b = _units([(n, s, 100 * n + 50, 2000) for n in range(10, 30, 2)
                for s in range(3)])
    result = deep_sea_scores.compare_arms(a, b)
    self.assertEqual(result['sooner'], 10)
    self.assertAlmostEqual(result['sign_p'], 2 / 2**10)

  def test_no_size_with_three_seeds_each_is_refused(self):
    a = _units([(10, 0, 60, 2000), (10, 1, 60, 2000), (10, 2, 70, 2000)])
    b = _units([(10, 0, 60, 2000), (10, 1, 60, 2000)])
    with self.assertRaisesRegex(ValueError, 'no size where both arms'):
      deep_sea_scores.compare_arms(a, b)


class GeneratedBlockTest(absltest.TestCase):
  """`doc_blocks.replace_block`, which writes every generated table into the
  docs."""

  def test_only_the_block_changes_and_missing_markers_raise(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'doc.md')
      with open(path, 'w', encoding='utf-8') as f:
        f.write('intro\n<!-- a -->\nold\nrows\n<!-- b -->\noutro\n')
      doc_blocks.replace_block(path, '<!-- a -->', '<!-- b -->', '| new |')
      with open(path, encoding='utf-8') as f:
        self.assertEqual(f.read(),
                         'intro\n<!-- a -->\n| new |\n<!-- b -->\noutro\n')
      with self.assertRaisesRegex(ValueError, 'doc.md: no block between'):
        doc_blocks.replace_block(path, '<!-- c -->', '<!-- b -->', 'x')


if __name__ == '__main__':
  absltest.main()
