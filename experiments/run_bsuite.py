r"""Runs an agent on bsuite ids or whole sweeps, logging with bsuite's loggers.

  python -m experiments.run_bsuite --agent=pe_dqn --bsuite_id=deep_sea/10
  python -m experiments.run_bsuite --agent=pe_dqn --bsuite_id=DEEP_SEA \
      --save_path=results --logging_mode=csv
  python -m experiments.run_bsuite --agent=boot_dqn --bsuite_id=SWEEP \
      --save_path=results --num_workers=16

Flags follow bsuite's own `run.py`. `--bsuite_id` takes one id or the name of
a sweep in `bsuite.sweep` (SWEEP for all 468, DEEP_SEA, TESTING, ...). Results
of agent NAME with seed K go to `<save_path>/NAME/seed_K/` whichever runner
writes them (`experiments.lib.units`): bsuite's own CSVs, each with a JSON
record of the run beside it, read by bsuite's analysis and `analyze_bsuite`.
Every hyperparameter of every agent is also a flag (e.g. `--learning_rate`,
`--v_min`); flags left unset keep the agent's defaults. For agents with a
categorical support, `v_min`/`v_max` default to the id's entry in
`agents.return_ranges` (`agents.bsuite_settings`).

`--seeds=0,1,2,3` runs those agent seeds of each id at once: one bsuite
environment per seed, stepped in lockstep, with one vmapped jitted call per
lockstep for all seeds' agents (`agents.lockstep`). Each seed logs with
bsuite's loggers into its own folder, `<save_path>/NAME/seed_K/`, and resumes
on its own.

Sweeps are resumable with `--logging_mode=csv`: an id whose log already
reaches its episode count is skipped (unless `--overwrite`), and an id that
was cut off is run again from its first episode over its partial log, so a
killed sweep restarts where it stopped with no lost or duplicated episodes.
Each log is written whole to a temporary file and renamed into place, so a
kill never leaves a torn file. `--num_workers` runs ids in parallel worker
processes (one agent and one XLA runtime each).
"""

# Before the other imports: a Ctrl-C while they load (seconds) is kept,
# not lost in a library's start-up (experiments/lib/interrupts.py).
from experiments.lib import interrupts  # pylint: disable=g-bad-import-order
if __name__ == '__main__':
  interrupts.record_during_imports()

import contextlib
import json
import os
import shutil
import sys
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

from absl import app
from absl import flags
from bsuite import sweep
from bsuite.logging import csv_logging
from bsuite.logging import terminal_logging
from bsuite.utils import wrappers
import numpy as np

import agents
from agents import bsuite_settings
from agents import common
from agents import lockstep
from agents import paper_presets
from agents import training
from experiments.lib import bsuite_jax
from experiments.lib import checkpoints
from experiments.lib import compilation_cache
from experiments.lib import hyperparameter_flags
from experiments.lib import parallel
from experiments.lib import results
from experiments.lib import suite_jax
from experiments.lib import unit_files
from experiments.lib import units

FLAGS = flags.FLAGS
# A seed is a 32-bit PRNG key: larger ones would alias smaller ones.
MAX_SEED = 2 ** 32 - 1


