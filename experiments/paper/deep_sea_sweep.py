r"""A grid of per-agent hyperparameter values on deep sea, one compiled program.

  python -m experiments.paper.deep_sea_sweep --agent=pe_dqn --size=10 --seeds=5 \
      --num_episodes=300 --grid='beta_final=0,5' --save_path=/tmp/sweep
  python -m experiments.paper.deep_sea_sweep --agent=boot_dqn --size=10 \
      --grid='learning_rate=1e-3,3e-4;prior_scale=1,5' --save_path=/tmp/sweep

`--grid` names array hyperparameters of the agent (`agent.array_fields`:
learning rate, discount, prior scales, beta, epsilon, ...) and their values;
every combination of them trains with every seed, all agents side by side in
one `jit(vmap(...))` program on the JAX deep sea (`agents.training`).
A hyperparameter's own flag fixes it for all (e.g. `--beta_decay_episodes=1000`).
Seed k uses bsuite's action mapping of `mapping_seed=k` and the agent state of
`agents.make(..., seed=k)`.

Outputs in `--save_path`:
  deep_sea_sweep_runs.csv  one row per (setting, seed): regret (bsuite's
                           total_bad_episodes) and first treasure episode
  deep_sea_sweep.csv       per setting: median regret, its min and max over
                           seeds, median first treasure episode
A rerun with the same flags skips settings already in the runs table, and
(with `--checkpoints`, the default) a killed run resumes from the state saved
under `--save_path/checkpoints` between compiled calls.
"""

import itertools
import json
import os
from typing import Any, Dict, List, Optional, Sequence

from absl import app
from absl import flags

import agents
from agents import paper_presets
from agents import training
from experiments.lib import compilation_cache
from experiments.lib import deep_sea_groups
from experiments.lib import results
from experiments.lib import run_tables
from experiments.lib import seed_statistics
from experiments.lib import hyperparameter_flags

FLAGS = flags.FLAGS
RUNS_FILE = 'deep_sea_sweep_runs.csv'
SUMMARY_FILE = 'deep_sea_sweep.csv'
TABLE_FILE = 'deep_sea_sweep.md'


def define_flags() -> None:
  flags.DEFINE_enum('agent', 'pe_dqn', list(agents.AGENT_NAMES), 'Agent.')
  flags.DEFINE_integer('size', 10, 'Deep sea size.', lower_bound=1)
  flags.DEFINE_integer('seeds', 3, 'Seeds 0..N-1 per setting.', lower_bound=1)
  flags.DEFINE_integer('num_episodes', 300, 'Episodes per agent.',
                       lower_bound=1)
  flags.DEFINE_integer('episodes_per_call', 100,
                       'Episodes per compiled call (progress between calls).',
                       lower_bound=1)
  flags.DEFINE_string('grid', '', "Array hyperparameters and their values: "
                      "'name=v1,v2;name2=w1,w2' (every combination).")
  flags.DEFINE_enum('preset', 'default', list(paper_presets.PRESETS),
                    paper_presets.PRESET_HELP)
  flags.DEFINE_enum('batching', 'auto', list(training.BATCHING_CHOICES),
                    'auto: map on CPU, vmap on a GPU or TPU; '
                    'vmap: agents as batched operations (GPU, small networks); '
                    'map: one agent after another in the same program (faster '
                    'for large ensembles on CPU).')
  flags.DEFINE_string('save_path', '/tmp/pe_jax_deep_sea_sweep',
                      'Where the tables go.')
  flags.DEFINE_boolean('checkpoints', True,
                       'Save the agents between compiled calls under '
                       'SAVE_PATH/checkpoints (deleted once their rows are in '
                       'the table); a rerun after a kill resumes there.')
  # Values shared by all agents: one flag per hyperparameter, as run_bsuite.
  hyperparameter_flags.define_hyperparameter_flags()


def parse_grid(text: str) -> Dict[str, List[float]]:
  """'a=1,2;b=3' -> {'a': [1.0, 2.0], 'b': [3.0]}, with named errors."""
  grid = {}
  for part in filter(None, (p.strip() for p in text.split(';'))):
    name, sep, values = part.partition('=')
    if not sep or not values.strip():
      raise ValueError(f"--grid: {part!r} is not 'name=v1,v2,...'.")
    try:
      grid[name.strip()] = [float(v) for v in values.split(',')]
    except ValueError:
      raise ValueError(f'--grid: values of {name.strip()!r} must be numbers, '
                       f'got {values!r}.') from None
  return grid


SETTINGS_FILE = 'deep_sea_sweep_settings.json'


def check_fixed_settings(output_dir: str, agent_name: str, size: int,
                         num_episodes: int, fixed: Dict[str, Any],
                         has_rows: bool) -> None:
  """Records the shared settings (hyperparameter flags, --preset) of the
  runs table's (agent, size, episodes) rows; refuses (ValueError, naming each change)
  to add rows trained with others to rows already there."""
  path = os.path.join(output_dir, SETTINGS_FILE)
  recorded = {}
  if os.path.exists(path):
    with open(path) as f:
      recorded = json.load(f)
  key = f'{agent_name}/{size}/{num_episodes}'
  current = {name: repr(value) for name, value in sorted(fixed.items())}
  if has_rows and key in recorded and recorded[key] != current:
    before = recorded[key]
    changes = [f'{name}: {before.get(name, "(unset)")} -> '
               f'{current.get(name, "(unset)")}'
               for name in sorted(set(before) | set(current))
               if before.get(name) != current.get(name)]
    raise ValueError(
        f'{output_dir} holds runs of {agent_name} at size {size} '
        f'({num_episodes} episodes) with other hyperparameter or --preset values '
        f'({"; ".join(changes)}): use another --save_path.')
  if key not in recorded or not has_rows:
    recorded[key] = current
    run_tables.write_text(path, json.dumps(recorded, indent=1, sort_keys=True)
                       + '\n')


