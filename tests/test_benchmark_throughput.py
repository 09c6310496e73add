"""benchmark_throughput runs at a tiny size and writes what it claims.

benchmark_core has its own tests in test_benchmark_core.py.
"""

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