def define_flags() -> None:
  """Defines the command-line flags (only when run as a script, so that
  several experiment modules can be imported into one process)."""
  # bsuite's run.py flags.
  flags.DEFINE_string('bsuite_id', 'deep_sea/0',
                      'A bsuite id (deep_sea/10), a sweep name in any case '
                      '(SWEEP, DEEP_SEA or deep_sea, TESTING, ...) or a '
                      'comma-separated list of both.')
  flags.DEFINE_string('save_path', '/tmp/pe_jax', 'Where to save results.')
  # bsuite's sqlite logger fails with bsuite 0.3.6, so it is not offered.
  flags.DEFINE_enum('logging_mode', 'csv', ['csv', 'terminal'],
                    'Which bsuite logger to use.')
  flags.DEFINE_boolean('overwrite', False,
                       'Overwrite existing results (otherwise finished ids are '
                       'skipped).')
  flags.DEFINE_integer('num_episodes', None,
                       'Episodes per id and seed, and the agent\'s horizon '
                       '(default: the id\'s bsuite_num_episodes). jax '
                       'runner: a deep sea seed unsolved within a smaller '
                       'budget is reported as censored.', lower_bound=1)
  flags.DEFINE_boolean('verbose', False, 'Log every episode to the terminal.')
  # Ours.
  flags.DEFINE_enum('agent', 'pe_dqn', list(agents.AGENT_NAMES),
                    'Agent to run.')
  flags.DEFINE_enum('preset', 'default', list(paper_presets.PRESETS),
                    paper_presets.PRESET_HELP)
  flags.DEFINE_integer('seed', 0, 'Seed of the agent.', lower_bound=0,
                       upper_bound=MAX_SEED)
  flags.DEFINE_list('seeds', None,
                    'Agent seeds run at once in lockstep (e.g. 0,1,2,3); '
                    'overrides --seed. Seed K logs to '
                    '<save_path>/<agent>/seed_K.')
  flags.DEFINE_float('progress_every', 10.0,
                     'Seconds between progress lines (0: none).',
                     lower_bound=0.0)
  flags.DEFINE_integer('checkpoint_every', 0,
                       'Episodes between checkpoints of each id (agent, '
                       'environment and log; csv logging, single seed); a '
                       'rerun resumes from the newest. 0: none.',
                       lower_bound=0)
  parallel.define_backend_flags('Where ids run: local worker processes, or '
                                'Ray tasks (pip install -e ".[ray]").')
  flags.DEFINE_integer('num_workers', 1,
                       'Worker processes running ids in parallel.',
                       lower_bound=1)
  flags.DEFINE_enum('runner', 'bsuite', ['bsuite', 'jax'],
                    'bsuite: bsuite\'s own environments and loop. jax: the '
                    'seeds of each id trained in one compiled program, '
                    'logging the same CSVs: deep sea on our JAX deep sea '
                    '(experiments.lib.bsuite_jax), every other id on the '
                    'exact ports of bsuite\'s environments '
                    '(experiments.lib.suite_jax, pe_jax.envs.load).')
  flags.DEFINE_boolean('stop_when_solved', True,
                       'jax runner: end a seed at the log point where '
                       'bsuite\'s deep sea analysis calls it solved (its '
                       'score does not change).')
  flags.DEFINE_string('mnist_dir', None,
                      'jax runner: the folder of MNIST\'s four files for '
                      'the mnist ids (default bsuite\'s /tmp/mnist); '
                      'nothing is downloaded (docs/experiments.md: where '
                      'to get them offline).')
  flags.DEFINE_integer('episodes_per_call', 50,
                       'jax runner: episodes per compiled call.',
                       lower_bound=1)
  flags.DEFINE_enum('batching', 'auto', list(training.BATCHING_CHOICES),
                    'jax runner: seeds one after another in the program '
                    '(map, faster on CPU) or as batched operations (vmap); '
                    'auto: map on CPU, vmap on a GPU or TPU.')
  flags.DEFINE_integer('units_per_program', 0,
                       'jax runner: most (id, seed) units trained in one '
                       'compiled program; units of one observation shape '
                       'and config share one (0: all of them).',
                       lower_bound=0)
  flags.DEFINE_float('checkpoint_seconds', 300.0,
                     'jax runner: seconds between checkpoints of unfinished '
                     'seeds.', lower_bound=1.0)
  hyperparameter_flags.define_hyperparameter_flags()


# Flags that only one runner reads: the other refuses them by name rather
# than ignore them (`check_runner_flags`).
RUNNER_FLAGS = {
    'bsuite': ('checkpoint_every', 'num_workers', 'backend',
               'ray_address', 'cpus_per_task', 'gpus_per_task', 'verbose'),
    'jax': ('stop_when_solved', 'episodes_per_call',
            'mnist_dir', 'batching', 'checkpoint_seconds',
            'units_per_program'),
}
# What the jax runner offers instead of a bsuite-runner flag.
JAX_INSTEAD = {'checkpoint_every': '--checkpoint_seconds'}