def settings_of(grid: Dict[str, List[float]]) -> List[Dict[str, float]]:
  names = sorted(grid)
  return [dict(zip(names, combo))
          for combo in itertools.product(*(grid[n] for n in names))] or [{}]


def run_sweep(agent_name: str, size: int, num_seeds: int, num_episodes: int,
              episodes_per_call: int, grid: Dict[str, List[float]],
              fixed: Dict[str, Any], output_dir: str,
              batching: str = 'vmap',
              checkpoint_dir: Optional[str] = None) -> List[Dict[str, Any]]:
  """Trains every (setting, seed) not yet in the runs table; returns all rows.

  With `checkpoint_dir`, the agents are saved there between compiled calls
  and a run killed before its end resumes from its last checkpoint.
  """
  names = sorted(grid)
  columns = ('agent', 'size', 'num_episodes', *names, 'seed', 'regret',
             'first_treasure_episode', 'seconds')
  runs_path = os.path.join(output_dir, RUNS_FILE)
  key = lambda row: tuple(str(float(row[n])) for n in names) + (
      str(int(row['seed'])),)
  done = {key(r) for r in run_tables.read_rows(runs_path, columns)
          if r['agent'] == agent_name and int(r['size']) == size and
          int(r['num_episodes']) == num_episodes}
  check_fixed_settings(output_dir, agent_name, size, num_episodes, fixed,
                       has_rows=bool(done))
  todo = [(setting, seed) for setting in settings_of(grid)
          for seed in range(num_seeds)
          if key({**setting, 'seed': seed}) not in done]
  print(f'{agent_name} deep sea {size}: {len(todo)} of '
        f'{len(settings_of(grid)) * num_seeds} agents to train, '
        f'{num_episodes} episodes each, in one program.', flush=True)
  if todo:
    hyperparameters = {n: [s[n] for s, _ in todo] for n in names}
    seeds = [seed for _, seed in todo]
    rows = deep_sea_groups.run_seeds_jax(
        agent_name, size, seeds, num_episodes,
        episodes_per_call, progress=True, hyperparameters=hyperparameters,
        overrides=fixed, batching=batching, checkpoint_dir=checkpoint_dir)
    for (setting, seed), row in zip(todo, rows):
      run_tables.append_row(runs_path, {**row, **setting}, columns)
    if checkpoint_dir is not None:  # The rows are in the table.
      deep_sea_groups.remove_group_checkpoints(
          checkpoint_dir, agent_name, size, seeds, num_episodes,
          episodes_per_call, batching, hyperparameters, fixed)
  return [r for r in run_tables.read_rows(runs_path, columns)
          if r['agent'] == agent_name and int(r['size']) == size and
          int(r['num_episodes']) == num_episodes]


def summarize(rows: Sequence[Dict[str, Any]],
              names: Sequence[str]) -> List[Dict[str, Any]]:
  """`seed_statistics.regret_statistics` per setting of the grid's `names`."""
  groups: Dict[tuple, List[Dict[str, Any]]] = {}
  for row in rows:
    groups.setdefault(tuple(float(row[n]) for n in names), []).append(row)
  return [{**dict(zip(names, setting)), **seed_statistics.regret_statistics(group)}
          for setting, group in sorted(groups.items())]


def main(argv: Sequence[str]) -> None:
  del argv
  results.quiet_checkpoint_logs()
  try:
    results.check_output_folder(FLAGS.save_path, '--save_path')
    grid = parse_grid(FLAGS.grid)
    fixed = hyperparameter_flags.user_overrides(FLAGS.agent)
    allowed = agents.config_class(FLAGS.agent).ARRAY_FIELDS
    unknown = sorted(set(grid) - set(allowed))
    if unknown:
      raise ValueError(f'--grid: {FLAGS.agent} takes no per-agent array for '
                       f'{unknown}; its array hyperparameters: '
                       f'{list(allowed)} (fix others with their own flags, e.g. '
                       '--torso=mlp).')
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  os.makedirs(FLAGS.save_path, exist_ok=True)
  rows = run_sweep(FLAGS.agent, FLAGS.size, FLAGS.seeds, FLAGS.num_episodes,
                   FLAGS.episodes_per_call, grid, fixed, FLAGS.save_path,
                   training.resolve_batching(FLAGS.batching),
                   os.path.join(FLAGS.save_path, 'checkpoints')
                   if FLAGS.checkpoints else None)
  names = sorted(grid)
  summary = summarize(rows, names)
  columns = (*names, *seed_statistics.REGRET_COLUMNS)
  run_tables.write_rows(os.path.join(FLAGS.save_path, SUMMARY_FILE), summary,
                     columns)  # Rewritten whole from the runs table.
  run_tables.write_text(os.path.join(FLAGS.save_path, TABLE_FILE),
                     seed_statistics.regret_markdown(
                         [{'agent': FLAGS.agent, **row} for row in summary],
                         ('agent', *names)))
  print(f'\n{FLAGS.agent}, deep sea {FLAGS.size}, {FLAGS.num_episodes} '
        'episodes: regret median [min, max] over seeds')
  for row in summary:
    label = ', '.join(f'{n}={row[n]:g}' for n in names) or 'defaults'
    print(f'  {label}: {row["median_regret"]:.0f} [{row["min_regret"]}, '
          f'{row["max_regret"]}], treasure found by '
          f'{row["seeds_found_treasure"]}/'
          f'{row["num_seeds"]}, median first at '
          f'{row["median_first_treasure"]}')
  print(f'Tables: {FLAGS.save_path}')


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
