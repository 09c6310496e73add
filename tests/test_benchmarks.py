"""The benchmark scripts run at tiny sizes and write what they claim."""

import csv
import os
import subprocess
import sys
import tempfile

from absl.testing import absltest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_module(*args):
  return subprocess.run([sys.executable, '-m', *args], cwd=ROOT, check=True,
                        capture_output=True, text=True, timeout=600).stdout


class BenchmarkCoreTest(absltest.TestCase):

  def test_writes_one_positive_row_per_function_and_action_count(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'core.csv')
      out = run_module('experiments.benchmark_core', '--repeats=2',
                       '--batch_size=4', '--num_atoms=11', '--actions=2,3',
                       f'--output_csv={path}')
      with open(path) as f:
        rows = list(csv.DictReader(f))
    self.assertEqual(set(rows[0]), {'name', 'num_actions', 'batch_size',
                                    'num_atoms', 'microseconds_per_call'})
    names = {r['name'] for r in rows}
    self.assertGreaterEqual(len(names), 12)
    self.assertLen(rows, 2 * len(names))
    for row in rows:
      self.assertGreater(float(row['microseconds_per_call']), 0.0)
    self.assertIn('faster', out)


class BenchmarkThroughputTest(absltest.TestCase):

  def test_reports_steps_per_second_and_sgd_gflops(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'throughput.csv')
      out = run_module('experiments.benchmark_throughput', '--agents=pe_dqn',
                       '--num_episodes=2', '--warmup_episodes=14',
                       '--sgd_repeats=2', f'--output_csv={path}')
      with open(path) as f:
        rows = {r['agent']: float(r['steps_per_second'])
                for r in csv.DictReader(f)}
    for name in ('pe_dqn', 'bsuite dqn', 'bsuite boot_dqn',
                 'pe_dqn sgd step GFLOP/s', 'matmul peak GFLOP/s'):
      self.assertGreater(rows[name], 0.0, name)
    self.assertIn('% of peak', out)


if __name__ == '__main__':
  absltest.main()
