r"""Deep sea regret against size (PE-DQN paper, Fig. 4b).

  python -m experiments.paper.deep_sea_scaling --agents=pe_dqn,boot_dqn \
      --sizes=10,20 --seeds=3 --num_episodes=500 --save_path=/tmp/scaling
  # Paper scale: sizes to 100, 10,000 episodes, 10 seeds, ablations too.
  python -m experiments.paper.deep_sea_scaling \
      --agents=pe_dqn,pe_dqn_qr_qr,pe_dqn_c51_c51,pe_dqn_ind,boot_dqn \
      --sizes=10,20,30,40,50,60,70,80,90,100 --seeds=10 \
      --num_episodes=10000 --num_workers=16 --save_path=/tmp/scaling

Each (agent, size, seed) trains a fresh agent for `--num_episodes` episodes on
bsuite's deterministic `DeepSea(size)` (any size, also beyond bsuite's 50; the
seed draws both the action mapping and the agent). Regret is the number of
non-rewarding episodes: bsuite's own `total_bad_episodes`, also written to a
bsuite CSV log per run under `<output_dir>/logs/<agent>/`.

Outputs in `--save_path`:
  deep_sea_scaling_runs.csv  one row per finished run (the resume record)
  deep_sea_scaling.csv       regret statistics per agent and size: median,
                             IQR, range, seeds that found the treasure,
                             median first find, bad episodes after it
  deep_sea_scaling.md        the same as a markdown table
  deep_sea_scaling.png       median regret against size, IQR shaded

`--runner=jax` trains all seeds of an (agent, size) as one compiled program
(`agents.training`) on `pe_jax.envs.deep_sea`, which has bsuite's dynamics
and counts regret as bsuite does; it writes the same tables and plot (no
per-run bsuite logs).

Every agent's hyperparameter has a flag (`--learning_rate=5e-4`,
`--disagreement=exact`; `--help` lists them), given to each agent of
`--agents` and checked against it, on top of `--preset`.

Runs are resumable: a rerun skips every (agent, size, seed, num_episodes)
already in the runs table unless `--overwrite`; a run that was cut off left
no row and is done again from its start. The resolved config of each
(agent, size, num_episodes, runner) whose rows a run starts goes into
deep_sea_scaling_configs.json; once a default has changed, a rerun into
the same folder is refused, naming the field, instead of mixing old rows
with new ones (rows written before configs were recorded are not
checked). `--num_workers` runs in parallel processes: single runs (bsuite
runner; `--backend=ray` as Ray tasks), or whole (agent, size) groups (jax
runner; e.g. several sizes sharing one GPU).
"""

import json
import os
import shutil
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from absl import flags
from bsuite.environments import deep_sea
from bsuite.utils import wrappers
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

import agents
from agents import paper_presets
from agents import common
from agents import training
from experiments.lib import bsuite_jax
from experiments.lib import compilation_cache
from experiments.lib import deep_sea_groups
from experiments.lib import hyperparameter_flags
from experiments.lib import interrupts
from experiments.lib import parallel
from experiments.lib import results
from experiments.lib import run_tables
from experiments.lib import seed_statistics

FLAGS = flags.FLAGS
CHECKPOINT_FOLDER = 'checkpoints'


