"""Runs independent experiment tasks in worker processes, results as they end.

Two backends:
- 'local': worker processes on this machine, started with the 'spawn'
  method (a forked child would inherit the parent's JAX/XLA runtime threads,
  which is unsafe), without GPU memory preallocation, as they share a GPU.
  With `num_workers=1` tasks run in this process, one after another, which
  is also what tests use.
- 'ray': one Ray task per experiment task, on a local Ray cluster started
  here or on an existing one (`ray_address='auto'` or 'HOST:PORT', as
  `ray start --head` prints), at most `num_workers` in flight. A task whose
  worker dies is retried (`RAY_MAX_RETRIES` times); tasks write their own
  results, as with the local backend, so a retried task redoes its id.
  Each task gets `cpus_per_task` CPUs (and `gpus_per_task` GPUs); XLA's CPU
  thread pool is limited to one thread for one-CPU tasks, and GPU memory is
  not preallocated, so tasks can share a GPU. A local cluster runs its
  workers at the driver's priority (Ray's default is nice 15: beside any
  other busy process its tasks starve, e.g. a worker's imports took 96 s of
  wall time for 3.4 s of CPU with two training processes on the 2 cores).
Either way each worker imports JAX afresh and compiles its own programs.
"""

import contextlib
import concurrent.futures
import multiprocessing
import os
import signal
import sys
import threading
from typing import Any, Callable, Iterable, Iterator, Optional, Tuple

from experiments.lib import interrupts


def check_num_workers(num_workers: int) -> None:
  if not isinstance(num_workers, int) or num_workers < 1:
    raise ValueError(f'num_workers must be an integer >= 1, got '
                     f'{num_workers!r}.')


BACKENDS = ('local', 'ray')
RAY_MAX_RETRIES = 3


def define_backend_flags(backend_help: str, task: str = 'task') -> None:
  """--backend (local or ray), --ray_address, --cpus_per_task and
  --gpus_per_task, as the sweep scripts share them."""
  import sys  # pylint: disable=g-import-not-at-top
  from absl import flags  # pylint: disable=g-import-not-at-top
  # Owned by the calling script, so that its --help lists them.
  caller = sys._getframe(1).f_globals['__name__']  # pylint: disable=protected-access
  owner = {'module_name': sys.argv[0] if caller == '__main__' else caller}
  flags.DEFINE_enum('backend', 'local', list(BACKENDS), backend_help, **owner)
  flags.DEFINE_string('ray_address', None,
                      'With --backend=ray: unset starts a local Ray cluster; '
                      '"auto" or HOST:PORT joins a running one.', **owner)
  flags.DEFINE_float('cpus_per_task', 1.0, f'Ray CPUs of each {task}.',
                     lower_bound=0.0, **owner)
  flags.DEFINE_float('gpus_per_task', 0.0, f'Ray GPUs of each {task}.',
                     lower_bound=0.0, **owner)


class MissingDependencyError(ImportError):
  """An optional package that the chosen option needs is not installed."""


def run_tasks(fn: Callable[..., Any], tasks: Iterable[Tuple[Any, ...]],
              num_workers: int, backend: str = 'local',
              ray_address: Optional[str] = None, cpus_per_task: float = 1.0,
              gpus_per_task: float = 0.0
              ) -> Iterator[Tuple[Tuple[Any, ...], Any]]:
  """Yields (task, fn(*task)) for every task, in order of completion.

  Args:
    fn: a module-level function (picklable), called as `fn(*task)`.
    tasks: argument tuples, each picklable. The ray backend draws them
      lazily, one as a slot frees, so a generator may decide the next task
      from the results so far (the hyperparameter search asks its sampler
      then).
    num_workers: worker processes (local) or tasks in flight (ray); 1 runs
      every task in this process with the local backend.
    backend: 'local' or 'ray'.
    ray_address: None starts a local Ray cluster; 'auto' or 'HOST:PORT'
      joins a running one.
    cpus_per_task, gpus_per_task: Ray resources of each task.

  Raises:
    The first exception a task raises; tasks not yet started are cancelled,
    so a failing sweep stops instead of burning hours. Results already
    yielded (and whatever the caller saved from them) are kept.
  """
  check_num_workers(num_workers)
  if backend not in BACKENDS:
    raise ValueError(f'backend must be one of {BACKENDS}, got {backend!r}.')
  if backend == 'ray':
    yield from _run_ray(fn, tasks, num_workers, ray_address, cpus_per_task,
                        gpus_per_task)
    return
  tasks = list(tasks)
  if num_workers == 1 or len(tasks) <= 1:
    for task in tasks:
      yield task, fn(*task)
    return
  yield from _run_local(fn, tasks, min(num_workers, len(tasks)))


