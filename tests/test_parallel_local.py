"""experiments.lib.parallel on local worker processes: a worker that dies
takes only its own task."""

import contextlib
import io

from absl.testing import absltest

from experiments.lib import parallel
from tests import parallel_tasks


class LocalWorkersTest(absltest.TestCase):

  def test_a_killed_worker_takes_only_its_own_task(self):
    tasks = [('a', 3.0), ('die', 0.0), ('b', 0.1), ('c', 0.1)]
    got = []
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), self.assertRaisesRegex(
        parallel.WorkerDiedError, r'1 worker\(s\) died .* running die;'):
      for task, result in parallel.run_tasks(parallel_tasks.die_or_return,
                                             tasks, num_workers=2):
        got.append((task[0], result))
    # 'a' was running beside the dying worker and finished; the tasks after
    # it ran on a fresh worker.
    self.assertCountEqual(got, [('a', 'A'), ('b', 'B'), ('c', 'C')])
    self.assertIn('A worker died running die', printed.getvalue())

  def test_results_come_in_order_of_completion(self):
    tasks = [('slow', 1.5), ('fast', 0.0)]
    order = [task[0] for task, _ in parallel.run_tasks(
        parallel_tasks.die_or_return, tasks, num_workers=2)]
    self.assertEqual(order, ['fast', 'slow'])


if __name__ == '__main__':
  absltest.main()
