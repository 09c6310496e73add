"""run_vizdoom: a CPU smoke run of the command line, and checkpoints that
resume a cut-off run exactly as the uninterrupted one."""

import os

import numpy as np
import pytest

pytest.importorskip(
    'vizdoom', reason='vizdoom not installed: pip install -e ".[vizdoom]"')

# pylint: disable=g-import-not-at-top,wrong-import-position
from experiments.lib import run_tables
from experiments import run_vizdoom
from tests import agent_testing

TINY = dict(batch_size=8, impala_channels=(4,), impala_hidden=8,
            num_atoms=11)
SETTINGS = dict(replay_frames=200, n_step=3, learning_starts=40,
                epsilon_decay_frames=100)
FLAGS = ['--variant=sparse', '--num_envs=2', '--replay_frames=200',
         '--n_step=3', '--learning_starts=40', '--epsilon_decay_frames=100',
         '--batch_size=8', '--impala_channels=4', '--impala_hidden=8',
         '--num_atoms=11', '--max_episode_steps=25',
         '--target_update_frames=40', '--progress_every=1000']


def _run(save_path, frames):
  return run_vizdoom.run('pe_dqn', 'sparse', frames, 2, str(save_path),
                         seed=1, checkpoint_every=60, overrides=TINY,
                         settings=SETTINGS, target_update_frames=40,
                         progress_every=0, env_kwargs={'max_steps': 25})


def test_command_line_smoke_run(tmp_path):
  flags = ['--frames=120', f'--save_path={tmp_path}'] + FLAGS
  # Mostly compiling the pixel programs for 120 frames: at LLVM level 0,
  # as in the test process (measured side by side: 67 s against 98 s at
  # XLA's defaults, which conftest leaves to the scripts tests start).
  env = dict(os.environ)
  env['XLA_FLAGS'] = ' '.join(filter(None, (
      env.get('XLA_FLAGS', ''), '--xla_backend_optimization_level=0')))
  done = agent_testing.run_script('experiments.run_vizdoom', *flags, env=env)
  assert done.returncode == 0, done.stderr[-3000:]
  directory = tmp_path / 'pe_dqn_sparse_seed0'
  rows = run_tables.read_rows(str(directory / 'episodes.csv'),
                           run_vizdoom.EPISODE_COLUMNS)
  # Episodes of 25 steps in 2 environments over 120 frames: 4 end.
  assert len(rows) == 4
  assert all(int(r['length']) == 25 for r in rows)
  assert all(float(r['return']) == pytest.approx(-0.0025, abs=1e-6)
             or float(r['return']) > 0.9 for r in rows)
  assert (directory / 'learning_curve.png').stat().st_size > 1000
  assert 'frames 120/120' in done.stdout
  # A config field the runner owns is refused, naming the flag to use.
  bad = agent_testing.run_script('experiments.run_vizdoom', *flags,
                                 '--target_update_period=5', timeout=300)
  assert bad.returncode != 0
  assert '--target_update_frames' in bad.stderr


def test_resumed_run_equals_the_uninterrupted_one(tmp_path, capsys):
  whole = _run(tmp_path / 'whole', 180)
  # A run stopped after its checkpoint at 120 frames, with an episode logged
  # after the checkpoint (as a kill before the next checkpoint leaves it).
  cut = tmp_path / 'cut'
  first = _run(cut, 120)
  csv_path = os.path.join(run_vizdoom.run_directory(str(cut), 'pe_dqn',
                                                    'sparse', 1),
                          'episodes.csv')
  run_tables.append_row(csv_path, {'frame': 125, 'env': 0, 'return': 0.5,
                                'length': 3}, run_vizdoom.EPISODE_COLUMNS)
  capsys.readouterr()
  resumed = _run(cut, 180)
  assert 'from frame 120 (checkpoint 120' in capsys.readouterr().out
  key = lambda rows: [(int(r['frame']), int(r['env']), float(r['return']),
                       int(r['length'])) for r in rows]
  assert key(resumed)[:len(first)] == key(first)
  assert key(resumed) == key(whole)
  assert len(whole) >= 4
  assert key(run_tables.read_rows(csv_path, run_vizdoom.EPISODE_COLUMNS)) == \
      key(whole)


def test_progress_lines_while_learning_and_checkpointing(tmp_path, capsys):
  """Progress at every step (before, while and after learning starts, and
  across checkpoints) reads metrics that are never donated away."""
  run_vizdoom.run('pe_dqn', 'sparse', 120, 2, str(tmp_path), seed=0,
                  checkpoint_every=60, overrides=TINY, settings=SETTINGS,
                  target_update_frames=40, progress_every=1e-9,
                  env_kwargs={'max_steps': 25})
  lines = [l for l in capsys.readouterr().out.splitlines()
           if l.startswith('frames ')]
  assert len(lines) >= 55  # one per step of 2 frames
  losses = [float(l.rsplit('loss ', 1)[1]) for l in lines]
  assert losses[0] == 0.0  # nothing learned yet
  assert all(np.isfinite(losses)) and losses[-1] > 0.0