def check_runner_flags() -> None:
  """Every flag set on the command line is read by the chosen runner."""
  other = 'jax' if FLAGS.runner == 'bsuite' else 'bsuite'
  unread = [f'--{name}' + (f' (use {JAX_INSTEAD[name]})'
                           if FLAGS.runner == 'jax' and name in JAX_INSTEAD
                           else '')
            for name in RUNNER_FLAGS[other] if FLAGS[name].present]
  if unread:
    raise app.UsageError(
        f'--runner={FLAGS.runner} does not read {", ".join(unread)}: '
        f'{"they belong" if len(unread) > 1 else "it belongs"} to '
        f'--runner={other}.')


def resolve_ids(bsuite_id: str) -> List[str]:
  """Ids named by `bsuite_id`: ids and sweep names (any case: `CATCH`,
  `catch`, `SWEEP`), comma-separated."""
  ids = []
  for name in (n.strip() for n in bsuite_id.split(',')):
    if '/' in name:
      if name not in sweep.SETTINGS:
        experiment = name.split(sweep.SEPARATOR)[0]
        known = [i for i in sweep.SWEEP
                 if i.split(sweep.SEPARATOR)[0] == experiment]
        hint = (f'{experiment} has {known[0]} .. {known[-1]}' if known else
                f'experiments: {sorted({i.split("/")[0] for i in sweep.SWEEP})}'
                )
        raise ValueError(f'--bsuite_id: unknown bsuite id {name!r}; {hint} '
                         '(all ids: python -c "from bsuite import sweep; '
                         'print(sweep.SWEEP)").')
      found = [name]
    else:
      # Sweeps by bsuite's constant or its experiment's name: CATCH, catch.
      found = getattr(sweep, name.upper(), None)
      if not isinstance(found, tuple) or not all(
          isinstance(i, str) for i in found):
        names = sorted(n for n in dir(sweep)
                       if n.isupper() and not n.startswith('_') and
                       isinstance(getattr(sweep, n), tuple))
        raise ValueError(f'--bsuite_id: {name!r} is neither a bsuite id nor '
                         f'a sweep; sweeps: {names}.')
    ids.extend(i for i in found if i not in ids)
  return ids


def results_dir(save_path: str, agent_name: str, seed: int) -> str:
  """Where seed `seed` of an agent logs, whichever runner: `<save_path>/
  <agent>/seed_K/` (`units.seed_folder`)."""
  return units.seed_folder(save_path, agent_name, seed)


def parse_seeds(values: Optional[Sequence[str]]) -> Optional[List[int]]:
  """--seeds as distinct ints >= 0, or None when unset."""
  if values is None:
    return None
  try:
    seeds = [int(v) for v in values]
  except ValueError:
    raise app.UsageError(f'--seeds must be comma-separated ints, got '
                         f'{",".join(values)!r}.') from None
  if (not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0
      or max(seeds) > MAX_SEED):
    raise app.UsageError(f'--seeds must be distinct ints in [0, {MAX_SEED}] '
                         f'(a PRNG key holds 32 bits), got {seeds}.')
  return seeds


csv_path = unit_files.bsuite_csv_path


done_path = unit_files.marker_path  # one record for every runner


def run_identity(agent_name: str, bsuite_id: str, seed: int,
                 overrides: Dict[str, Any], loop: str) -> Dict[str, Any]:
  """What makes two runs of an id the same run (the episode count does not:
  a longer run continues a shorter one's purpose). `loop`: 'single' (one
  agent in bsuite's loop) or 'lockstep' (--seeds: batched, so its numbers
  differ from the single loop's in the last float bits)."""
  return json.loads(json.dumps(dict(
      runner='bsuite', loop=loop, agent=agent_name, seed=int(seed),
      overrides=repr(sorted(overrides.items())),
      **units.environment_identity(bsuite_id, seed))))