def define_flags() -> None:
  """Defines the command-line flags (only when run as a script, so that
  several experiment modules can be imported into one process)."""
  flags.DEFINE_list('agents', ['pe_dqn', 'boot_dqn'],
                    f'Agents to run; any of {list(agents.AGENT_NAMES)}.')
  flags.DEFINE_list('sizes', ['6', '10'], 'Deep sea sizes (>= 2).')
  flags.DEFINE_integer('seeds', 3, 'Seeds per agent and size (0, 1, ...).',
                       lower_bound=1)
  flags.DEFINE_integer('num_episodes', 300, 'Episodes per run.',
                       lower_bound=1)
  flags.DEFINE_string('save_path', '/tmp/pe_jax/deep_sea_scaling',
                      'Where the tables, logs and plot go.')
  flags.DEFINE_enum('preset', 'default', list(paper_presets.PRESETS),
                    paper_presets.PRESET_HELP + ' One --save_path per '
                    'preset and hyperparameter values: a table refuses '
                    'runs of another.')
  flags.DEFINE_integer('num_workers', 1, 'Parallel worker processes: runs '
                       '(--runner=bsuite) or (agent, size) groups, each all '
                       'its seeds in one program (--runner=jax).',
                       lower_bound=1)
  flags.DEFINE_boolean('overwrite', False, 'Redo runs already in the table.')
  flags.DEFINE_boolean('tables_only', False,
                       'Run nothing: rebuild the summary table, markdown and '
                       'plot from every row of SAVE_PATH/' + RUNS_FILE +
                       ' of the --agents (all sizes, seeds and horizons).')
  flags.DEFINE_float('progress_every', 30.0,
                     'Seconds between progress lines of a run (0: none).',
                     lower_bound=0.0)
  flags.DEFINE_enum('runner', 'bsuite', list(RUNNERS),
                    'bsuite: bsuite\'s DeepSea and agent objects, one run at a '
                    'time per worker; jax: all seeds of an (agent, size) as '
                    'one compiled program on the JAX deep sea (same dynamics '
                    'and regret).')
  flags.DEFINE_enum('backend', 'local', list(parallel.BACKENDS),
                    '--runner=bsuite: local worker processes, or ray: the '
                    'same runs as Ray tasks (pip install -e ".[ray]").')
  flags.register_multi_flags_validator(
      ['runner', 'backend'],
      lambda values: values['runner'] == 'bsuite' or values['backend'] ==
      'local', message='--backend=ray runs bsuite-loop runs as Ray tasks; '
      '--runner=jax trains its groups locally (--backend=local).')
  flags.DEFINE_string('ray_address', None,
                      '--backend=ray: unset starts a local Ray cluster; '
                      '"auto" or HOST:PORT joins a running one.')
  flags.DEFINE_integer('episodes_per_call', 500,
                       '--runner=jax: episodes per compiled call; progress '
                       'is printed between calls.', lower_bound=1)
  flags.DEFINE_enum('batching', 'auto', list(training.BATCHING_CHOICES),
                    '--runner=jax: auto (map on CPU, vmap on a GPU or TPU), '
                    'vmap (agents as batched operations; GPU, '
                    'small networks) or map (one agent after another in the '
                    'same program; faster for large ensembles on CPU).')
  flags.DEFINE_boolean('checkpoints', True,
                       '--runner=jax: save each (agent, size) group between '
                       'compiled calls under SAVE_PATH/checkpoints (the last '
                       'two kept, deleted once its rows are in the table); a '
                       'rerun after a kill resumes there.')
  deep_sea_groups.register_validators()
  hyperparameter_flags.define_hyperparameter_flags()


RUNNERS = ('bsuite', 'jax')
RUNS_FILE = 'deep_sea_scaling_runs.csv'
CONFIGS_FILE = 'deep_sea_scaling_configs.json'
SUMMARY_FILE = 'deep_sea_scaling.csv'
PLOT_FILE = 'deep_sea_scaling.png'
TABLE_FILE = 'deep_sea_scaling.md'
RUN_COLUMNS = ('agent', 'size', 'seed', 'num_episodes', 'regret',
               'first_treasure_episode', 'steps', 'seconds')
SUMMARY_COLUMNS = ('agent', 'size', 'num_episodes',
                   *seed_statistics.REGRET_COLUMNS)


def log_id(size: int, seed: int) -> str:
  """The bsuite-style id of one run's log (file deep_sea_SIZE-SEED.csv)."""
  return f'deep_sea_{size}/{seed}'


