"""experiments.paper.toy_regression at a tiny size: files, curves and command line."""

import collections
import contextlib
import csv
import io
import math
import os
import tempfile

from absl import flags
from absl.testing import absltest
import numpy as np

from experiments.paper import toy_regression
from tests import agent_testing

PNG_MAGIC = b'\x89PNG\r\n\x1a\n'

TINY = dict(num_atoms=11, num_steps=300, hidden_sizes=(16, 16),
            learning_rate=3e-3, seed=0, num_points=30, num_grid_points=21,
            log_every=100)


def read_csv(path):
  with open(path, newline='') as f:
    reader = csv.DictReader(f)
    return reader.fieldnames, list(reader)


def brute_force_quantile(atoms, probs, tau):
  """Smallest atom z with P(Z <= z) >= tau, by scanning every atom."""
  atoms = np.asarray(atoms, np.float64)
  probs = np.asarray(probs, np.float64)
  probs = probs / probs.sum()
  best = None
  for z in atoms:
    if probs[atoms <= z].sum() >= tau and (best is None or z < best):
      best = z
  return best


class InProcessTest(absltest.TestCase):
  """`run` once in this process at a tiny size."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.TemporaryDirectory()
    cls.output_dir = os.path.join(cls.tmp.name, 'out')
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
      cls.result = toy_regression.run(cls.output_dir, **TINY)
    cls.out = stdout.getvalue()
    cls.columns, cls.rows = read_csv(cls.result.csv_path)

  @classmethod
  def tearDownClass(cls):
    cls.tmp.cleanup()
    super().tearDownClass()

  def test_files_in_output_dir(self):
    self.assertEqual(
        self.result.csv_path,
        os.path.join(self.output_dir, 'toy_regression.csv'))
    self.assertEqual(
        self.result.summary_path,
        os.path.join(self.output_dir, 'toy_regression_summary.csv'))
    self.assertEqual(
        self.result.png_path,
        os.path.join(self.output_dir, 'toy_regression.png'))

  def test_csv_columns_and_row_count(self):
    self.assertEqual(self.columns, ['model', 'x', 'tau', 'y_quantile'])
    self.assertLen(self.rows, 2 * TINY['num_grid_points'] * 9)
    counts = collections.Counter((r['model'], r['tau']) for r in self.rows)
    self.assertEqual(set(counts), {(m, f'{t / 10:.1f}')
                                   for m in ('categorical', 'quantile')
                                   for t in range(1, 10)})
    self.assertEqual(set(counts.values()), {TINY['num_grid_points']})
    xs = sorted({float(r['x']) for r in self.rows})
    self.assertLen(xs, TINY['num_grid_points'])
    self.assertAlmostEqual(xs[0], -1.5, places=5)
    self.assertAlmostEqual(xs[-1], 1.5, places=5)
    for row in self.rows:
      self.assertTrue(math.isfinite(float(row['y_quantile'])), row)

  def test_quantiles_monotone_in_tau_at_every_x(self):
    curves = collections.defaultdict(list)
    for row in self.rows:
      curves[row['model'], row['x']].append(
          (float(row['tau']), float(row['y_quantile'])))
    self.assertLen(curves, 2 * TINY['num_grid_points'])
    for key, points in curves.items():
      values = [y for _, y in sorted(points)]
      self.assertLen(values, 9)
      self.assertTrue(np.all(np.diff(values) >= 0), (key, values))

  def test_categorical_quantiles_lie_on_the_support(self):
    support = np.linspace(toy_regression.DEFAULT_V_MIN,
                          toy_regression.DEFAULT_V_MAX, TINY['num_atoms'])
    quantiles = self.result.evaluation.quantiles['categorical']
    distance = np.min(np.abs(quantiles[..., None] - support), axis=-1)
    self.assertLess(distance.max(), 1e-5)

  def test_png_written(self):
    with open(self.result.png_path, 'rb') as f:
      content = f.read()
    self.assertGreater(len(content), 1000)
    self.assertTrue(content.startswith(PNG_MAGIC))

  def test_training_reduces_the_loss(self):
    for kind in ('categorical', 'quantile'):
      history = self.result.losses[kind]
      self.assertEqual(history.shape, (TINY['num_steps'],))
      self.assertTrue(np.all(np.isfinite(history)), kind)
      self.assertLess(np.mean(history[-10:]), 0.7 * history[0], kind)

  def test_summary(self):
    columns, rows = read_csv(self.result.summary_path)
    self.assertEqual(columns, ['region', 'num_grid_points', 'mean_w1'])
    by_region = {r['region']: r for r in rows}
    self.assertEqual(list(by_region),
                     ['inside', 'between', 'beyond', 'outside'])
    count = {k: int(r['num_grid_points']) for k, r in by_region.items()}
    self.assertEqual(count['outside'], count['between'] + count['beyond'])
    self.assertEqual(count['inside'] + count['outside'],
                     TINY['num_grid_points'])
    for region in ('inside', 'outside'):
      self.assertGreater(count[region], 0)
      w1 = float(by_region[region]['mean_w1'])
      self.assertTrue(math.isfinite(w1) and w1 >= 0, (region, w1))
    evaluation = self.result.evaluation
    regions = toy_regression.grid_regions(
        evaluation.grid,
        toy_regression.make_data(TINY['num_points'], TINY['seed']))
    for region in ('inside', 'outside'):
      self.assertAlmostEqual(float(by_region[region]['mean_w1']),
                             float(np.mean(evaluation.w1[regions[region]])),
                             places=4)

  def test_progress_and_paths_printed(self):
    self.assertRegex(self.out, r'\[categorical\] step +1/300 +loss \d')
    self.assertRegex(self.out, r'\[quantile\] step +300/300 +loss \d')
    self.assertIn('outside', self.out)
    for path in (self.result.csv_path, self.result.summary_path,
                 self.result.png_path):
      self.assertIn(path, self.out)


class PredictiveQuantilesTest(absltest.TestCase):

  def test_matches_brute_force_on_hand_made_distribution(self):
    # Unsorted, a tied atom and a zero-mass atom; no CDF value equals a tau.
    atoms = np.array([0.7, -1.2, 2.5, 0.7, -0.3, 4.0], np.float32)
    probs = np.array([0.13, 0.22, 0.07, 0.31, 0.27, 0.0], np.float32)
    taus = np.array(toy_regression.TAUS)
    got = np.asarray(toy_regression.predictive_quantiles(atoms, probs, taus))
    want = [brute_force_quantile(atoms, probs, tau) for tau in taus]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    # By hand: the sorted CDF is -1.2: .22, -0.3: .49, 0.7: .93, 2.5: 1.
    np.testing.assert_allclose(
        got, [-1.2, -1.2, -0.3, -0.3, 0.7, 0.7, 0.7, 0.7, 0.7], atol=1e-6)

  def test_matches_brute_force_on_random_distributions(self):
    rng = np.random.default_rng(3)
    taus = np.array(toy_regression.TAUS)
    for _ in range(20):
      atoms = rng.normal(size=13).astype(np.float32)
      probs = rng.random(13).astype(np.float32)
      probs /= probs.sum()
      got = toy_regression.predictive_quantiles(atoms, probs, taus)
      want = [brute_force_quantile(atoms, probs, tau) for tau in taus]
      np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)

  def test_equal_weights_give_numpy_inverted_cdf(self):
    locations = np.random.default_rng(4).normal(size=11).astype(np.float32)
    taus = np.array(toy_regression.TAUS)
    got = toy_regression.predictive_quantiles(
        locations, np.full(11, 1 / 11, np.float32), taus)
    np.testing.assert_allclose(
        np.asarray(got), np.quantile(locations, taus, method='inverted_cdf'),
        atol=1e-6)


class DataAndArgumentsTest(absltest.TestCase):

  def test_data_is_seeded_and_clustered(self):
    data = toy_regression.make_data(31, seed=5)
    again = toy_regression.make_data(31, seed=5)
    np.testing.assert_array_equal(data.xs, again.xs)
    np.testing.assert_array_equal(data.ys, again.ys)
    self.assertEqual(data.xs.shape, (31,))
    self.assertTrue(np.all((data.xs >= -1) & (data.xs <= 1)))
    in_some_cluster = np.zeros(31, bool)
    for lo, hi in toy_regression.CLUSTERS:
      members = (data.xs >= lo) & (data.xs <= hi)
      self.assertGreaterEqual(members.sum(), 31 // 3)
      in_some_cluster |= members
    self.assertTrue(in_some_cluster.all())
    self.assertFalse(np.array_equal(
        data.ys, toy_regression.make_data(31, seed=6).ys))

  def test_grid_regions(self):
    data = toy_regression.Data(
        np.array([-0.9, -0.6, 0.0, 0.1, 0.6, 0.8], np.float32),
        np.zeros(6, np.float32))
    grid = np.array([-1.2, -0.7, -0.3, 0.05, 0.3, 0.7, 1.2], np.float32)
    regions = toy_regression.grid_regions(grid, data)
    self.assertEqual(grid[regions['inside']].tolist(),
                     grid[[1, 3, 5]].tolist())
    self.assertEqual(grid[regions['between']].tolist(),
                     grid[[2, 4]].tolist())
    self.assertEqual(grid[regions['beyond']].tolist(), grid[[0, 6]].tolist())
    np.testing.assert_array_equal(regions['outside'], ~regions['inside'])

  def test_run_rejects_bad_arguments(self):
    with tempfile.TemporaryDirectory() as tmp:
      for kwargs, name in ((dict(num_atoms=1), 'num_atoms'),
                           (dict(num_steps=0), 'num_steps'),
                           (dict(hidden_sizes=()), 'hidden_sizes'),
                           (dict(learning_rate=-1.0), 'learning_rate'),
                           (dict(v_min=1.0, v_max=1.0), 'v_min')):
        with self.assertRaisesRegex(ValueError, name):
          toy_regression.run(tmp, **kwargs)

  def test_flags_parse_and_validate(self):
    flag_values = flags.FlagValues()
    toy_regression.define_flags(flag_values)
    flag_values(['prog', '--num_atoms=7', '--hidden_sizes=8,4'])
    self.assertEqual(flag_values.num_atoms, 7)
    self.assertEqual(flag_values.hidden_sizes, ['8', '4'])
    self.assertEqual(flag_values.save_path, '/tmp/pe_jax/toy_regression')
    for bad, name in (('--num_atoms=1', '--num_atoms'),
                      ('--num_steps=0', '--num_steps'),
                      ('--hidden_sizes=8,x', '--hidden_sizes'),
                      ('--learning_rate=0', '--learning_rate'),
                      ('--num_points=1', '--num_points'),
                      ('--v_min=3', '--v_min')):
      fresh = flags.FlagValues()
      toy_regression.define_flags(fresh)
      with self.assertRaisesRegex(flags.Error, name):
        fresh(['prog', bad])


class CommandLineTest(absltest.TestCase):
  """The absl entry point, as `python -m experiments.paper.toy_regression`."""

  def run_module(self, *flag_args):
    return agent_testing.run_script(
        'experiments.paper.toy_regression', *flag_args, timeout=120,
        env=dict(os.environ, JAX_PLATFORMS='cpu'))

  def test_tiny_run_writes_the_files(self):
    with tempfile.TemporaryDirectory() as tmp:
      result = self.run_module(
          f'--save_path={tmp}', '--num_atoms=5', '--num_steps=20',
          '--hidden_sizes=8', '--num_points=9', '--num_grid_points=7')
      self.assertEqual(result.returncode, 0, result.stderr[-2000:])
      _, rows = read_csv(os.path.join(tmp, 'toy_regression.csv'))
      self.assertLen(rows, 2 * 7 * 9)
      with open(os.path.join(tmp, 'toy_regression.png'), 'rb') as f:
        self.assertTrue(f.read().startswith(PNG_MAGIC))
      self.assertIn(os.path.join(tmp, 'toy_regression_summary.csv'),
                    result.stdout)
      self.assertIn('step', result.stdout)

  def test_bad_flag_value_names_the_flag(self):
    result = self.run_module('--num_atoms=1')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--num_atoms', result.stderr)


if __name__ == '__main__':
  absltest.main()
