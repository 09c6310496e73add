r"""Fig. 3 of the PE-DQN paper: exploration by acting on one return statistic.

  python -m experiments.paper.statistic_exploration
  python -m experiments.paper.statistic_exploration --size=50 --seeds=30 \
      --num_episodes=1000

Zanger et al. (ICLR 2024), Sec. 6.1: on a reward-free deep sea (bsuite's
`DeepSea` with every reward, treasure and move cost included, replaced by 0)
a quantile model (QR-DQN) and a categorical model (C51) act greedily on one
statistic of their predicted return distributions,

  a = argmax_a S[Z(s, a)],  S in {mean, variance, skewness, kurtosis}

(`action_rule='statistic'` of agents/distributional.py; kurtosis is the
excess kurtosis). Without rewards every learning target is 0, so a statistic
leads to exploration only where the way the model generalizes to unvisited
state-actions makes the statistic high there. The measure is the number of
distinct (state, action) pairs visited within the episode budget (higher
means more exploration; at most N (N + 1), the reachable pairs of an N x N
deep sea). The state is the (row, column) of the 1 in deep sea's one-hot
observation.

Both models use the paper's bsuite settings of its single-model
distributional baseline (Table 4, DLTV): MLP [512], K = 101, randomized
prior scale 20, Adam 1e-3 with eps 0.001 / batch size, batch 128, target
period 4, discount 0.99, support [-1, 1] for the categorical model. Only the
projection (quantile or categorical) differs. The paper states the deep-sea
size (50) and the number of seeds (30) but no episode budget.

Each finished (model, statistic, seed) run is appended as one row to
`<output_dir>/statistic_exploration_runs.csv`; a rerun with the same
settings skips the rows already there (`--overwrite` redoes them). The
summary over seeds (median and interquartile range) goes to
`statistic_exploration.csv` and the grouped bar chart to
`statistic_exploration.png`.
"""

import os
import time
from typing import (Any, Dict, List, NamedTuple, Optional, Sequence,
                    Tuple)

from absl import app
from absl import flags
from bsuite.environments import deep_sea
import dm_env
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
import numpy as np

import agents
from agents import common
from agents import distributional
from agents import return_ranges
from experiments.lib import compilation_cache
from experiments.lib import results
from experiments.lib import run_tables
from experiments.lib import seed_statistics

MODELS = ('quantile', 'categorical')
MODEL_LABELS = {'quantile': 'quantile (QR-DQN)',
                'categorical': 'categorical (C51)'}
STATISTICS = distributional.STATISTICS

RUNS_FILE = 'statistic_exploration_runs.csv'
SUMMARY_FILE = 'statistic_exploration.csv'
PLOT_FILE = 'statistic_exploration.png'

# Paper's bsuite settings (Table 4, DLTV column: its network, prior and
# replay); the flags below override.
NETWORK_DEFAULTS = {
    name: agents.defaults('dltv_qr')[name]
    for name in ('hidden_sizes', 'num_atoms', 'prior_scale', 'batch_size',
                 'min_replay_size')}
LEARNING_RATE = agents.defaults('dltv_qr')['learning_rate']

# A run's settings: rows agree on all of these to count as the same run.
KEY_COLUMNS = ('model', 'statistic', 'seed', 'size', 'num_episodes',
               'hidden_sizes', 'num_atoms', 'prior_scale', 'batch_size',
               'min_replay_size')
RUN_COLUMNS = KEY_COLUMNS + ('distinct_state_actions',
                             'reachable_state_actions', 'steps', 'seconds')
SUMMARY_COLUMNS = ('model', 'statistic', 'median', 'q25', 'q75', 'num_seeds')

FLAGS = flags.FLAGS


