"""benchmark_throughput and benchmark_jax_training run at a tiny size and
print what they claim.

benchmark_core has its own tests in test_benchmark_core.py.
"""

import csv
import os
import tempfile

from absl.testing import absltest

from tests import agent_testing



def run_module(module, *flags):
  result = agent_testing.run_script(module, *flags)
  result.check_returncode()
  return result.stdout


class BenchmarkThroughputTest(absltest.TestCase):

  def test_reports_steps_per_second_and_sgd_gflops(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'throughput.csv')
      out = run_module('experiments.benchmarks.benchmark_throughput',
                       '--agents=pe_dqn',
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
        'experiments.benchmarks.benchmark_jax_training', '--agents=dqn', '--size=4',
        '--seeds=2', '--num_episodes=10', '--batchings=vmap')
    self.assertEqual(done.returncode, 0, done.stderr[-3000:])
    lines = [l for l in done.stdout.splitlines() if 'env steps/s' in l]
    self.assertLen(lines, 5, done.stdout)
    self.assertIn("bsuite's reference agent, bsuite loop", lines[0])
    reference_rate = float(lines[0].split(': ')[1].split()[0])
    self.assertGreater(reference_rate, 0.0)
    for line, cache, backend in zip(
        lines[1:], ('cold', 'cold', 'warm', 'warm'),
        ('bsuite loop', 'jax vmap', 'bsuite loop', 'jax vmap')):
      self.assertIn(f'{cache} cache, {backend}', line)
    for line in lines[2::2]:
      ratio = float(line.split('ratio ')[1].split('x')[0])
      self.assertGreater(ratio, 0.0)
      # The second ratio is the jax rate over the reference's, computed
      # from the unrounded rates: the printed rates (0.05 either way) and
      # the ratio (0.005) bound it. On a slow, loaded machine a rate of a
      # few steps/s makes that bound wide; a wrong ratio still falls out.
      jax_rate = float(line.split(': ')[1].split()[0])
      against_reference = float(
          line.split(', ')[-1].split("x bsuite's reference")[0])
      low = (jax_rate - 0.05) / (reference_rate + 0.05) - 0.005
      high = (jax_rate + 0.05) / max(reference_rate - 0.05, 1e-9) + 0.005
      self.assertBetween(against_reference, low, high)

  def test_reference_refused_for_agents_bsuite_lacks(self):
    from experiments.benchmarks import benchmark_jax_training  # pylint: disable=g-import-not-at-top
    with self.assertRaisesRegex(ValueError, 'pe_dqn'):
      benchmark_jax_training.reference_process_seconds('pe_dqn', 4, 1)


if __name__ == '__main__':
  absltest.main()