def run_single(agent_name: str, size: int, seed: int, num_episodes: int,
               log_dir: str, progress_every: float,
               overrides: Optional[Mapping[str, Any]] = None
               ) -> Dict[str, Any]:
  """Trains a fresh agent on DeepSea(size) with `overrides` (hyperparameter
  values and a 'preset', as `hyperparameter_flags.user_overrides`); returns
  its row of the table."""
  env = deep_sea.DeepSea(size=size, seed=seed, mapping_seed=seed)
  logger = results.AtomicCSVLogger(log_id(size, seed),
                                   os.path.join(log_dir, agent_name),
                                   overwrite=True)
  env = wrappers.Logging(env, logger)
  agent = agents.make(agent_name, env.observation_spec(), env.action_spec(),
                      seed=seed, num_episodes=num_episodes,
                      **agents.for_experiment(
                          agent_name, dict(overrides or {}), 'deep_sea',
                          size=size))
  start = last_report = time.time()
  steps = 0
  first_treasure = None
  for episode in range(1, num_episodes + 1):
    interrupts.raise_if_requested()
    steps += common.run_episode(agent, env)[1]
    bad = env.bsuite_info()['total_bad_episodes']
    if first_treasure is None and bad < episode:
      first_treasure = episode
    now = time.time()
    if progress_every and now - last_report >= progress_every:
      last_report = now
      print(f'  {agent_name} size {size} seed {seed}: episode '
            f'{episode}/{num_episodes}, regret {bad}, '
            f'{steps / (now - start):.0f} steps/s', flush=True)
  return {
      'agent': agent_name, 'size': size, 'seed': seed,
      'num_episodes': num_episodes,
      'regret': env.bsuite_info()['total_bad_episodes'],
      'first_treasure_episode': first_treasure or '',
      'steps': steps, 'seconds': round(time.time() - start, 2),
  }


def resolved_config(agent_name: str, size: int, num_episodes: int,
                    runner: str,
                    overrides: Optional[Mapping[str, Any]] = None
                    ) -> Dict[str, str]:
  """`bsuite_jax.config_record` of the agent that a run of `runner` trains
  with `overrides` (the jax runner's differs in its torso, deep sea's
  one-hot lookup)."""
  env = deep_sea.DeepSea(size=size, mapping_seed=0)
  overrides = dict(overrides or {})
  if runner == 'jax':
    kwargs = agents.for_jax_deep_sea(agent_name, overrides, 'deep_sea', size)
  else:
    kwargs = agents.for_experiment(agent_name, overrides, 'deep_sea',
                                   size=size)
  agent = agents.make_pure(agent_name, env.observation_spec(),
                           env.action_spec(), num_episodes=num_episodes,
                           **kwargs)
  return bsuite_jax.config_record(agent.config)


def config_key(agent_name: str, size: int, num_episodes: int,
               runner: str) -> str:
  """Where `CONFIGS_FILE` keeps a group's config."""
  return f'{agent_name}/{size}/{num_episodes}/{runner}'


def check_recorded_configs(configs_path: str, rows, wanted, runner: str,
                           overrides: Optional[Mapping[str, Any]] = None
                           ) -> Dict[str, Dict[str, str]]:
  """The configs to record: today's for every wanted group without rows.

  Raises:
    ValueError: a group with rows was recorded with another config; names
      the group and each changed field.
  """
  recorded = {}
  if os.path.exists(configs_path):
    with open(configs_path) as f:
      recorded = json.load(f)
  with_rows = {(r['agent'], int(r['size']), int(r['num_episodes']))
               for r in rows}
  updated = dict(recorded)
  for agent_name, size, num_episodes in sorted(
      {(a, s, n) for a, s, _, n in wanted}):
    key = config_key(agent_name, size, num_episodes, runner)
    current = resolved_config(agent_name, size, num_episodes, runner,
                              overrides)
    if (agent_name, size, num_episodes) not in with_rows:
      updated[key] = current
    elif key in recorded:
      changes = bsuite_jax.config_changes(recorded[key], current)
      if changes:
        raise ValueError(
            f'{os.path.dirname(configs_path)} holds runs of {agent_name} at '
            f'size {size} ({num_episodes} episodes) trained with another '
            f'config ({"; ".join(changes)}): rerun with --overwrite, or '
            'write to another --save_path.')
  return updated


def task_key(agent_name: str, size: int, seed: int,
             num_episodes: int) -> Tuple[str, int, int, int]:
  return (agent_name, int(size), int(seed), int(num_episodes))