def define_flags() -> None:
  """Defines the command-line flags (only when run as a script, so that
  several experiment modules can be imported into one process)."""
  flags.DEFINE_string('save_path', '/tmp/pe_jax/statistic_exploration',
                      'Where the runs CSV, summary CSV and PNG go.')
  flags.DEFINE_integer('size', 10, 'Deep-sea size N (paper: 50).',
                       lower_bound=2)
  flags.DEFINE_integer('num_episodes', 100, 'Episodes per run.',
                       lower_bound=1)
  flags.DEFINE_integer('seeds', 3, 'Number of seeds 0, 1, ... (paper: 30).',
                       lower_bound=1)
  flags.DEFINE_list('models', list(MODELS), f'Models, from {MODELS}.')
  flags.DEFINE_list('statistics', list(STATISTICS),
                    f'Statistics to act on, from {STATISTICS}.')
  flags.DEFINE_list('hidden_sizes',
                    [str(h) for h in NETWORK_DEFAULTS['hidden_sizes']],
                    'MLP hidden layer sizes (Table 4: 512).')
  flags.DEFINE_integer('num_atoms', NETWORK_DEFAULTS['num_atoms'],
                       'Atoms / quantiles K per action (Table 4: 101).')
  flags.DEFINE_float('prior_scale', NETWORK_DEFAULTS['prior_scale'],
                     'Randomized prior scale (Table 4: 20).')
  flags.DEFINE_integer('batch_size', NETWORK_DEFAULTS['batch_size'],
                       'Replay batch size (Table 4: 128).')
  flags.DEFINE_integer('min_replay_size', NETWORK_DEFAULTS['min_replay_size'],
                       'Transitions in replay before learning starts.')
  flags.DEFINE_boolean('overwrite', False,
                       'Redo runs that already have a row in the runs CSV.')




class RewardFree(dm_env.Environment):
  """Wraps an environment and replaces every reward by 0.

  The first timestep of an episode keeps its `None` reward (dm_env's
  convention for `restart`); every later reward is 0.0.
  """

  def __init__(self, env: dm_env.Environment):
    self._env = env

  def reset(self) -> dm_env.TimeStep:
    return self._zero(self._env.reset())

  def step(self, action) -> dm_env.TimeStep:
    return self._zero(self._env.step(action))

  def observation_spec(self):
    return self._env.observation_spec()

  def action_spec(self):
    return self._env.action_spec()

  def reward_spec(self):
    return self._env.reward_spec()

  def discount_spec(self):
    return self._env.discount_spec()

  @staticmethod
  def _zero(timestep: dm_env.TimeStep) -> dm_env.TimeStep:
    if timestep.reward is None:
      return timestep
    return timestep._replace(reward=0.0)


def make_env(size: int, seed: int) -> RewardFree:
  """Reward-free deep sea; `seed` also fixes the random action mapping."""
  return RewardFree(deep_sea.DeepSea(size=size, seed=seed, mapping_seed=seed,
                                     randomize_actions=True))


def reachable_state_actions(size: int) -> int:
  """N (N + 1): row r of deep sea reaches columns 0..r, two actions each."""
  return size * (size + 1)


def grid_position(observation) -> Tuple[int, int]:
  """(row, column) of the single 1 in an [N, N] one-hot deep-sea grid."""
  grid = np.asarray(observation)
  if grid.ndim != 2:
    raise ValueError(f'`observation` must be an [N, N] grid, got shape '
                     f'{grid.shape}.')
  hot = np.flatnonzero(grid)
  if hot.size != 1:
    raise ValueError(f'`observation` must have exactly one nonzero cell, got '
                     f'{hot.size}.')
  row, column = divmod(int(hot[0]), grid.shape[1])
  return row, column


def model_config(model: str, statistic: str, num_actions: int,
                 hidden_sizes: Sequence[int] = NETWORK_DEFAULTS['hidden_sizes'],
                 num_atoms: int = NETWORK_DEFAULTS['num_atoms'],
                 prior_scale: float = NETWORK_DEFAULTS['prior_scale'],
                 batch_size: int = NETWORK_DEFAULTS['batch_size'],
                 min_replay_size: int = NETWORK_DEFAULTS['min_replay_size']
                 ) -> distributional.DistributionalConfig:
  """The statistic-greedy config of `model` ('quantile' or 'categorical')."""
  common.require(model in MODELS, 'model', f'one of {MODELS}', model)
  v_min, v_max = return_ranges.return_range_for_experiment('deep_sea')
  return distributional.DistributionalConfig(
      num_actions=num_actions, kind=model, action_rule='statistic',
      statistic=statistic, epsilon=0.0, hidden_sizes=tuple(hidden_sizes),
      num_atoms=num_atoms, prior_scale=float(prior_scale),
      learning_rate=LEARNING_RATE,
      batch_size=batch_size, min_replay_size=min_replay_size, v_min=v_min,
      v_max=v_max)


class Exploration(NamedTuple):
  distinct_state_actions: int
  steps: int


