r"""Inverse counts, ensemble disagreement and bonus over deep sea's grid.

  python -m experiments.paper.uncertainty_maps --size=10 \
      --snapshot_steps=1000,3000,6000 --save_path=/tmp/maps
  # Closer to the paper's Fig. 9 (t up to 32,000 steps):
  python -m experiments.paper.uncertainty_maps --size=20 \
      --snapshot_steps=2000,8000,16000,32000

PE-DQN paper, Fig. 9 (Appendix B.3): a PE-DQN agent trains on deep sea; at
each snapshot step (total environment steps t) every cell (row, column) of the
grid is fed to the agent as an observation, and three maps are drawn, each
the maximum over the two actions:

  inverse counts   1 / (N(s, a) + 0.1), N counting the agent's own visits
  w_avg(s, a)      the W1 disagreement of the value ensemble
  b_phi(s, a)      the propagated bonus the agent acts on

Only the lower triangle (column <= row) is reachable; the rest is left blank.
w_avg should track the inverse counts (a local, per-visit error), while the
bonus should stay high at the start state until the whole grid is explored.

Outputs in `--save_path`: uncertainty_maps.csv (one row per snapshot step and
reachable cell) and uncertainty_maps.png (3 rows x snapshot steps).
"""

import os
import time
from typing import Any, Dict, List, Sequence

from absl import app
from absl import flags
from bsuite.environments import deep_sea
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
import numpy as np

import agents
from agents import return_ranges
from experiments.lib import compilation_cache
from experiments.lib import results
from experiments.lib import run_tables
from experiments.lib import hyperparameter_flags

BONUS_AGENTS = ('pe_dqn', 'pe_dqn_qr_qr', 'pe_dqn_c51_c51', 'pe_dqn_ind')

FLAGS = flags.FLAGS


def define_flags() -> None:
  """Defines the command-line flags (only when run as a script, so that
  several experiment modules can be imported into one process)."""
  flags.DEFINE_enum('agent', 'pe_dqn', list(BONUS_AGENTS),
                    'PE-DQN or one of its ablations.')
  flags.DEFINE_integer('size', 10, 'Deep sea size.', lower_bound=2)
  flags.DEFINE_list('snapshot_steps', ['1000', '3000', '6000'],
                    'Total environment steps at which maps are taken.')
  flags.DEFINE_integer('seed', 0, 'Seed of the agent and the environment.',
                       lower_bound=0)
  flags.DEFINE_string('save_path', '/tmp/pe_jax/uncertainty_maps',
                      'Where the CSV and the plot go.')
  flags.DEFINE_float('progress_every', 10.0,
                     'Seconds between progress lines (0: none).',
                     lower_bound=0.0)
  flags.register_validator(
      'snapshot_steps', lambda values: bool(values) and all(
          v.isdigit() and int(v) > 0 for v in values),
      message='--snapshot_steps must be a comma-separated list of step '
      'counts > 0.')
  # One flag per hyperparameter, as run_bsuite (e.g. --disagreement=exact).
  hyperparameter_flags.define_hyperparameter_flags()



CSV_FILE = 'uncertainty_maps.csv'
PLOT_FILE = 'uncertainty_maps.png'
VISITS_FILE = 'disagreement_by_visits.csv'
COLUMNS = ('step', 'row', 'column', 'visits_action_0', 'visits_action_1',
           'inverse_count', 'w_avg', 'bonus', 'w_avg_action_0',
           'w_avg_action_1', 'treasure_found')
VISITS_COLUMNS = ('step', 'mean_w_visited', 'mean_w_never_visited',
                  'never_visited')
MAPS = (('inverse_count', 'inverse counts 1/(N+0.1)'),
        ('w_avg', 'disagreement w_avg'), ('bonus', 'bonus b'))


def grid_observations(size: int) -> np.ndarray:
  """[size * size, size, size] one-hot observations, row-major cells."""
  return np.eye(size * size, dtype=np.float32).reshape(-1, size, size)