def summarize(rows: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
  """`seed_statistics.regret_statistics` per (agent, size, num_episodes)."""
  groups: Dict[Tuple[str, int, int], List[Dict[str, Any]]] = {}
  for row in rows:
    key = (row['agent'], int(row['size']), int(row['num_episodes']))
    groups.setdefault(key, []).append(row)
  return [{'agent': agent_name, 'size': size, 'num_episodes': num_episodes,
           **seed_statistics.regret_statistics(group)}
          for (agent_name, size, num_episodes), group in sorted(
              groups.items())]


def plot(summary: Sequence[Dict[str, Any]], path: str) -> None:
  """Median regret against size per agent, interquartile range shaded."""
  fig, ax = plt.subplots(figsize=(6.5, 4.5))
  for agent_name in dict.fromkeys(r['agent'] for r in summary):
    rows = sorted((r for r in summary if r['agent'] == agent_name),
                  key=lambda r: r['size'])
    sizes = [r['size'] for r in rows]
    line, = ax.plot(sizes, [r['median_regret'] for r in rows], marker='o',
                    label=agent_name)
    ax.fill_between(sizes, [r['q25_regret'] for r in rows],
                    [r['q75_regret'] for r in rows], color=line.get_color(),
                    alpha=0.2)
  episodes = sorted({r['num_episodes'] for r in summary})
  ax.set_xticks(sorted({r['size'] for r in summary}))
  ax.set_xlabel('deep sea size')
  ax.set_ylabel('regret (non-rewarding episodes)')
  ax.set_title(f'Deep sea, {"/".join(map(str, episodes))} episodes: median '
               'and IQR over seeds')
  ax.grid(alpha=0.3)
  ax.legend()
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


def format_summary(summary: Sequence[Dict[str, Any]]) -> str:
  lines = [f'{"agent":<16} {"size":>5} {"seeds":>5} {"median":>8} '
           f'{"IQR":>17} {"found":>5} {"first find":>10}']
  for r in summary:
    first = r['median_first_treasure']
    lines.append(f'{r["agent"]:<16} {r["size"]:>5} {r["num_seeds"]:>5} '
                 f'{r["median_regret"]:>8.1f} '
                 f'[{r["q25_regret"]:>7.1f}, {r["q75_regret"]:>7.1f}] '
                 f'{r["seeds_found_treasure"]:>5} '
                 f'{first if first == "" else f"{first:.1f}":>10}')
  return '\n'.join(lines)


def run(output_dir: str, agent_names: Sequence[str], sizes: Sequence[int],
        num_seeds: int, num_episodes: int, num_workers: int = 1,
        overwrite: bool = False, progress_every: float = 30.0,
        runner: str = 'bsuite', backend: str = 'local',
        episodes_per_call: int = 500,
        batching: str = 'vmap',
        checkpoints_on: bool = True,
        ray_address: Optional[str] = None,
        overrides: Optional[Mapping[str, Any]] = None
        ) -> List[Dict[str, Any]]:
  """Runs what is missing, then writes the summary table and plot.

  `overrides`: hyperparameter values and a 'preset' given to every agent
  (`hyperparameter_flags.user_overrides`); part of each group's recorded
  config, so a table never mixes runs of different values.

  `runner`: 'bsuite' (bsuite's loop, one run per task; `backend` 'local'
  or 'ray' runs the tasks) or 'jax' (compiled groups, local). With
  `runner='jax'` and `checkpoints_on`, each group's state is saved
  under `output_dir/checkpoints` between compiled calls, and a rerun after a
  kill resumes from there.

  Returns:
    The summary rows of the requested agents and sizes.
  """
  for name in agent_names:
    if name not in agents.AGENT_NAMES:
      raise ValueError(f'Unknown agent {name!r}; valid: '
                       f'{list(agents.AGENT_NAMES)}.')
  if runner not in RUNNERS:
    raise ValueError(f'runner must be one of {RUNNERS}, got {runner!r}.')
  if backend not in parallel.BACKENDS:
    raise ValueError(f'backend must be one of {parallel.BACKENDS}, got '
                     f'{backend!r}.')
  if runner == 'jax' and backend != 'local':
    raise ValueError(f'--backend={backend} runs bsuite-loop tasks; the jax '
                     'runner trains its groups locally (--backend=local).')
  if any(int(s) < 2 for s in sizes):
    raise ValueError(f'sizes must be >= 2, got {list(sizes)}.')
  os.makedirs(output_dir, exist_ok=True)
  runs_path = os.path.join(output_dir, RUNS_FILE)
  wanted = [task_key(a, s, seed, num_episodes) for a in agent_names
            for s in sizes for seed in range(num_seeds)]
  rows = run_tables.read_rows(runs_path, RUN_COLUMNS)
  if overwrite:
    rows = [r for r in rows if task_key(r['agent'], r['size'], r['seed'],
                                        r['num_episodes']) not in wanted]
    run_tables.write_rows(runs_path, rows, RUN_COLUMNS)
  configs = check_recorded_configs(
      os.path.join(output_dir, CONFIGS_FILE), rows, wanted, runner,
      overrides)
  run_tables.write_text(os.path.join(output_dir, CONFIGS_FILE),
                     json.dumps(configs, indent=1, sort_keys=True) + '\n')
  done = {task_key(r['agent'], r['size'], r['seed'], r['num_episodes'])
          for r in rows}
  todo = [k for k in wanted if k not in done]
  print(f'{len(wanted)} runs requested, {len(wanted) - len(todo)} already '
        f'in {runs_path}, {len(todo)} to run.', flush=True)
  start = time.time()
  if runner == 'jax':
    finished_rows = _run_jax_groups(
        todo, episodes_per_call, progress_every > 0, batching,
        os.path.join(output_dir, CHECKPOINT_FOLDER) if checkpoints_on
        else None, num_workers, dict(overrides or {}))
  else:
    log_dir = os.path.join(output_dir, 'logs')
    tasks = [key + (log_dir, progress_every, dict(overrides or {}))
             for key in todo]
    finished_rows = (row for _, row in parallel.run_tasks(
        run_single, tasks, num_workers, backend=backend,
        ray_address=ray_address))
  for count, row in enumerate(finished_rows, start=1):
    run_tables.append_row(runs_path, row, RUN_COLUMNS)
    rows.append({k: str(v) for k, v in row.items()})
    print(f'[{count}/{len(todo)}, {time.time() - start:.0f} s] '
          f'{row["agent"]} size {row["size"]} seed {row["seed"]}: regret '
          f'{row["regret"]}/{row["num_episodes"]}, first treasure at episode '
          f'{row["first_treasure_episode"] or "never"}, {row["seconds"]} s',
          flush=True)
  return write_tables(output_dir, [r for r in rows if task_key(
      r['agent'], r['size'], r['seed'], r['num_episodes']) in set(wanted)])


def write_tables(output_dir: str,
                 rows: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
  """Writes the summary CSV, its markdown and the plot of `rows`."""
  summary = summarize(rows)
  run_tables.write_rows(os.path.join(output_dir, SUMMARY_FILE), summary,
                     SUMMARY_COLUMNS)
  plot(summary, os.path.join(output_dir, PLOT_FILE))
  run_tables.write_text(os.path.join(output_dir, TABLE_FILE),
                     seed_statistics.regret_markdown(summary, ('agent', 'size',
                                                       'num_episodes')))
  return summary


def tables_from_runs(output_dir: str,
                     agent_names: Sequence[str]) -> List[Dict[str, Any]]:
  """Rebuilds the tables and plot from the runs CSV, running nothing.

  Every row of the named agents counts, so one plot can hold sizes run for
  different horizons (e.g. 300 episodes at size 10, 500 at 20).
  """
  runs_path = os.path.join(output_dir, RUNS_FILE)
  rows = [r for r in run_tables.read_rows(runs_path, RUN_COLUMNS)
          if r['agent'] in set(agent_names)]
  if not rows:
    raise ValueError(f'No runs of agents {list(agent_names)} in {runs_path}.')
  return write_tables(output_dir, rows)


def _run_jax_group(agent_name: str, size: int, seeds: Sequence[int],
                   num_episodes: int, episodes_per_call: int, progress: bool,
                   batching: str, checkpoint_dir: Optional[str],
                   overrides: Optional[Dict[str, Any]] = None
                   ) -> List[Dict[str, Any]]:
  """`run_seeds_jax` as a worker task (module level: picklable)."""
  from absl import logging as worker_logging  # pylint: disable=g-import-not-at-top
  # A spawned worker starts with absl's default verbosity; orbax logs every
  # checkpoint step at INFO.
  worker_logging.set_verbosity(worker_logging.WARNING)
  return deep_sea_groups.run_seeds_jax(agent_name, size, seeds, num_episodes,
                       episodes_per_call, progress, overrides=overrides,
                       batching=batching, checkpoint_dir=checkpoint_dir)


def group_tasks(todo, episodes_per_call: int, progress: bool, batching: str,
                checkpoint_dir: Optional[str],
                overrides: Optional[Dict[str, Any]] = None) -> List[Tuple]:
  """`_run_jax_group` arguments, one task per (agent, size, episodes)."""
  groups: Dict[Tuple[str, int, int], List[int]] = {}
  for agent_name, size, seed, num_episodes in todo:
    groups.setdefault((agent_name, size, num_episodes), []).append(seed)
  return [(agent_name, size, seeds, num_episodes,
           min(episodes_per_call, num_episodes), progress, batching,
           checkpoint_dir, dict(overrides or {}))
          for (agent_name, size, num_episodes), seeds in groups.items()]


def remove_stale_checkpoints(checkpoint_dir: str, tasks: Sequence[Tuple],
                             batching: str) -> None:
  """Deletes group folders that no task of this run resumes (a kill between
  writing a group's rows and deleting its checkpoints leaves one)."""
  if not os.path.isdir(checkpoint_dir):
    return
  wanted = {os.path.basename(deep_sea_groups.group_checkpoint_folder(
      checkpoint_dir, agent_name, size, seeds, num_episodes, chunk,
      batching, overrides=task[-1])[0])
            for task in tasks
            for agent_name, size, seeds, num_episodes, chunk in [task[:5]]}
  for name in sorted(set(os.listdir(checkpoint_dir)) - wanted):
    print(f'Removing checkpoints of a finished or other run: '
          f'{os.path.join(checkpoint_dir, name)}', flush=True)
    shutil.rmtree(os.path.join(checkpoint_dir, name), ignore_errors=True)


def _run_jax_groups(todo, episodes_per_call: int, progress: bool,
                    batching: str = 'vmap',
                    checkpoint_dir: Optional[str] = None,
                    num_workers: int = 1,
                    overrides: Optional[Dict[str, Any]] = None):
  """Yields the rows of the missing runs, one (agent, size) group at a time
  (a group is the unit that resumes: all its seeds land together; with
  `checkpoint_dir` a killed group resumes from its last chunk). With
  `num_workers` > 1 the groups run in that many worker processes at once
  (`parallel.run_tasks`; e.g. several sizes sharing a GPU whose kernels
  one program leaves idle), rows yielded as each group ends."""
  tasks = group_tasks(todo, episodes_per_call, progress, batching,
                      checkpoint_dir, overrides)
  if checkpoint_dir is not None:
    remove_stale_checkpoints(checkpoint_dir, tasks, batching)
  for task, rows in parallel.run_tasks(_run_jax_group, tasks, num_workers):
    yield from rows
    # The consumer has written the group's rows: its checkpoints can go.
    agent_name, size, seeds, num_episodes, chunk = task[:5]
    if checkpoint_dir is not None:
      deep_sea_groups.remove_group_checkpoints(
          checkpoint_dir, agent_name, size, seeds, num_episodes, chunk,
          batching, overrides=task[-1])


def main(argv: Sequence[str]) -> None:
  del argv
  results.quiet_checkpoint_logs()
  results.check_output_flag(FLAGS.save_path, '--save_path')
  if FLAGS.tables_only:
    summary = tables_from_runs(FLAGS.save_path, FLAGS.agents)
    print(format_summary(summary))
    for name in (SUMMARY_FILE, TABLE_FILE, PLOT_FILE):
      print(f'Wrote {os.path.join(FLAGS.save_path, name)}')
    return
  # The same values go to every agent; each agent checks that they are its
  # hyperparameters (a usage error names the one that is not).
  overrides = {}
  for agent_name in FLAGS.agents:
    overrides = hyperparameter_flags.user_overrides(agent_name)
  summary = run(FLAGS.save_path, FLAGS.agents,
                [int(s) for s in FLAGS.sizes], FLAGS.seeds,
                FLAGS.num_episodes, FLAGS.num_workers, FLAGS.overwrite,
                FLAGS.progress_every, FLAGS.runner, FLAGS.backend,
                FLAGS.episodes_per_call,
                training.resolve_batching(FLAGS.batching), FLAGS.checkpoints,
                FLAGS.ray_address, overrides)
  print('\n' + format_summary(summary))
  for name in (RUNS_FILE, SUMMARY_FILE, TABLE_FILE, PLOT_FILE):
    print(f'Wrote {os.path.join(FLAGS.save_path, name)}')


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