def explore(env: dm_env.Environment, agent, num_episodes: int,
            trajectory: Optional[List[Tuple[np.ndarray, int]]] = None
            ) -> Exploration:
  """Runs `agent` (a bsuite `base.Agent`) and counts distinct (s, a) pairs.

  Args:
    env: a deep-sea environment (one-hot [N, N] observations).
    agent: acts with `select_action` and learns with `update`.
    num_episodes: episodes to run.
    trajectory: if given, every (observation, action) taken is appended.

  Returns:
    The number of distinct ((row, column), action) pairs and of steps.
  """
  visited = set()
  steps = 0
  for _ in range(num_episodes):
    timestep = env.reset()
    while not timestep.last():
      action = int(agent.select_action(timestep))
      visited.add((grid_position(timestep.observation), action))
      if trajectory is not None:
        trajectory.append((np.array(timestep.observation), action))
      new_timestep = env.step(action)
      agent.update(timestep, action, new_timestep)
      timestep = new_timestep
      steps += 1
  return Exploration(len(visited), steps)


def run_one(model: str, statistic: str, seed: int, size: int,
            num_episodes: int, trajectory=None, **network_kwargs
            ) -> Dict[str, Any]:
  """One fresh statistic-greedy agent on one reward-free deep sea."""
  env = make_env(size, seed)
  config = model_config(model, statistic, env.action_spec().num_values,
                        **network_kwargs)
  start = time.time()
  agent = distributional.DistributionalAgent(env.observation_spec(),
                                             env.action_spec(), config,
                                             seed=seed)
  result = explore(env, agent, num_episodes, trajectory)
  return {
      'distinct_state_actions': result.distinct_state_actions,
      'reachable_state_actions': reachable_state_actions(size),
      'steps': result.steps,
      'seconds': round(time.time() - start, 3),
  }


def _format_sizes(hidden_sizes: Sequence[int]) -> str:
  return '-'.join(str(int(h)) for h in hidden_sizes)


def run_key(row: Dict[str, Any]) -> Tuple:
  """A run's identity from a row (as written or as read back as text)."""
  return (str(row['model']), str(row['statistic']), int(row['seed']),
          int(row['size']), int(row['num_episodes']),
          str(row['hidden_sizes']), int(row['num_atoms']),
          float(row['prior_scale']), int(row['batch_size']),
          int(row['min_replay_size']))


def summarize(rows: Sequence[Dict[str, Any]], models: Sequence[str],
              statistics: Sequence[str]) -> List[Dict[str, Any]]:
  """Median and interquartile range of distinct pairs per (model, statistic).

  Args:
    rows: run rows, already restricted to one setting.
    models, statistics: the order of the summary rows.
  """
  summary = []
  for model in models:
    for statistic in statistics:
      counts = [float(r['distinct_state_actions']) for r in rows
                if r['model'] == model and r['statistic'] == statistic]
      if counts:
        median, q25, q75 = seed_statistics.median_and_iqr(counts)
      else:
        q25 = median = q75 = float('nan')
      summary.append({'model': model, 'statistic': statistic,
                      'median': float(median), 'q25': float(q25),
                      'q75': float(q75), 'num_seeds': len(counts)})
  return summary


def format_table(summary: Sequence[Dict[str, Any]]) -> str:
  lines = [f'{"model":<12} {"statistic":<10} {"median":>8} {"q25":>8} '
           f'{"q75":>8} {"seeds":>6}']
  for r in summary:
    lines.append(f'{r["model"]:<12} {r["statistic"]:<10} {r["median"]:>8.1f} '
                 f'{r["q25"]:>8.1f} {r["q75"]:>8.1f} {r["num_seeds"]:>6d}')
  return '\n'.join(lines)


