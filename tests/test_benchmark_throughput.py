"""benchmark_throughput and benchmark_jax_training run at a tiny size and
print what they claim.

benchmark_core has its own tests in test_benchmark_core.py.
"""

import csv
import os
import subprocess
import sys
import tempfile

from absl.testing import absltest

from tests import agent_testing

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


class BenchmarkJaxTrainingTest(absltest.TestCase):

  def test_cold_and_warm_ratios_from_whole_processes(self):
    done = agent_testing.run_script(
        'experiments.benchmark_jax_training', '--agents=dqn', '--size=4',
        '--seeds=2', '--num_episodes=10', '--batchings=vmap')
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    lines = [l for l in done.stdout.splitlines() if 'env steps/s' in l]
    self.assertLen(lines, 4, done.stdout)
    for line, cache, backend in zip(
        lines, ('cold', 'cold', 'warm', 'warm'),
        ('bsuite loop', 'jax vmap', 'bsuite loop', 'jax vmap')):
      self.assertIn(f'{cache} cache, {backend}', line)
    for line in lines[1::2]:
      ratio = float(line.rsplit('ratio ', 1)[1].rstrip('x'))
      self.assertGreater(ratio, 0.0)


if __name__ == '__main__':
  absltest.main()