def is_finished(bsuite_id: str, directory: str, num_episodes: int,
                identity: Optional[Dict[str, Any]] = None) -> bool:
  """True when a run of `bsuite_id` for >= `num_episodes` finished here.

  Raises ValueError when the finished run here is another run than
  `identity` (another seed, agent or hyperparameters): its results must not
  pass for this run's.
  """
  unit_files.check_no_other_runner(bsuite_id, directory, 'bsuite',
                                overwrite=False)
  record = unit_files.read_record(bsuite_id, directory)
  if record is None:
    return False
  marker = done_path(bsuite_id, directory)
  if identity is not None and record.get('identity') != identity:
    raise unit_files.AnotherRunError(
        f'{marker} records another finished run ({record.get("identity")}), '
        f'not this one ({identity}); use --overwrite to replace it, or '
        'another --save_path.')
  mismatch = unit_files.csv_mismatch(
      csv_path(bsuite_id, directory), record,
      unit_files.last_log_episode(int(record['episodes'])))
  if mismatch:
    print(f'  {bsuite_id} in {directory}: {mismatch}; running it again.',
          flush=True)
    return False
  return int(record['episodes']) >= num_episodes


def mark_finished(bsuite_id: str, directory: str, num_episodes: int,
                  identity: Optional[Dict[str, Any]] = None) -> None:
  """Records the unit's run as finished (`unit_files.write_record`)."""
  unit_files.write_record(bsuite_id, directory,
                       dict(episodes=int(num_episodes), identity=identity))


def load_environment(bsuite_id: str, directory: str, logging_mode: str,
                     overwrite: bool, seed: int):
  """The bsuite environment of `bsuite_id` seeded by `seed`
  (`results.load_seeded`), logging into `directory` as `logging_mode`
  says."""
  env = results.load_seeded(bsuite_id, seed)
  if logging_mode == 'terminal':
    return terminal_logging.wrap_environment(env, pretty_print=True,
                                             log_every=True)
  logger = results.AtomicCSVLogger(bsuite_id, directory, overwrite=overwrite)
  return wrappers.Logging(env, logger)


class LoopOptions(NamedTuple):
  """How bsuite's loop runs units: the bsuite runner's flags.

  `overwrite` (--overwrite) redoes finished units and replaces another
  runner's; a cut-off csv log is always rerun over from its first episode.
  `checkpoint_every`: episodes between checkpoints (one seed, csv only).
  """
  save_path: str
  num_episodes: Optional[int] = None
  logging_mode: str = 'csv'
  overwrite: bool = False
  verbose: bool = False
  progress_every: float = 10.0
  checkpoint_every: int = 0

  def directory(self, unit: units.Unit) -> str:
    return unit.directory(self.save_path)

  @property
  def logger_overwrite(self) -> bool:
    # A cut-off id is rerun from scratch over its partial CSV log, so
    # nothing is lost or duplicated.
    return True if self.logging_mode == 'csv' else self.overwrite


def _unit_locks(held: contextlib.ExitStack, unit_list, options) -> None:
  """Takes each unit's lock (csv logging), shared with every runner."""
  if options.logging_mode != 'csv':
    return
  for unit in unit_list:
    held.enter_context(unit_files.unit_lock(
        unit.bsuite_id, options.directory(unit), unit.label))


def _claim(unit: units.Unit, options: LoopOptions) -> None:
  """Before a unit runs over its folder: one layout, no other runner's
  unit, and its old record gone (being rerun: not finished)."""
  if options.logging_mode != 'csv':
    return
  directory = options.directory(unit)
  unit_files.check_one_layout(unit.bsuite_id, options.save_path, unit.agent,
                           unit.seed, directory)
  unit_files.check_no_other_runner(unit.bsuite_id, directory, 'bsuite',
                                options.overwrite)
  unit_files.remove_record(unit.bsuite_id, directory)