def cell(observation: np.ndarray) -> tuple:
  """(row, column) of deep sea's one-hot observation."""
  row, column = np.unravel_index(int(np.argmax(observation)),
                                 observation.shape)
  return int(row), int(column)


def maps(agent, visits: np.ndarray) -> Dict[str, np.ndarray]:
  """[size, size] maps, max over actions; NaN where unreachable."""
  size = visits.shape[0]
  out = agent.evaluate(grid_observations(size))
  reachable = np.tril(np.ones((size, size), bool))
  result = {
      'inverse_count': np.max(1.0 / (visits + 0.1), axis=-1),
      'w_avg': np.asarray(out.disagreement).max(-1).reshape(size, size),
      'bonus': np.asarray(out.bonus).max(-1).reshape(size, size),
  }
  result = {k: np.where(reachable, v, np.nan) for k, v in result.items()}
  # Per action, [size, size, 2] (for the visited / never-visited summary).
  result['w_avg_actions'] = np.where(
      reachable[..., None],
      np.asarray(out.disagreement).reshape(size, size, -1), np.nan)
  return result


def disagreement_by_visits(w_avg_actions: np.ndarray,
                           visits: np.ndarray) -> Dict[str, float]:
  """Mean w_avg over visited and over never-visited reachable (s, a)."""
  size = visits.shape[0]
  reachable = np.tril(np.ones((size, size), bool))[..., None].repeat(
      visits.shape[-1], -1)
  visited = reachable & (visits > 0)
  never = reachable & (visits == 0)
  mean = lambda mask: float(w_avg_actions[mask].mean()) if mask.any() else (
      float('nan'))
  return {'mean_w_visited': mean(visited), 'mean_w_never_visited': mean(never),
          'never_visited': int(never.sum())}


def describe_visits(by_visits: Dict[str, float]) -> str:
  """The progress line's words for `disagreement_by_visits`: a group with
  no (s, a) in it is said to be empty, not given a mean of nan."""
  visited = (f'mean w_avg visited {by_visits["mean_w_visited"]:.4f}'
             if not np.isnan(by_visits['mean_w_visited'])
             else 'nothing visited yet')
  never = by_visits['never_visited']
  if not never:
    return f'{visited}; every reachable (s, a) visited'
  return (f'{visited}, never visited {by_visits["mean_w_never_visited"]:.4f} '
          f'({never} (s, a))')