class WorkerDiedError(RuntimeError):
  """A worker process ended without a result (killed, or out of memory)."""


def _new_slot() -> concurrent.futures.ProcessPoolExecutor:
  return concurrent.futures.ProcessPoolExecutor(
      max_workers=1, mp_context=multiprocessing.get_context('spawn'),
      initializer=_set_environment,
      initargs=(_local_worker_environment(),))


def _run_local(fn, tasks, num_workers: int):
  """`run_tasks` on local worker processes: one single-worker pool per slot,
  so a worker that dies (SIGKILL, out of memory) takes only its own task:
  it is named in one line, the others run on, and WorkerDiedError names it
  at the end (the same command resumes it)."""
  slots = [_new_slot() for _ in range(num_workers)]
  pending = list(tasks)
  running = {}  # future -> (slot index, task)
  died = []
  try:
    while pending or running:
      for index, slot in enumerate(slots):
        busy = any(i == index for i, _ in running.values())
        if not busy and pending:
          task = pending.pop(0)
          running[slot.submit(fn, *task)] = (index, task)
      done, _ = concurrent.futures.wait(
          running, return_when=concurrent.futures.FIRST_COMPLETED)
      for future in done:
        index, task = running.pop(future)
        try:
          result = future.result()
        except concurrent.futures.process.BrokenProcessPool:
          died.append(task)
          print(f'A worker died running {_describe(task)}; the other '
                'workers go on, and the same command resumes its unit.',
                flush=True)
          slots[index].shutdown(wait=False, cancel_futures=True)
          slots[index] = _new_slot()
          continue
        yield task, result
  except BaseException:
    # A stop (or a failed task) reaches the workers now: each raises
    # KeyboardInterrupt in its task (`interrupts.install`), instead of the
    # pools waiting for their ids to finish.
    for slot in slots:
      _stop_workers(slot)
    raise
  finally:
    for slot in slots:
      slot.shutdown(wait=True, cancel_futures=True)
  if died:
    raise WorkerDiedError(
        f'{len(died)} worker(s) died (killed or out of memory) running '
        f'{"; ".join(_describe(t) for t in died)}; the same command resumes '
        'them.')


def _describe(task) -> str:
  """A task as its first arguments name it (e.g. its bsuite id)."""
  shown = [str(a) for a in task[:2] if isinstance(a, (str, int))]
  return ' '.join(shown) or repr(task)[:80]


def _stop_workers(pool: concurrent.futures.ProcessPoolExecutor) -> None:
  # pylint: disable-next=protected-access
  for process in list((getattr(pool, '_processes', None) or {}).values()):
    with contextlib.suppress(ProcessLookupError, AttributeError):
      if process.is_alive():
        os.kill(process.pid, signal.SIGTERM)


def _local_worker_environment() -> dict:
  """Environment of local workers: several share this machine's GPU, so
  none may preallocate most of its memory (unless the user said so)."""
  return {'XLA_PYTHON_CLIENT_PREALLOCATE': os.environ.get(
      'XLA_PYTHON_CLIENT_PREALLOCATE', 'false')}


def _set_environment(environment: dict) -> None:
  """Worker initializer: runs before the worker's JAX starts a backend.
  SIGINT and SIGTERM stop the worker's task as they stop a command."""
  os.environ.update(environment)
  from experiments.lib import interrupts  # pylint: disable=g-import-not-at-top
  interrupts.install()


def init_ray(address: Optional[str] = None, cpus_per_task: float = 1.0,
             num_cpus: Optional[int] = None) -> None:
  """Starts (`address` None) or joins a Ray cluster, with this module's
  worker environment; a started cluster's workers run at this process's
  priority, not Ray's nice 15. `num_cpus`: a started cluster's CPUs (None:
  all)."""
  import ray  # pylint: disable=g-import-not-at-top
  options = {}
  # (Ray joins the cluster in RAY_ADDRESS when no address is given.)
  if address is None and not os.environ.get('RAY_ADDRESS'):
    options = {'num_cpus': num_cpus, '_system_config': {'worker_niceness': 0}}
  ray.init(address=address, include_dashboard=False, logging_level='WARNING',
           runtime_env={'env_vars': _worker_environment(cpus_per_task)},
           **options)