def run_one(unit: units.Unit, options: LoopOptions) -> Dict[str, Any]:
  """Trains `unit`'s agent in bsuite's loop; returns a summary dict.

  With `options.checkpoint_every` = N (csv logging only), the agent's whole
  state (parameters, optimiser, replay, RNG, counters) is saved with orbax
  every N episodes, together with the environment (its RNG and counters,
  as plain data) and bsuite's logger (the rows logged so far); a run of the
  same unit resumes from the newest checkpoint and its log ends equal to an
  uninterrupted run's, row for row. `options.overwrite` discards the
  checkpoints. With csv logging the unit's lock is held throughout
  (`unit_files.unit_lock`).
  """
  with contextlib.ExitStack() as held:
    _unit_locks(held, [unit], options)
    return _run_one_locked(unit, options)


def _run_one_locked(unit, options):
  """`run_one` once the unit's lock is held."""
  bsuite_id, agent_name, seed = unit.bsuite_id, unit.agent, unit.seed
  overrides = unit.overrides_dict()
  directory = options.directory(unit)
  _claim(unit, options)
  store = None
  if options.checkpoint_every:
    if options.logging_mode != 'csv':
      raise ValueError('--checkpoint_every needs --logging_mode=csv, got '
                       f'{options.logging_mode!r}.')
    folder = unit.checkpoint_folder(options.save_path)
    if options.overwrite:
      shutil.rmtree(folder, ignore_errors=True)
    store = checkpoints.ChunkCheckpoints(folder, dict(
        bsuite_id=bsuite_id, agent=agent_name, seed=seed,
        num_episodes=options.num_episodes,
        overrides=repr(sorted(overrides.items())),
        **units.environment_identity(bsuite_id, seed)))
  env = load_environment(bsuite_id, directory, options.logging_mode,
                         options.logger_overwrite, seed)
  episodes = options.num_episodes or env.bsuite_num_episodes
  kwargs = bsuite_settings.for_bsuite_id(agent_name, bsuite_id, overrides)
  agent = agents.make(agent_name, env.observation_spec(), env.action_spec(),
                      seed=seed, num_episodes=episodes, **kwargs)
  total_return, steps, first_episode = 0.0, 0, 0
  returns = []
  if store is not None:
    def decode(extra):
      if not isinstance(extra.get('environment'), dict):
        raise checkpoints.EnvironmentStateError(
            'its environment is not in the plain-data format (a pickled '
            'one is never read)')
      return dict(extra, environment=checkpoints.restore_environment(
          env, extra['environment']))
    restored = store.restore_latest(lambda step: agent.agent_state,
                                    with_extra=True, decode_extra=decode)
    if restored is not None:
      first_episode, agent_state, extra = restored
      agent.restore_agent_state(agent_state)
      env = extra['environment']
      # The saved logger holds the path of the run that saved it; the log
      # belongs where this run was asked to write (a moved or copied
      # --save_path, or a relative one from another directory).
      # pylint: disable-next=protected-access
      env._logger._save_path = csv_path(bsuite_id, directory)
      env._logger.write_all()  # pylint: disable=protected-access
      steps, returns = extra['steps'], extra['returns']
      total_return = float(np.sum(returns))
      print(f'  {unit.label}: resuming from episode {first_episode} '
            f'({folder})', flush=True)
  # Rates count this process's steps: a resumed run's restored steps were
  # paid for by the process that saved them.
  restored_steps = steps
  start = last_report = time.time()
  for episode in range(first_episode, episodes):
    interrupts.raise_if_requested()
    episode_return, episode_steps, _ = common.run_episode(agent, env)
    steps += episode_steps
    returns.append(float(episode_return))
    total_return += episode_return
    if store is not None and (episode + 1) % options.checkpoint_every == 0 \
        and (episode + 1) < episodes:
      # Never save a diverged state: the last good checkpoint stays newest.
      common.check_finite(agent.agent_state,
                          f'{unit.label}, episode {episode + 1}')
      store.save(episode + 1, agent.agent_state, extra={
          'environment': checkpoints.environment_state(env),
          'steps': steps, 'returns': returns})
    now = time.time()
    if options.verbose or (options.progress_every and
                           now - last_report >= options.progress_every):
      last_report = now
      common.check_finite(agent.agent_state,
                          f'{unit.label}, episode {episode + 1}')
      recent = np.mean(returns[-20:])
      print(f'  {unit.label} episode {episode + 1}/{episodes}  '
            f'steps {steps}  '
            f'{(steps - restored_steps) / (now - start):.0f} steps/s  '
            f'mean return (last 20) {recent:.3f}', flush=True)
  elapsed = time.time() - start
  common.check_finite(agent.agent_state, f'{unit.label}, episode {episodes}')
  if options.logging_mode == 'csv':
    mark_finished(bsuite_id, directory, episodes,
                  run_identity(agent_name, bsuite_id, seed, overrides,
                               'single'))
  if store is not None:
    store.remove()  # the log is complete
  info = env.bsuite_info() if hasattr(env, 'bsuite_info') else {}
  return {
      'bsuite_id': bsuite_id,
      'agent': agent_name,
      'seed': seed,
      'episodes': episodes,
      'steps': steps,
      'mean_return': total_return / max(episodes, 1),
      'regret': info.get('total_bad_episodes'),
      'seconds': elapsed,
      'steps_per_second': (steps - restored_steps) / max(elapsed, 1e-9),
      'resumed_at_episode': first_episode,
      'bsuite_info': info,
  }


