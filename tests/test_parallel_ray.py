"""The Ray backend: the same logs as the local backend, and tasks whose
worker dies are retried."""

import os

import pytest

pytest.importorskip('ray', reason='ray not installed: pip install -e ".[ray]"')

# pylint: disable=g-import-not-at-top,wrong-import-position
from experiments.lib import parallel
from experiments.lib import run_tables
from experiments.paper import deep_sea_scaling
from experiments import run_bsuite
from experiments import tune
from tests import agent_testing
from tests.ray_tasks import die_once
from tests.ray_tasks import niceness

ROOT = agent_testing.ROOT
IDS = 'bandit/0,deep_sea/0'  # ids whose environments are seeded


def test_ray_sweep_writes_the_local_backend_logs(tmp_path):
  flags = ('--agent=dqn', f'--bsuite_id={IDS}', '--num_episodes=30',
           '--progress_every=0')
  local = agent_testing.run_script('experiments.run_bsuite', *flags,
                                   f'--save_path={tmp_path}/local')
  assert local.returncode == 0, local.stderr[-3000:]
  ray = agent_testing.run_script('experiments.run_bsuite', *flags,
                                 f'--save_path={tmp_path}/ray',
                                 '--backend=ray', '--num_workers=2')
  assert ray.returncode == 0, ray.stderr[-3000:]
  assert '2 of 2 units to run' in ray.stdout
  for bsuite_id in IDS.split(','):
    logs = [open(run_bsuite.csv_path(
        bsuite_id, f'{tmp_path}/{b}/dqn/seed_0')).read()
            for b in ('local', 'ray')]
    assert logs[0].count('\n') > 10
    assert logs[1] == logs[0], bsuite_id


def test_dying_worker_is_retried_and_scaling_and_tune_match_local(
    tmp_path, monkeypatch):
  """One Ray cluster for all checks (a cluster takes seconds to start),
  started as the backend starts its own."""
  monkeypatch.setenv('PYTHONPATH', ROOT)
  import ray
  parallel.init_ray(num_cpus=2)
  try:
    # Workers at the driver's priority (Ray's default, nice 15, starves them
    # beside any busy process).
    (_, worker_niceness), = parallel.run_tasks(niceness, [()], 1,
                                               backend='ray')
    assert worker_niceness == os.nice(0)
    tasks = [(str(tmp_path / 'marker_a'), 3), (str(tmp_path / 'marker_b'), 4)]
    results_by_task = dict(parallel.run_tasks(die_once, tasks, 2,
                                              backend='ray'))
    assert results_by_task == {tasks[0]: 6, tasks[1]: 8}
    assert all(os.path.exists(marker) for marker, _ in tasks)  # both died
    runs = {}
    for backend in ('local', 'ray'):  # bsuite's loop, local or Ray tasks
      output_dir = str(tmp_path / backend)
      deep_sea_scaling.run(output_dir, ['dqn'], [4], 2, 8,
                           num_workers=2 if backend == 'ray' else 1,
                           progress_every=0, backend=backend)
      rows = run_tables.read_rows(
          os.path.join(output_dir, deep_sea_scaling.RUNS_FILE),
          deep_sea_scaling.RUN_COLUMNS)
      runs[backend] = sorted((r['seed'], r['regret'],
                              r['first_treasure_episode']) for r in rows)
    assert len(runs['ray']) == 2
    assert runs['ray'] == runs['local']
    # The search: programs as Ray tasks asked lazily, reporting to one sqlite
    # study; the random sampler asks the same trials in the same order, so
    # the scores equal the local search's.
    tables = {}
    for backend in ('local', 'ray'):
      output_dir = tmp_path / f'tune_{backend}'
      output_dir.mkdir()
      search = tune.Search('dqn', ['deep_sea/0'], 10,
                           f'sqlite:///{output_dir}/study.db', 'tune_dqn',
                           'random', 0, {'batch_size': 8,
                                         'min_replay_size': 8})
      search.run(4, 2, backend=backend, num_workers=2)
      assert search.finished() == 4
      rows = search.write_results(str(output_dir))
      tables[backend] = sorted((r['trial'], r['f:deep_sea/0']) for r in rows)
    assert len(tables['ray']) == 4
    assert tables['ray'] == tables['local']
  finally:
    ray.shutdown()


def test_unknown_backend_is_named():
  with pytest.raises(ValueError, match="backend must be one of"):
    list(parallel.run_tasks(die_once, [], 1, backend='dask'))


def test_a_killed_driver_leaves_no_ray_process(tmp_path):
  """A driver that started its own local cluster and is killed (SIGKILL: no
  handler runs) leaves nothing: GCS, raylet, agents and workers all end."""
  import signal  # pylint: disable=g-import-not-at-top
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  import psutil  # pylint: disable=g-import-not-at-top
  driver = subprocess.Popen(
      [sys.executable, '-m', 'experiments.run_bsuite', '--agent=dqn',
       '--bsuite_id=deep_sea/0', '--num_episodes=100000', '--backend=ray',
       '--progress_every=0', f'--save_path={tmp_path}'], cwd=ROOT,
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  cluster, names = [], ''
  try:
    # Wait until the cluster is complete: its two agents (what a watchdog
    # started too late leaves behind, a minute or more) and a worker.
    deadline = time.time() + 180
    while time.time() < deadline and not all(
        n in names for n in ('DashboardAgent', 'RuntimeEnvAgent', 'raylet')):
      time.sleep(0.5)
      cluster = psutil.Process(driver.pid).children(recursive=True)
      names = ' '.join(p.name() for p in cluster if p.is_running())
    assert 'RuntimeEnvAgent' in names, names
    # The watchdog is there as soon as the cluster is (started before it:
    # one started after `init_ray` returns would miss a kill at this point).
    def command_line(process):
      try:
        return process.cmdline()
      except psutil.Error:
        return []
    watchdog = ['-c', parallel._WATCHDOG]  # pylint: disable=protected-access
    assert any(command_line(p)[1:3] == watchdog for p in cluster), names
    time.sleep(2.0)  # the cluster up a moment, as when a user kills it
  finally:
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=120)
  # The driver's watchdog (started before the cluster) ends them: SIGTERM,
  # then SIGKILL 3 s later. What is asserted is that nothing stays, not how
  # fast it goes (on 2 saturated cores, slower).
  _, alive = psutil.wait_procs(cluster, timeout=240)
  assert not alive, [p.name() for p in alive]
