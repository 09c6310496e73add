"""experiments.benchmarks.benchmark_core at a tiny size: the CSV and report it promises."""

import contextlib
import csv
import io
import math
import os
import re
import tempfile

from absl.testing import absltest

from experiments.benchmarks import benchmark_core
from tests import agent_testing


# Every function the benchmark promises, timed at every action count.
EXPECTED_NAMES = {
    'categorical_projection 2K -> K [B]',
    'rlax.categorical_l2_project 2K -> K [B] (reference)',
    'quantile_projection 2K -> K [B]',
    'wasserstein1 quantile vs categorical [B]',
    'scipy.stats.wasserstein_distance loop over B (reference)',
    'quantile_regression_loss K vs 2K [B]',
    'quantile_regression_loss grad [B]',
    'quantile_regression_loss grad, uniform 2K targets [B]',
    'rlax.quantile_regression_loss grad, uniform 2K targets [B] (reference)',
    'categorical_cross_entropy_loss [B]',
    'categorical_cross_entropy_loss grad [B]',
    'mixture + bellman_pushforward M=2 [B]',
    'wasserstein1 quantile vs categorical [B, A]',
    'ensemble_disagreement M=2 [B, A]',
    'ensemble_disagreement M=4 [B, A]',
    'ensemble_disagreement_on_support M=2 [B, A]',
    'ensemble_disagreement M=2, members on one support [B, A] (reference)',
    'DistributionalMLP (512,) M=4 + priors forward [B]',
}


def read_csv(path):
  with open(path, newline='') as f:
    reader = csv.DictReader(f)
    return reader.fieldnames, list(reader)


class InProcessTest(absltest.TestCase):
  """The script's main logic, run once in this process (fast: no re-import)."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.TemporaryDirectory()
    cls.path = os.path.join(cls.tmp.name, 'core.csv')
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
      benchmark_core.benchmark(repeats=2, batch_size=4, num_atoms=11,
                               actions=[2], output_csv=cls.path)
    cls.out = stdout.getvalue()
    cls.columns, cls.rows = read_csv(cls.path)

  @classmethod
  def tearDownClass(cls):
    cls.tmp.cleanup()
    super().tearDownClass()

  def test_csv_columns(self):
    self.assertEqual(self.columns, ['name', 'num_actions', 'batch_size',
                                    'num_atoms', 'microseconds_per_call'])

  def test_one_row_per_function_and_action_count(self):
    names = [r['name'] for r in self.rows]
    self.assertCountEqual(names, EXPECTED_NAMES)
    for row in self.rows:
      self.assertEqual((row['num_actions'], row['batch_size'],
                        row['num_atoms']), ('2', '4', '11'), row['name'])

  def test_timings_positive_and_finite(self):
    for row in self.rows:
      us = float(row['microseconds_per_call'])
      self.assertTrue(math.isfinite(us) and us > 0, (row['name'], us))

  def test_report(self):
    self.assertIn('backend cpu', self.out)
    self.assertIn('devices', self.out)
    self.assertIn('us/call', self.out)
    self.assertIn('us/item', self.out)
    # Every function appears as a table line with its timings.
    for name in EXPECTED_NAMES:
      self.assertRegex(self.out, re.escape(name) + r'\s+\d+\.\d')
    self.assertRegex(self.out, r'pe_jax is \d+\.\dx (faster|slower) than the '
                     r'scipy loop')
    self.assertLen(re.findall(r'pe_jax is \d+\.\dx (?:faster|slower) than rlax',
                              self.out), 2)

  def test_references_compute_the_same_outputs(self):
    differences = re.findall(r'max \|output difference\| (\S+)', self.out)
    self.assertLen(differences, 4)
    for difference in differences:
      self.assertLess(float(difference), 1e-5)


class FormattingTest(absltest.TestCase):

  def test_speedup_phrases(self):
    self.assertEqual(benchmark_core.speedup(1.0, 3.0), '3.0x faster')
    self.assertEqual(benchmark_core.speedup(2.0, 1.0), '2.0x slower')

  def test_table_has_one_block_per_action_count(self):
    rows = [{'name': 'f [B]', 'num_actions': a, 'batch_size': 4,
             'num_atoms': 3, 'microseconds_per_call': 8.0, 'evals': 4}
            for a in (2, 18)]
    table = benchmark_core.format_table(rows)
    self.assertIn('A = 2', table)
    self.assertIn('A = 18', table)
    self.assertLen(re.findall(r'f \[B\]\s+8\.0\s+2\.00\s+4\s+2\.00', table),
                   2)


class CommandLineTest(absltest.TestCase):
  """The absl entry point, as `python -m experiments.benchmarks.benchmark_core`."""

  def run_module(self, *flags):
    return agent_testing.run_script(
        'experiments.benchmarks.benchmark_core', *flags, timeout=120,
        env=dict(os.environ, JAX_PLATFORMS='cpu'))

  def test_flags_reach_the_csv(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'core.csv')
      result = self.run_module('--repeats=1', '--batch_size=2',
                               '--num_atoms=3', '--actions=2',
                               f'--output_csv={path}')
      self.assertEqual(result.returncode, 0, result.stderr[-2000:])
      _, rows = read_csv(path)
    self.assertLen(rows, len(EXPECTED_NAMES))
    self.assertEqual({(r['num_actions'], r['batch_size'], r['num_atoms'])
                      for r in rows}, {('2', '2', '3')})

  def test_rejects_bad_action_counts(self):
    result = self.run_module('--actions=2,x')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--actions', result.stderr)


if __name__ == '__main__':
  absltest.main()
