"""experiments.benchmarks.benchmark_bsuite_runners at a tiny size."""

import contextlib
import csv
import io
import os
import tempfile

from absl.testing import absltest

from experiments.benchmarks import benchmark_bsuite_runners


class BenchmarkRunnersTest(absltest.TestCase):

  def test_a_row_per_agent_and_experiment_and_a_projection(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'runners.csv')
      printed = io.StringIO()
      with contextlib.redirect_stdout(printed):
        rows = benchmark_bsuite_runners.benchmark(
            ['dqn'], ['bandit'], loop_steps=20, jax_steps=50,
            ids_per_program=3, output_csv=path)
      [row] = rows
      self.assertEqual((row['agent'], row['experiment']), ('dqn', 'bandit'))
      self.assertGreater(row['loop_steps_per_s'], 0)
      self.assertGreater(row['jax_steps_per_s'], 0)
      self.assertEqual(row['program_ids'], 3)
      # bandit: 20 ids x 10,000 one-step episodes.
      self.assertEqual(row['suite_steps'], 200_000)
      self.assertAlmostEqual(
          row['projected_hours'],
          200_000 / row['jax_steps_per_s'] / 3600, delta=0.01)
      self.assertIn('dqn: the 1 experiments, one seed, projected',
                    printed.getvalue())
      # umbrella_distract's ids differ in observation shape: only those of
      # the first id's shape share its program.
      self.assertEqual(
          benchmark_bsuite_runners.program_ids('umbrella_distract', 0),
          ['umbrella_distract/0'])
      self.assertLen(benchmark_bsuite_runners.program_ids('catch', 0), 20)
      with open(path, newline='') as f:
        self.assertEqual(list(next(csv.DictReader(f))),
                         list(benchmark_bsuite_runners.COLUMNS))
      table = benchmark_bsuite_runners.markdown([path]).splitlines()
      self.assertLen(table, 3)  # one experiment: no whole-suite line
      cells = [c.strip() for c in table[2].strip('|').split('|')]
      self.assertEqual(cells[:3], ['dqn', 'bandit', '3'])
      self.assertEqual(cells[7], '200,000')


if __name__ == '__main__':
  absltest.main()