def plot(path: str, summary: Sequence[Dict[str, Any]], models: Sequence[str],
         statistics: Sequence[str], size: int, num_episodes: int) -> None:
  """Grouped bars (one group per statistic, one bar per model), IQR errors."""
  by_key = {(r['model'], r['statistic']): r for r in summary}
  x = np.arange(len(statistics))
  width = 0.8 / len(models)
  fig, ax = plt.subplots(figsize=(1.6 + 1.5 * len(statistics), 4.0))
  colors = {'quantile': 'tab:blue', 'categorical': 'tab:orange'}
  for index, model in enumerate(models):
    rows = [by_key[(model, s)] for s in statistics]
    medians = np.array([r['median'] for r in rows])
    errors = np.array([[r['median'] - r['q25'] for r in rows],
                       [r['q75'] - r['median'] for r in rows]])
    offset = (index - (len(models) - 1) / 2) * width
    ax.bar(x + offset, medians, width, yerr=errors, capsize=4,
           color=colors.get(model), label=MODEL_LABELS.get(model, model))
  reachable = reachable_state_actions(size)
  ax.axhline(reachable, color='gray', linestyle='--', linewidth=1)
  ax.text(x[-1] + 0.45, reachable, f'reachable: {reachable}', ha='right',
          va='bottom', fontsize=8, color='gray')
  ax.set_xticks(x)
  ax.set_xticklabels(statistics)
  ax.set_xlabel('statistic S acted on: a = argmax_a S[Z(s, a)]')
  ax.set_ylabel('distinct state-action pairs visited')
  ax.set_ylim(0, reachable * 1.1)
  num_seeds = max((r['num_seeds'] for r in summary), default=0)
  ax.set_title(f'Reward-free deep sea {size}x{size}, {num_episodes} episodes '
               f'(median, IQR; {num_seeds} seeds)', fontsize=10)
  ax.legend(loc='upper left', fontsize=8)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


def _check_choices(values: Sequence[str], choices: Sequence[str],
                   name: str) -> None:
  common.require(
      len(values) >= 1 and len(set(values)) == len(values) and
      all(v in choices for v in values), name,
      f'distinct entries from {tuple(choices)}', list(values))


def check_args(size, num_episodes, seeds, models, statistics,
               hidden_sizes, num_atoms, prior_scale, batch_size,
               min_replay_size) -> None:
  """Raises ValueError naming the first bad argument (= its flag name)."""
  is_int = lambda v: isinstance(v, (int, np.integer)) and not isinstance(
      v, bool)
  common.require(is_int(size) and size >= 2, 'size', 'an int >= 2', size)
  common.require(is_int(num_episodes) and num_episodes >= 1, 'num_episodes',
                 'an int >= 1', num_episodes)
  common.require(is_int(seeds) and seeds >= 1, 'seeds', 'an int >= 1', seeds)
  _check_choices(models, MODELS, 'models')
  _check_choices(statistics, STATISTICS, 'statistics')
  common.require(len(hidden_sizes) >= 1 and
                 all(is_int(h) and h >= 1 for h in hidden_sizes),
                 'hidden_sizes', 'a non-empty list of positive ints',
                 list(hidden_sizes))
  common.require(is_int(num_atoms) and num_atoms >= 2, 'num_atoms',
                 'an int >= 2', num_atoms)
  common.require(prior_scale >= 0, 'prior_scale', '>= 0', prior_scale)
  common.require(is_int(batch_size) and batch_size >= 1, 'batch_size',
                 'an int >= 1', batch_size)
  common.require(is_int(min_replay_size) and min_replay_size >= 1,
                 'min_replay_size', 'an int >= 1', min_replay_size)


