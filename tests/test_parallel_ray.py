"""The Ray backend: the same logs as the local backend, and tasks whose
worker dies are retried."""

import os

import pytest

pytest.importorskip('ray', reason='ray not installed: pip install -e ".[ray]"')

# pylint: disable=g-import-not-at-top,wrong-import-position
from experiments import deep_sea_scaling
from experiments import parallel
from experiments import results
from experiments import run_bsuite
from tests import agent_testing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IDS = 'bandit/0,deep_sea/0'  # ids whose environments are seeded


def die_once(marker: str, value: int) -> int:
  """Kills its worker process the first time (no exception: a crash)."""
  if not os.path.exists(marker):
    with open(marker, 'w') as f:
      f.write('died\n')
    os._exit(1)  # pylint: disable=protected-access
  return 2 * value


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
  assert '2 of 2 ids to run' in ray.stdout
  for bsuite_id in IDS.split(','):
    logs = [open(run_bsuite.csv_path(bsuite_id, f'{tmp_path}/{b}/dqn')).read()
            for b in ('local', 'ray')]
    assert logs[0].count('\n') > 10
    assert logs[1] == logs[0], bsuite_id
  # Finished ids are skipped by the Ray backend as by the local one.
  again = agent_testing.run_script('experiments.run_bsuite', *flags,
                                   f'--save_path={tmp_path}/ray',
                                   '--backend=ray')
  assert '0 of 2 ids to run' in again.stdout


def test_task_whose_worker_dies_is_retried(tmp_path, monkeypatch):
  monkeypatch.setenv('PYTHONPATH', ROOT)
  import ray
  tasks = [(str(tmp_path / 'marker_a'), 3), (str(tmp_path / 'marker_b'), 4)]
  try:
    results = dict(parallel.run_tasks(die_once, tasks, 2, backend='ray'))
  finally:
    if ray.is_initialized():
      ray.shutdown()
  assert results == {tasks[0]: 6, tasks[1]: 8}
  assert all(os.path.exists(marker) for marker, _ in tasks)  # both died once


def test_unknown_backend_is_named():
  with pytest.raises(ValueError, match="backend must be one of"):
    list(parallel.run_tasks(die_once, [], 1, backend='dask'))


def test_deep_sea_scaling_on_ray_gives_the_bsuite_backend_rows(tmp_path):
  flags = ('--agents=dqn', '--sizes=4', '--seeds=2', '--num_episodes=8',
           '--progress_every=0')
  runs = {}
  for backend in ('bsuite', 'ray'):
    done = agent_testing.run_script(
        'experiments.deep_sea_scaling', *flags, f'--backend={backend}',
        f'--output_dir={tmp_path}/{backend}', '--num_workers=2')
    assert done.returncode == 0, done.stderr[-3000:]
    rows = results.read_rows(
        str(tmp_path / backend / deep_sea_scaling.RUNS_FILE),
        deep_sea_scaling.RUN_COLUMNS)
    runs[backend] = sorted((r['seed'], r['regret'],
                            r['first_treasure_episode']) for r in rows)
  assert len(runs['ray']) == 2
  assert runs['ray'] == runs['bsuite']
