"""Runs independent experiment tasks in worker processes, results as they end.

Workers are started with the 'spawn' method: a forked child would inherit the
parent's JAX/XLA runtime threads, which is unsafe. Each worker imports JAX
afresh and compiles its own programs. With `num_workers=1` tasks run in this
process, one after another, which is also what tests use.
"""

import concurrent.futures
import multiprocessing
from typing import Any, Callable, Iterator, Sequence, Tuple


def check_num_workers(num_workers: int) -> None:
  if not isinstance(num_workers, int) or num_workers < 1:
    raise ValueError(f'num_workers must be an integer >= 1, got '
                     f'{num_workers!r}.')


def run_tasks(fn: Callable[..., Any], tasks: Sequence[Tuple[Any, ...]],
              num_workers: int) -> Iterator[Tuple[Tuple[Any, ...], Any]]:
  """Yields (task, fn(*task)) for every task, in order of completion.

  Args:
    fn: a module-level function (picklable), called as `fn(*task)`.
    tasks: argument tuples, each picklable.
    num_workers: worker processes; 1 runs every task in this process.

  Raises:
    The first exception a task raises; tasks not yet started are cancelled,
    so a failing sweep stops instead of burning hours. Results already
    yielded (and whatever the caller saved from them) are kept.
  """
  check_num_workers(num_workers)
  if num_workers == 1 or len(tasks) <= 1:
    for task in tasks:
      yield task, fn(*task)
    return
  context = multiprocessing.get_context('spawn')
  with concurrent.futures.ProcessPoolExecutor(
      max_workers=min(num_workers, len(tasks)), mp_context=context) as pool:
    futures = {pool.submit(fn, *task): task for task in tasks}
    try:
      for future in concurrent.futures.as_completed(futures):
        yield futures[future], future.result()
    except BaseException:
      for future in futures:
        future.cancel()
      raise