def run_lockstep(unit_list: Sequence[units.Unit],
                 options: LoopOptions) -> List[Dict[str, Any]]:
  """Trains the units (one agent, id and overrides; their seeds) in
  lockstep in bsuite's loop; one summary each."""
  if len({(u.agent, u.bsuite_id, u.overrides) for u in unit_list}) != 1:
    raise ValueError('Lockstep units differ only in their seeds, got '
                     f'{[u.label for u in unit_list]}.')
  if options.checkpoint_every:
    raise ValueError('--checkpoint_every runs one seed at a time.')
  with contextlib.ExitStack() as held:
    _unit_locks(held, unit_list, options)
    return _run_lockstep_locked(list(unit_list), options)


def _run_lockstep_locked(unit_list, options):
  """`run_lockstep` once every unit's lock is held."""
  for unit in unit_list:
    _claim(unit, options)
  first = unit_list[0]
  agent_name, bsuite_id = first.agent, first.bsuite_id
  overrides = first.overrides_dict()
  seeds = [u.seed for u in unit_list]
  envs = [load_environment(bsuite_id, options.directory(u),
                           options.logging_mode, options.logger_overwrite,
                           u.seed) for u in unit_list]
  episodes = options.num_episodes or envs[0].bsuite_num_episodes
  kwargs = bsuite_settings.for_bsuite_id(agent_name, bsuite_id, overrides)
  agent = agents.make_pure(agent_name, envs[0].observation_spec(),
                           envs[0].action_spec(), num_episodes=episodes,
                           **kwargs)
  start = time.time()
  runner = lockstep.Lockstep(agent, seeds)
  progress = lockstep.Progress(f'{bsuite_id} [{agent_name}]', len(seeds),
                               episodes, options.progress_every,
                               options.verbose)
  outcomes = lockstep.run_episodes(runner, envs, episodes,
                                   on_episode=progress)
  elapsed = time.time() - start
  common.check_finite_per_agent(
      runner.state, [f'{u.label}, episode {episodes}' for u in unit_list])
  summaries = []
  for unit, env, outcome in zip(unit_list, envs, outcomes):
    if options.logging_mode == 'csv':
      mark_finished(bsuite_id, options.directory(unit), episodes,
                    run_identity(agent_name, bsuite_id, unit.seed,
                                 overrides, 'lockstep'))
    info = env.bsuite_info() if hasattr(env, 'bsuite_info') else {}
    summaries.append({
        'bsuite_id': bsuite_id,
        'agent': agent_name,
        'seed': unit.seed,
        'episodes': episodes,
        'steps': outcome.steps,
        'mean_return': float(np.mean(outcome.episode_returns)),
        'regret': info.get('total_bad_episodes'),
        'seconds': elapsed,
        'steps_per_second': outcome.steps / max(elapsed, 1e-9),
        'bsuite_info': info,
    })
  return summaries