def _worker_environment(cpus_per_task: float) -> dict:
  """Environment variables of Ray workers: XLA threads and GPU memory."""
  flags = os.environ.get('XLA_FLAGS', '')
  if cpus_per_task <= 1 and 'xla_cpu_multi_thread_eigen' not in flags:
    flags = (flags + ' --xla_cpu_multi_thread_eigen=false').strip()
  env = {'XLA_PYTHON_CLIENT_PREALLOCATE': 'false'}
  if flags:
    env['XLA_FLAGS'] = flags
  if os.environ.get('PYTHONPATH'):
    env['PYTHONPATH'] = os.environ['PYTHONPATH']
  return env


# Run by a separate process: twice a second it notes the driver's descendants
# (the local Ray cluster: GCS, raylet, agents, workers); once the driver is
# gone (even by SIGKILL, which no handler sees) it ends them.
_WATCHDOG = """
import contextlib, sys, time, psutil
driver = psutil.Process(int(sys.argv[1]))
me = psutil.Process()
known = []
gone = contextlib.suppress(psutil.Error)  # a process may end meanwhile
while driver.is_running() and driver.status() != psutil.STATUS_ZOMBIE:
  with gone:
    known = [p for p in driver.children(recursive=True) if p.pid != me.pid]
  time.sleep(0.5)
# Children started since the last look (the raylet's agents) are still
# found through their parents, if those live yet.
for process in list(known):
  with gone:
    known += process.children(recursive=True)
for process in known:
  with gone:
    process.terminate()
# (The raylet's agents outlive a SIGTERM by more than 10 s: killed after 3.)
_, alive = psutil.wait_procs(known, timeout=3)
for process in alive:
  with gone:
    process.kill()
"""


def _start_cluster_watchdog():
  """A process that ends the local Ray cluster if this driver dies."""
  import subprocess  # pylint: disable=g-import-not-at-top
  return subprocess.Popen([sys.executable, '-c', _WATCHDOG, str(os.getpid())],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)


def _run_ray(fn, tasks, num_workers, ray_address, cpus_per_task,
             gpus_per_task):
  try:
    import ray  # pylint: disable=g-import-not-at-top
  except ImportError as error:
    raise MissingDependencyError(
        '--backend=ray needs Ray: pip install -e ".[ray]"') from error
  started = False
  previous_handler = watchdog = None
  if not ray.is_initialized():
    # Watching from before the cluster starts: `init_ray` returns seconds
    # after the cluster's processes are up, and a watchdog started after it
    # would miss a driver killed in between (its cluster's agents then
    # notice by themselves, a minute or more later).
    watchdog = _start_cluster_watchdog()
    try:
      init_ray(ray_address, cpus_per_task)
    except BaseException:
      watchdog.terminate()
      raise
    started = True
    if threading.current_thread() is threading.main_thread():
      # Ray's start replaces SIGTERM's handler with one that aborts, and
      # `kill` would end Python without `finally`, leaving the local
      # cluster's agents running: SIGTERM stops the run as Ctrl-C does
      # (`interrupts`: the command says where to resume), through the
      # `finally` below that shuts Ray down.
      previous_handler = signal.signal(signal.SIGTERM,
                                       interrupts.record_and_raise)
  remote = ray.remote(num_cpus=cpus_per_task, num_gpus=gpus_per_task,
                      max_retries=RAY_MAX_RETRIES)(fn)
  queue = iter(tasks)
  pending = {}
  try:
    while True:
      while len(pending) < num_workers:
        task = next(queue, None)
        if task is None:
          break
        pending[remote.remote(*task)] = task
      if not pending:
        break
      (ref,), _ = ray.wait(list(pending), num_returns=1)
      task = pending.pop(ref)
      yield task, ray.get(ref)
  except BaseException:
    for ref in pending:
      ray.cancel(ref, force=True)
    raise
  finally:
    if started:
      ray.shutdown()
      if previous_handler is not None:
        signal.signal(signal.SIGTERM, previous_handler)
      if watchdog is not None:
        watchdog.terminate()
