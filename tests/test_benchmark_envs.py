"""experiments.benchmarks.benchmark_envs at a tiny size: its table and CSV."""

import contextlib
import csv
import io
import os
import tempfile

from absl.testing import absltest

from experiments.benchmarks import benchmark_envs


class BenchmarkEnvsTest(absltest.TestCase):

  def test_rows_for_each_experiment_and_a_line_for_missing_mnist(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'envs.csv')
      printed = io.StringIO()
      with contextlib.redirect_stdout(printed):
        rows = benchmark_envs.benchmark(
            ['catch', 'mnist'], seeds=2, steps=20,
            bsuite_steps=50, mnist_dir=os.path.join(tmp, 'none'),
            output_csv=path)
      self.assertEqual([r['experiment'] for r in rows], ['catch'])
      self.assertEqual((rows[0]['ids'], rows[0]['programs']), (20, 1))
      for row in rows:
        self.assertGreater(row['port_steps_per_s'], 0)
        self.assertGreater(row['bsuite_steps_per_s'], 0)
        self.assertAlmostEqual(
            row['ratio'], row['port_steps_per_s'] / row['bsuite_steps_per_s'],
            delta=0.06)
      self.assertIn('mnist', printed.getvalue())
      self.assertIn('skipped: MNIST files missing', printed.getvalue())
      with open(path, newline='') as f:
        written = list(csv.DictReader(f))
      self.assertEqual(list(written[0]), list(benchmark_envs.COLUMNS))
      self.assertLen(written, 1)

  def test_ids_of_other_shapes_are_other_programs(self):
    ids, groups = benchmark_envs._groups('memory_size', 2, None)  # pylint: disable=protected-access
    self.assertLen(ids, 17)
    self.assertLen(groups, 17)  # a width per id
    self.assertTrue(all(len(group) == 2 for group in groups))  # its seeds


if __name__ == '__main__':
  absltest.main()