def format_summary(summary: Dict[str, Any]) -> str:
  regret = summary['regret']
  regret_text = (f'regret (non-rewarding episodes) {regret}'
                 if regret is not None else 'regret n/a')
  return (f'{summary["bsuite_id"]} [{summary["agent"]}] seed '
          f'{summary["seed"]}: '
          f'{summary["episodes"]} episodes, {summary["steps"]} steps, '
          f'mean return {summary["mean_return"]:.3f}, {regret_text}, '
          f'{summary["seconds"]:.1f} s ({summary["steps_per_second"]:.0f} '
          'steps/s' + (f' from episode {summary["resumed_at_episode"]} on'
                       if summary.get('resumed_at_episode') else '') + ')')


def unit_to_run(unit: units.Unit, options: LoopOptions, loop: str) -> bool:
  """False (and one line) when `unit` has a finished log of this run in
  bsuite's loop (`loop`: 'single' or 'lockstep'); a finished run of another
  identity is a ValueError."""
  if options.logging_mode != 'csv' or options.overwrite:
    return True
  directory = options.directory(unit)
  episodes = options.num_episodes or sweep.EPISODES[unit.bsuite_id]
  if not is_finished(unit.bsuite_id, directory, episodes, run_identity(
      unit.agent, unit.bsuite_id, unit.seed, unit.overrides_dict(), loop)):
    return True
  print(f'  {unit.label}: finished results in {directory}, skipped '
        '(--overwrite to redo).', flush=True)
  # A run killed after its record was written leaves its checkpoints.
  shutil.rmtree(unit.checkpoint_folder(options.save_path), ignore_errors=True)
  return False


def loop_options() -> LoopOptions:
  """The bsuite runner's flags."""
  return LoopOptions(
      save_path=FLAGS.save_path, num_episodes=FLAGS.num_episodes,
      logging_mode=FLAGS.logging_mode, overwrite=FLAGS.overwrite,
      verbose=FLAGS.verbose, progress_every=FLAGS.progress_every,
      checkpoint_every=FLAGS.checkpoint_every)


def _backend_options() -> Dict[str, Any]:
  return dict(backend=FLAGS.backend, ray_address=FLAGS.ray_address,
              cpus_per_task=FLAGS.cpus_per_task,
              gpus_per_task=FLAGS.gpus_per_task)


def run_loop_main(all_units: Sequence[units.Unit], lockstep_seeds: bool
                  ) -> None:
  """`main` for --runner=bsuite: one task per unit, or (--seeds) one per
  id with its seeds in lockstep; tasks in `--num_workers` workers."""
  options = loop_options()
  loop = 'lockstep' if lockstep_seeds else 'single'
  todo = [u for u in all_units if unit_to_run(u, options, loop)]
  if lockstep_seeds:
    by_id = {}
    for unit in todo:
      by_id.setdefault(unit.bsuite_id, []).append(unit)
    fn, tasks = run_lockstep, [(group, options) for group in by_id.values()]
    what = (f'{len(tasks)} of {len({u.bsuite_id for u in all_units})} '
            'ids to run, seeds '
            f'{",".join(map(str, sorted({u.seed for u in all_units})))} in '
            'lockstep')
  else:
    fn, tasks = run_one, [(unit, options) for unit in todo]
    what = f'{len(todo)} of {len(all_units)} units to run'
  print(f'{FLAGS.agent}: {what}, with '
        f'{min(FLAGS.num_workers, max(len(tasks), 1))} worker(s).', flush=True)
  summaries = []
  start = time.time()
  for _, outcome in parallel.run_tasks(fn, tasks, FLAGS.num_workers,
                                       **_backend_options()):
    for summary in outcome if lockstep_seeds else [outcome]:
      summaries.append(summary)
      print(f'[{len(summaries)}/{len(todo)} done, '
            f'{time.time() - start:.0f} s] {format_summary(summary)}',
            flush=True)
  order = [(u.bsuite_id, u.seed) for u in all_units]
  print_summary(sorted(summaries, key=lambda s: order.index(
      (s['bsuite_id'], s['seed']))))
  if FLAGS.logging_mode == 'csv':
    print(f'Results: {os.path.join(FLAGS.save_path, FLAGS.agent)}')
  sys.stdout.flush()