def run(output_dir: str, size: int, snapshot_steps: Sequence[int],
        agent_name: str = 'pe_dqn', seed: int = 0,
        progress_every: float = 10.0,
        **overrides: Any) -> List[Dict[str, Any]]:
  """Trains, records the maps at each snapshot step, writes CSV and plot.

  Args:
    output_dir: where uncertainty_maps.csv and .png go.
    size: deep sea size.
    snapshot_steps: increasing total environment steps.
    agent_name: one of `BONUS_AGENTS`.
    seed: seed of the agent and the environment's action mapping.
    progress_every: seconds between progress lines (0: none).
    **overrides: agent hyperparameters (e.g. hidden_sizes=(32,)).

  Returns:
    The CSV rows.
  """
  if agent_name not in BONUS_AGENTS:
    raise ValueError(f'agent must be one of {BONUS_AGENTS}, got '
                     f'{agent_name!r}.')
  if size < 2:
    raise ValueError(f'size must be >= 2, got {size}.')
  snapshot_steps = [int(c) for c in snapshot_steps]
  if not snapshot_steps or any(c <= 0 for c in snapshot_steps) or (
      snapshot_steps != sorted(set(snapshot_steps))):
    raise ValueError('snapshot_steps must be distinct, increasing step counts '
                     f'> 0, got {snapshot_steps}.')
  env = deep_sea.DeepSea(size=size, seed=seed, mapping_seed=seed)
  overrides.setdefault('v_min', return_ranges.return_range_for_experiment(
      'deep_sea', size=size)[0])
  overrides.setdefault('v_max', return_ranges.return_range_for_experiment(
      'deep_sea', size=size)[1])
  num_episodes = -(-snapshot_steps[-1] // size)  # Beta decays over a third.
  agent = agents.make(agent_name, env.observation_spec(), env.action_spec(),
                      seed=seed, num_episodes=num_episodes, **overrides)
  visits = np.zeros((size, size, 2))
  rows, snapshots, visit_rows = [], [], []
  step, episode, found_at = 0, 0, None
  start = last_report = time.time()
  pending = list(snapshot_steps)
  while pending:
    timestep = env.reset()
    while not timestep.last() and pending:
      action = agent.select_action(timestep)
      visits[cell(timestep.observation) + (action,)] += 1
      new_timestep = env.step(action)
      agent.update(timestep, action, new_timestep)
      if new_timestep.reward > 0.5 and found_at is None:
        found_at = step + 1
      timestep = new_timestep
      step += 1
      if step == pending[0]:
        pending.pop(0)
        snapshot = maps(agent, visits)
        snapshots.append((step, snapshot))
        by_visits = disagreement_by_visits(snapshot['w_avg_actions'], visits)
        visit_rows.append({'step': step, **by_visits})
        for row in range(size):
          for column in range(row + 1):
            rows.append({
                'step': step, 'row': row, 'column': column,
                'visits_action_0': int(visits[row, column, 0]),
                'visits_action_1': int(visits[row, column, 1]),
                **{k: float(snapshot[k][row, column]) for k, _ in MAPS},
                'w_avg_action_0': float(snapshot['w_avg_actions'][row, column,
                                                                  0]),
                'w_avg_action_1': float(snapshot['w_avg_actions'][row, column,
                                                                  1]),
                'treasure_found': found_at is not None,
            })
        print(f'  step {step}: maps taken (treasure '
              f'{"found at step " + str(found_at) if found_at else "not found"}'
              f'); {describe_visits(by_visits)}', flush=True)
      now = time.time()
      if progress_every and now - last_report >= progress_every:
        last_report = now
        print(f'  step {step}/{snapshot_steps[-1]}, episode {episode}, '
              f'{step / (now - start):.0f} steps/s', flush=True)
    episode += 1
  os.makedirs(output_dir, exist_ok=True)
  run_tables.write_rows(os.path.join(output_dir, CSV_FILE), rows, COLUMNS)
  run_tables.write_rows(os.path.join(output_dir, VISITS_FILE), visit_rows,
                     VISITS_COLUMNS)
  plot(snapshots, size, found_at, os.path.join(output_dir, PLOT_FILE))
  return rows


def plot(snapshots, size: int, found_at, path: str) -> None:
  """3 rows (inverse counts, w_avg, bonus) x one column per snapshot step."""
  columns = len(snapshots)
  fig, axes = plt.subplots(len(MAPS), columns,
                           figsize=(2.8 * columns + 0.5, 2.6 * len(MAPS)),
                           squeeze=False)
  for j, (step, snapshot) in enumerate(snapshots):
    for i, (key, label) in enumerate(MAPS):
      ax = axes[i, j]
      image = ax.imshow(np.ma.masked_invalid(snapshot[key]), cmap='viridis')
      fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
      ax.set_xticks([])
      ax.set_yticks([])
      if i == 0:
        ax.set_title(f't = {step}', fontsize=10)
      if j == 0:
        ax.set_ylabel(label, fontsize=9)
  found = f'treasure first reached at t = {found_at}' if found_at else (
      'treasure not reached')
  fig.suptitle(f'Deep sea {size}x{size}: max over actions ({found})',
               fontsize=10)
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)


def main(argv: Sequence[str]) -> None:
  del argv
  results.check_output_flag(FLAGS.save_path, '--save_path')
  snapshot_steps = [int(c) for c in FLAGS.snapshot_steps]
  try:
    run(FLAGS.save_path, FLAGS.size, snapshot_steps, FLAGS.agent, FLAGS.seed,
        FLAGS.progress_every, **hyperparameter_flags.user_overrides(FLAGS.agent))
  except ValueError as error:
    raise app.UsageError(str(error)) from error
  for name in (CSV_FILE, VISITS_FILE, PLOT_FILE):
    print(f'Wrote {os.path.join(FLAGS.save_path, name)}')


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