def run(output_dir: str, size: int, num_episodes: int, seeds: int,
        models: Sequence[str] = MODELS,
        statistics: Sequence[str] = STATISTICS, overwrite: bool = False,
        **network_kwargs) -> Dict[str, Any]:
  """Runs the missing (model, statistic, seed) runs; writes CSVs and PNG.

  Args:
    output_dir: directory of the three output files (created if needed).
    size: deep-sea size N.
    num_episodes: episodes per run.
    seeds: seeds 0 .. seeds - 1 (environment and agent).
    models: from `MODELS`.
    statistics: from `STATISTICS`.
    overwrite: redo runs that already have a row with these settings.
    **network_kwargs: `hidden_sizes`, `num_atoms`, `prior_scale`,
      `batch_size`, `min_replay_size` (default: `NETWORK_DEFAULTS`).

  Returns:
    Paths ('runs', 'summary', 'plot'), the summary rows ('summary_rows')
    and how many runs ran now ('new_runs') and were skipped ('skipped').
  """
  unknown = sorted(set(network_kwargs) - set(NETWORK_DEFAULTS))
  if unknown:
    raise TypeError(f'Unknown setting(s) {unknown}; valid: '
                    f'{sorted(NETWORK_DEFAULTS)}.')
  settings = dict(NETWORK_DEFAULTS, **network_kwargs)
  settings['hidden_sizes'] = tuple(settings['hidden_sizes'])
  models, statistics = list(models), list(statistics)
  check_args(size, num_episodes, seeds, models, statistics, **settings)
  os.makedirs(output_dir, exist_ok=True)
  runs_path = os.path.join(output_dir, RUNS_FILE)
  summary_path = os.path.join(output_dir, SUMMARY_FILE)
  plot_path = os.path.join(output_dir, PLOT_FILE)

  common_columns = dict(size=size, num_episodes=num_episodes,
                        hidden_sizes=_format_sizes(settings['hidden_sizes']),
                        num_atoms=settings['num_atoms'],
                        prior_scale=float(settings['prior_scale']),
                        batch_size=settings['batch_size'],
                        min_replay_size=settings['min_replay_size'])
  planned = [dict(common_columns, model=m, statistic=s, seed=seed)
             for m in models for s in statistics for seed in range(seeds)]
  planned_keys = {run_key(p) for p in planned}
  existing = run_tables.read_rows(runs_path, RUN_COLUMNS)
  if overwrite and any(run_key(r) in planned_keys for r in existing):
    existing = [r for r in existing if run_key(r) not in planned_keys]
    run_tables.write_rows(runs_path, existing, RUN_COLUMNS)
  done = {run_key(r) for r in existing}

  new_runs = skipped = 0
  for index, plan in enumerate(planned):
    label = (f'[{index + 1}/{len(planned)}] {plan["model"]}/'
             f'{plan["statistic"]} seed {plan["seed"]}')
    if run_key(plan) in done:
      skipped += 1
      print(f'{label}: already in {runs_path}, skipped', flush=True)
      continue
    result = run_one(plan['model'], plan['statistic'], plan['seed'], size,
                     num_episodes, **settings)
    row = dict(plan, **result)
    run_tables.append_row(runs_path, row, RUN_COLUMNS)
    done.add(run_key(plan))
    new_runs += 1
    print(f'{label}: {row["distinct_state_actions"]} of '
          f'{row["reachable_state_actions"]} state-actions, '
          f'{row["steps"]} steps, {row["seconds"]:.1f} s', flush=True)

  rows = [r for r in run_tables.read_rows(runs_path, RUN_COLUMNS) if run_key(r) in planned_keys]
  summary = summarize(rows, models, statistics)
  run_tables.write_rows(summary_path, summary, SUMMARY_COLUMNS)
  plot(plot_path, summary, models, statistics, size, num_episodes)
  print(f'\nDistinct state-action pairs (of {reachable_state_actions(size)} '
        f'reachable), deep sea {size}, {num_episodes} episodes:')
  print(format_table(summary))
  print(f'Runs:    {runs_path}\nSummary: {summary_path}\nPlot:    {plot_path}',
        flush=True)
  return {'runs': runs_path, 'summary': summary_path, 'plot': plot_path,
          'summary_rows': summary, 'new_runs': new_runs, 'skipped': skipped}


def _int_list(values: Sequence[str], name: str) -> Tuple[int, ...]:
  try:
    return tuple(int(v) for v in values)
  except ValueError:
    raise app.UsageError(f'--{name} must be a comma-separated list of ints, '
                         f'got {",".join(values)!r}.') from None


def main(argv: Sequence[str]) -> None:
  if len(argv) > 1:
    raise app.UsageError(f'Unexpected arguments: {argv[1:]}.')
  results.check_output_flag(FLAGS.save_path, '--save_path')
  settings = dict(hidden_sizes=_int_list(FLAGS.hidden_sizes, 'hidden_sizes'),
                  num_atoms=FLAGS.num_atoms, prior_scale=FLAGS.prior_scale,
                  batch_size=FLAGS.batch_size,
                  min_replay_size=FLAGS.min_replay_size)
  try:
    check_args(FLAGS.size, FLAGS.num_episodes, FLAGS.seeds, FLAGS.models,
               FLAGS.statistics, **settings)
  except ValueError as error:
    raise app.UsageError(f'Bad value of --{_named(error)}: {error}') from None
  run(FLAGS.save_path, FLAGS.size, FLAGS.num_episodes, FLAGS.seeds,
      models=FLAGS.models, statistics=FLAGS.statistics,
      overwrite=FLAGS.overwrite, **settings)


def _named(error: ValueError) -> str:
  """The name that a `common.require` message starts with, in backticks."""
  text = str(error)
  end = text.find('`', 1)
  return text[1:end] if text.startswith('`') and end > 0 else '?'


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