def print_summary(summaries: Sequence[Dict[str, Any]]) -> None:
  """The summary block of the runs this command made (none: no block; every
  skipped id has said so)."""
  if summaries:
    print('\nSummary')
    for summary in summaries:
      print('  ' + format_summary(summary))


def run_jax_main(ids: Sequence[str], overrides: Dict[str, Any],
                 seeds: Sequence[int]) -> None:
  """`main` for --runner=jax: deep sea's ids one program per id with its
  seeds; every other id's (id, seed) units of one shape in one program."""
  if FLAGS.logging_mode != 'csv':
    raise app.UsageError('--runner=jax writes csv logs; drop --logging_mode.')
  start = time.time()
  batching = training.resolve_batching(FLAGS.batching)
  deep_sea = [i for i in ids
              if i.split(sweep.SEPARATOR)[0] in bsuite_jax.EXPERIMENTS]
  others = [i for i in ids if i not in deep_sea]
  if others:
    print(f'{len(others)} ids x {len(seeds)} seeds [{FLAGS.agent}] on the '
          'bsuite ports', flush=True)
    written = []

    def announce(record):
      written.append(record)
      print(f'[{time.time() - start:.0f} s] {record["identity"]["bsuite_id"]}'
            f' [{FLAGS.agent}] seed {record["identity"]["seed"]}: '
            f'{record["episodes"]} episodes, {record["steps"]} steps '
            f'({len(written)} written)', flush=True)

    suite_jax.run_ids(
        FLAGS.agent, others, seeds, FLAGS.save_path, overrides,
        num_episodes=FLAGS.num_episodes, batching=batching,
        progress_every=FLAGS.progress_every,
        checkpoint_seconds=FLAGS.checkpoint_seconds,
        overwrite=FLAGS.overwrite, mnist_dir=FLAGS.mnist_dir,
        units_per_program=FLAGS.units_per_program, announce=announce)
  for index, bsuite_id in enumerate(deep_sea):
    print(f'[{index + 1}/{len(deep_sea)}] {bsuite_id} [{FLAGS.agent}] seeds '
          f'{",".join(map(str, seeds))}', flush=True)
    records = bsuite_jax.run_id(
        FLAGS.agent, bsuite_id, seeds, FLAGS.save_path, overrides,
        max_episodes=FLAGS.num_episodes,
        stop_when_solved=FLAGS.stop_when_solved,
        episodes_per_call=FLAGS.episodes_per_call,
        batching=batching, progress_every=FLAGS.progress_every,
        checkpoint_seconds=FLAGS.checkpoint_seconds,
        overwrite=FLAGS.overwrite)
    for record in records:
      print(f'[{time.time() - start:.0f} s] {bsuite_id} [{FLAGS.agent}] seed '
            f'{record["identity"]["seed"]}: {bsuite_jax.describe(record)}',
            flush=True)
  print(f'Results: {os.path.join(FLAGS.save_path, FLAGS.agent)}')


def main(argv: Sequence[str]) -> None:
  del argv
  try:
    run_main()
  except unit_files.AnotherRunError as error:
    raise app.UsageError(str(error)) from None


def run_main() -> None:
  try:
    ids = resolve_ids(FLAGS.bsuite_id)
    results.check_output_folder(FLAGS.save_path, '--save_path')
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  check_runner_flags()
  overrides = hyperparameter_flags.user_overrides(FLAGS.agent)
  seeds = parse_seeds(FLAGS.seeds)
  if FLAGS.runner == 'jax':
    run_jax_main(ids, overrides, seeds or [FLAGS.seed])
    return
  if seeds is not None and FLAGS.checkpoint_every:
    raise app.UsageError('--checkpoint_every runs one seed at a time; '
                         'drop --seeds or --checkpoint_every.')
  run_loop_main(units.make_units(FLAGS.agent, ids, seeds or [FLAGS.seed],
                                 overrides), lockstep_seeds=seeds is not None)


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
