"""bsuite's deep sea ids on the jitted runner, logged as bsuite logs them.

  run_id('pe_dqn', 'deep_sea/5', seeds=[0, 1, 2], save_path='results',
         max_episodes=2000, stop_when_solved=True)

The seeds of one id train together in one compiled program
(`agents.training.make_train` on `pe_jax.envs.deep_sea`); each seed writes
the CSV that bsuite's `wrappers.Logging` with its csv logger would write:
same columns, same logarithmically spaced episodes, same file in the same
folder as `run_bsuite --seeds` (`<save_path>/<agent>/seed_K/`), so
`bsuite.logging.csv_load`, bsuite's analysis and `analyze_bsuite` read them
unchanged. The agent's horizon is bsuite's own (10,000 episodes: the
schedules of PE-DQN and IDS depend on it), whatever the budget, so stopping
early or resuming changes nothing it computes.

bsuite's deep sea analysis (`find_solution`) calls a size solved at the
first logged episode where `total_bad_episodes / episode < 0.9` (stochastic:
`< 0.8`, from episode 100 on) and scores the fraction of sizes solved before
`2^size + 100` episodes; the log after that point does not change the
score. With `stop_when_solved` a seed's log ends at that point. A seed that
is not solved runs to `max_episodes`; under bsuite's 10,000 it is reported
as censored ("unsolved at B episodes"), never as a finished unsolved run.

Each (agent, id, seed) is a unit: its finished log gets a JSON marker with
the run's identity, outcome, resolved config (defaults included) and
batching, and a killed run resumes from the seed's newest checkpoint
(orbax, every `checkpoint_seconds`). A finished unit whose config differs
from the one its agent resolves to today (a default changed since) is
refused, not skipped as done.
"""

import contextlib
import dataclasses
import functools
import json
import os
import shutil
import time
from typing import Any, Dict, List, Optional, Sequence

from bsuite import sweep
from bsuite.utils import wrappers
from dm_env import specs
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import agents
from agents import common
from agents import pure
from agents import training
from experiments.lib import checkpoints
from experiments.lib import interrupts
from experiments.lib import unit_files
from experiments.lib import units
from pe_jax.envs import deep_sea as jax_deep_sea

EXPERIMENTS = ('deep_sea', 'deep_sea_stochastic')
# bsuite's deep sea analyses: threshold on total_bad_episodes / episode, and
# the first episode they look at.
SOLVE_THRESHOLD = {'deep_sea': 0.9, 'deep_sea_stochastic': 0.8}
FIRST_SCORED_EPISODE = {'deep_sea': 1, 'deep_sea_stochastic': 100}
CHECKPOINTS = unit_files.CHECKPOINTS  # per seed folder; not results (gitignored)
COLUMNS = ('steps', 'episode', 'total_return', 'episode_len',
           'episode_return', 'total_bad_episodes', 'denoised_return')


def check_id(bsuite_id: str) -> None:
  """Raises ValueError unless the jitted runner has `bsuite_id`'s env."""
  if bsuite_id not in sweep.SETTINGS:
    raise ValueError(f'Unknown bsuite id {bsuite_id!r}.')
  if bsuite_id.split(sweep.SEPARATOR)[0] not in EXPERIMENTS:
    raise ValueError(f'The jax runner has {EXPERIMENTS} ids only, got '
                     f'{bsuite_id!r}; use --runner=bsuite for it.')


@functools.lru_cache(maxsize=None)
def log_episodes(last: int) -> np.ndarray:
  """The episodes <= `last` at which bsuite's `wrappers.Logging` logs."""
  return np.asarray([e for e in range(1, last + 1)
                     # pylint: disable-next=protected-access
                     if wrappers._logarithmic_logging(e)], np.int64)


def solved_episode(total_bad_episodes: np.ndarray,
                   experiment_name: str) -> Optional[int]:
  """bsuite's `find_solution` on one seed's log: the first logged episode
  whose average bad episodes is below the threshold, or None.

  Args:
    total_bad_episodes: [E] int, the counter after each episode 1..E.
    experiment_name: 'deep_sea' or 'deep_sea_stochastic'.
  """
  bad = np.asarray(total_bad_episodes)
  for episode in log_episodes(len(bad)):
    if (episode >= FIRST_SCORED_EPISODE[experiment_name] and
        bad[episode - 1] / episode < SOLVE_THRESHOLD[experiment_name]):
      return int(episode)
  return None


def log_rows(episode_returns: np.ndarray, total_bad_episodes: np.ndarray,
             denoised_returns: np.ndarray, size: int) -> List[Dict[str, Any]]:
  """The rows bsuite's `wrappers.Logging` writes for one seed's episodes.

  Args:
    episode_returns: [E] float, each episode's return.
    total_bad_episodes: [E] int, the counter after each episode.
    denoised_returns: [E] float, treasures so far after each episode.
    size: deep sea's N (every episode is N steps).
  """
  returns = np.asarray(episode_returns, np.float64)
  total_returns = np.cumsum(returns)
  rows = []
  for episode in log_episodes(len(returns)):
    i = episode - 1
    rows.append(dict(
        steps=int(episode * size), episode=int(episode),
        total_return=float(total_returns[i]), episode_len=int(size),
        episode_return=float(returns[i]),
        total_bad_episodes=int(total_bad_episodes[i]),
        denoised_return=float(denoised_returns[i])))
  return rows


csv_path = unit_files.bsuite_csv_path


marker_path = unit_files.marker_path  # one record for every runner


def identity(agent_name: str, bsuite_id: str, seed: int,
             overrides: Dict[str, Any]) -> Dict[str, Any]:
  """What makes two runs the same run (the budget and stop rule do not)."""
  return json.loads(json.dumps(dict(
      runner='jax', agent=agent_name, bsuite_id=bsuite_id, seed=int(seed),
      overrides=repr(sorted(overrides.items())),
      horizon=int(sweep.EPISODES[bsuite_id]))))


# The layout version of a config record, kept in the record itself under
# `SCHEMA_KEY`. A change to the agents' config fields (one added with a
# value that computes what records without it computed, or one removed at
# the setting the code kept) bumps it and adds one step to
# `upgraded_config`, so a record of any version compares with today's.
CONFIG_SCHEMA = 2
SCHEMA_KEY = '_schema'

# Version 1 (records without `SCHEMA_KEY`) to 2: the fields added since,
# each with the value that computes what a record without it computed, and
# the fields removed since, each at the setting the code kept.
_V2_ADDED = {'bonus_v_min': '0.0', 'initializer': "'he'",
             'dltv_clock': "'steps'", 'dltv_bonus': "'std'",
             'epsilon_schedule': '()', 'epsilon_schedule_episodes': '()',
             'warmup_policy': "'greedy'", 'rho_clip': 'None',
             'update_period': '1', 'adam_b2': '0.999',
             'target_prior': "'shared'"}
_V2_REMOVED = {'bonus_bootstrap': "'explore'", 'episodic_bonus': 'True',
               'intrinsic_signal': "'w1'", 'center_intrinsic': 'False',
               'rectify_intrinsic': 'False'}


def config_record(config) -> Dict[str, str]:
  """Every field of an agent's resolved config, as text (JSON-able): the
  values a unit was trained with, defaults included, and the record's
  layout version (`SCHEMA_KEY`)."""
  record = {field.name: repr(getattr(config, field.name))
            for field in dataclasses.fields(config)}
  record[SCHEMA_KEY] = repr(CONFIG_SCHEMA)
  return record


def upgraded_config(recorded: Dict[str, str],
                    fields: Optional[Sequence[str]] = None) -> Dict[str, str]:
  """A config record of any version in today's layout (`CONFIG_SCHEMA`).

  Version 1 to 2: a field added since is filled with its old behaviour's
  value where `fields` (the agent's fields today; all added ones if None)
  has it; a field removed since is dropped if at the setting the code kept,
  and kept otherwise, so that it reads as a change.
  """
  record = dict(recorded)
  version = int(record.pop(SCHEMA_KEY, '1'))
  if version > CONFIG_SCHEMA:
    raise unit_files.AnotherRunError(
        f'a config record of layout version {version}, newer '
        f'than this code\'s {CONFIG_SCHEMA}: update pe_jax.')
  if version < 2:
    for name, value in _V2_ADDED.items():
      if name not in record and (fields is None or name in fields):
        record[name] = value
    for name, value in _V2_REMOVED.items():
      if record.get(name) == value:
        del record[name]
  record[SCHEMA_KEY] = repr(CONFIG_SCHEMA)
  return record


def config_changes(recorded: Optional[Dict[str, str]],
                   current: Dict[str, str]) -> List[str]:
  """'field: recorded -> current' for each field that differs, after
  bringing the record to today's layout (`upgraded_config`): a field only
  one side has is a change. A marker without a config (written before
  configs were recorded) has none."""
  if recorded is None:
    return []
  recorded = upgraded_config(recorded, tuple(current))
  missing = '(not recorded)'
  return [f'{name}: {recorded.get(name, missing)} -> '
          f'{current.get(name, "(no such field today)")}'
          for name in sorted(set(recorded) | set(current))
          if recorded.get(name) != current.get(name)]


def check_same_run(record: Dict[str, Any], wanted: Dict[str, Any],
                   config: Dict[str, str], agent_name: str,
                   path: str) -> None:
  """Refuses (AnotherRunError) a finished unit's `record` at `path` that is
  another run than `wanted` (identity) or trained `agent_name` with other
  hyperparameters than `config` (today's resolved ones): every jitted
  runner's check before it skips a unit."""
  if record.get('identity') != wanted:
    raise unit_files.AnotherRunError(
        f'{path} holds another run ({record.get("identity")}), not '
        f'{wanted}; use --overwrite to replace it or another --save_path.')
  try:
    changes = config_changes(record.get('config'), config)
  except unit_files.AnotherRunError as error:
    raise unit_files.AnotherRunError(f'{path} holds {error}') from None
  if changes:
    raise unit_files.AnotherRunError(
        f'{path} was trained with other hyperparameters than '
        f'{agent_name}\'s today ({"; ".join(changes)}): a default changed '
        'since. Use --overwrite to rerun it, or another --save_path.')


def checkpoint_differences(found: Dict[str, Any],
                           wanted: Dict[str, Any]) -> List[str]:
  """How a checkpoint folder's recorded identity differs from this run's:
  the config by `config_changes` (an added field at its old value is the
  same run), every other entry by equality."""
  differs = [f'{name}: {found.get(name)!r} -> {wanted.get(name)!r}'
             for name in sorted(set(found) | set(wanted))
             if name != 'config' and found.get(name) != wanted.get(name)]
  return differs + config_changes(found.get('config'), wanted['config'])


def read_marker(bsuite_id: str, directory: str) -> Optional[Dict[str, Any]]:
  """A jitted-runner unit's record (`unit_files.read_record`), or None when it
  has none, it cannot be read or another runner wrote it (said in one line;
  the unit is run again)."""
  record = unit_files.read_record(bsuite_id, directory)
  if record is None:
    return None
  if unit_files.record_runner(record) != 'jax' or 'solved_episode' not in record:
    print(f'  {marker_path(bsuite_id, directory)} is not a unit record of '
          '--runner=jax; its unit is run again.', flush=True)
    return None
  return record


def is_done(marker: Optional[Dict[str, Any]], max_episodes: int) -> bool:
  """A unit needs no more work: solved, or run to the budget asked."""
  if marker is None:
    return False
  return marker['solved_episode'] is not None or (
      marker['episodes'] >= max_episodes)


def write_unit(bsuite_id: str, directory: str, rows: List[Dict[str, Any]],
               record: Dict[str, Any]) -> None:
  """Writes a unit's log, then its marker (each atomically)."""
  os.makedirs(directory, exist_ok=True)
  path = csv_path(bsuite_id, directory)
  # As bsuite's csv logger writes it: pandas, rows in order, no index.
  pd.DataFrame(list(rows), columns=list(COLUMNS)).to_csv(path + '.tmp',
                                                         index=False)
  os.replace(path + '.tmp', path)
  unit_files.write_record(bsuite_id, directory, record)


def _remove_if_empty(folder: str) -> None:
  with contextlib.suppress(OSError):  # not empty: other ids' checkpoints
    os.rmdir(folder)


def _seed_slice(tree, index: int):
  return jax.tree_util.tree_map(lambda x: x[index], tree)


def _stack(trees):
  return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *trees)


def run_id(agent_name: str, bsuite_id: str, seeds: Sequence[int],
           save_path: str, overrides: Optional[Dict[str, Any]] = None,
           max_episodes: Optional[int] = None, stop_when_solved: bool = True,
           episodes_per_call: int = 50, batching: str = 'map',
           progress_every: float = 30.0, checkpoint_seconds: float = 300.0,
           overwrite: bool = False) -> List[Dict[str, Any]]:
  """Trains `agent_name` on `bsuite_id` for each seed; one summary each.

  Args:
    agent_name: a registered agent.
    bsuite_id: a `deep_sea/*` or `deep_sea_stochastic/*` id.
    seeds: agent seeds; seed K logs to `<save_path>/<agent>/seed_K/` (its
      environment's randomness is drawn from the same key).
    save_path: the results folder, as run_bsuite's.
    overrides: hyperparameters set by the user.
    max_episodes: budget per seed (default and cap: bsuite's 10,000).
    stop_when_solved: end a seed's run at the log point where bsuite's
      analysis calls it solved.
    episodes_per_call: episodes per compiled call (a seed stops at the end
      of the call in which it is solved; its log ends at the solve).
    batching: how seeds share the program (`training.over_agents`).
    progress_every: seconds between progress lines (0: none).
    checkpoint_seconds: seconds between checkpoints of unfinished seeds.
    overwrite: redo units that are done, and replace a unit of another run
      (otherwise an error).
  """
  check_id(bsuite_id)
  overrides = dict(overrides or {})
  horizon = sweep.EPISODES[bsuite_id]
  budget = min(max_episodes or horizon, horizon)
  if budget < 1:
    raise ValueError(f'max_episodes must be >= 1, got {max_episodes}.')
  if not seeds or len(set(seeds)) != len(seeds):
    raise ValueError(f'seeds must be distinct, got {list(seeds)}.')
  label = f'{bsuite_id} [{agent_name}]'
  directories = {s: units.seed_folder(save_path, agent_name, s)
                 for s in seeds}
  with contextlib.ExitStack() as held:
    for seed in seeds:
      held.enter_context(unit_files.unit_lock(bsuite_id, directories[seed],
                                    f'{label} seed {seed}'))
    return _run_locked(agent_name, bsuite_id, seeds, directories, label,
                       overrides, budget, horizon, stop_when_solved,
                       episodes_per_call, batching, progress_every,
                       checkpoint_seconds, overwrite)


def lock_path(bsuite_id: str, directory: str) -> str:
  """The lock a process holds while it runs the unit (`unit_files.unit_lock`)."""
  return unit_files.unit_lock_path(bsuite_id, directory)


def build_agent(agent_name: str, bsuite_id: str, overrides: Dict[str, Any],
                horizon: int) -> pure.PureAgent:
  """The pure agent a unit of `bsuite_id` trains (return range and one-hot
  torso of the JAX deep sea included)."""
  experiment_name = bsuite_id.split(sweep.SEPARATOR)[0]
  size = sweep.SETTINGS[bsuite_id]['size']
  kwargs = agents.for_jax_deep_sea(agent_name, overrides, experiment_name,
                                   size)
  return agents.make_pure(agent_name,
                          specs.Array((size, size), np.uint8, 'observation'),
                          specs.DiscreteArray(2, name='action'),
                          num_episodes=horizon, **kwargs)


def _run_locked(agent_name, bsuite_id, seeds, directories, label, overrides,
                budget, horizon, stop_when_solved, episodes_per_call,
                batching, progress_every, checkpoint_seconds, overwrite):
  """`run_id` once every unit's lock is held."""
  experiment_name = bsuite_id.split(sweep.SEPARATOR)[0]
  settings = sweep.SETTINGS[bsuite_id]
  size, mapping_seed = settings['size'], settings['mapping_seed']
  # Built first (it compiles nothing): its resolved config, defaults
  # included, is what a finished unit must have been trained with.
  agent = build_agent(agent_name, bsuite_id, overrides, horizon)
  config = config_record(agent.config)
  summaries, todo = [], []
  for seed in seeds:
    # directories[seed] is <save_path>/<agent>/seed_K.
    unit_files.check_one_layout(
        bsuite_id, os.path.dirname(os.path.dirname(directories[seed])),
        agent_name, seed, directories[seed])
    unit_files.check_no_other_runner(bsuite_id, directories[seed], 'jax',
                                  overwrite)
    marker = read_marker(bsuite_id, directories[seed])
    wanted = identity(agent_name, bsuite_id, seed, overrides)
    if marker is not None and not overwrite:
      check_same_run(marker, wanted, config, agent_name,
                     marker_path(bsuite_id, directories[seed]))
      mismatch = unit_files.csv_mismatch(
          csv_path(bsuite_id, directories[seed]), marker,
          unit_files.last_log_episode(marker['episodes']))
      if mismatch:
        print(f'  {label} seed {seed}: {mismatch}; running it again.',
              flush=True)
      elif is_done(marker, budget):
        print(f'  {label} seed {seed}: done ({describe(marker)}), skipped '
              '(--overwrite to redo).', flush=True)
        # A run killed after its record was written leaves its checkpoints.
        shutil.rmtree(units.checkpoint_folder(bsuite_id, directories[seed]),
                      ignore_errors=True)
        summaries.append(marker)
        continue
    todo.append(seed)
  if not todo:
    return summaries

  env = jax_deep_sea.DeepSea(size, deterministic=experiment_name == 'deep_sea')
  train = training.make_train(agent, env, episodes_per_call=episodes_per_call)
  mapping = jnp.asarray(jax_deep_sea.bsuite_action_mapping(size,
                                                           mapping_seed))
  init = pure.jit_init(jax.vmap(train.init))
  run_chunk = jax.jit(training.over_agents(train.run, batching),
                      donate_argnums=0)

  # Per seed: the training state and the per-episode statistics so far.
  carries, stats, stores = {}, {}, {}
  resumed_at = {}  # Per seed: the episode its checkpoint resumed at.
  fresh = init(jnp.stack([jax.random.PRNGKey(s) for s in todo]),
               jnp.stack([mapping] * len(todo)))
  for index, seed in enumerate(todo):
    carries[seed] = _seed_slice(fresh, index)
    stats[seed] = np.zeros((3, 0))
    folder = units.checkpoint_folder(bsuite_id, directories[seed])
    if overwrite:
      shutil.rmtree(folder, ignore_errors=True)
    stores[seed] = checkpoints.ChunkCheckpoints(folder, dict(
        identity(agent_name, bsuite_id, seed, overrides),
        episodes_per_call=episodes_per_call, config=config,
        batching=batching), differences=checkpoint_differences)
    restored = stores[seed].restore_latest(
        lambda step, s=seed: {'carry': carries[s],
                              'stats': np.zeros((3, step))})
    if restored is not None:
      step, tree = restored
      carries[seed], stats[seed] = tree['carry'], np.asarray(tree['stats'])
      resumed_at[seed] = step
      print(f'  {label} seed {seed}: resuming at episode {step} '
            f'({stores[seed].directory})', flush=True)
  del fresh

  start = last_report = last_save = time.time()
  steps_run = 0
  active = list(todo)
  records = {}
  while active:
    interrupts.raise_if_requested()
    carry, chunk_stats = interrupts.call_until_ready(
        run_chunk, _stack([carries[s] for s in active]))
    steps_run += len(active) * episodes_per_call * size
    # Before anything is saved: a diverged seed keeps its last good
    # checkpoint and is never marked done.
    common.check_finite_per_agent(
        carry, [f'{label} seed {s}, episode '
                f'{stats[s].shape[1] + episodes_per_call}' for s in active])
    new_stats = np.stack([np.asarray(chunk_stats.episode_return, np.float64),
                          np.asarray(chunk_stats.total_bad_episodes),
                          np.asarray(chunk_stats.denoised_return)], axis=1)
    still_active = []
    for index, seed in enumerate(active):
      carries[seed] = _seed_slice(carry, index)
      stats[seed] = np.concatenate([stats[seed], new_stats[index]], axis=1)
      episodes_done = stats[seed].shape[1]
      solved = solved_episode(stats[seed][1], experiment_name)
      if (solved is not None and stop_when_solved) or (
          episodes_done >= budget):
        last = solved if (solved is not None and stop_when_solved) else budget
        elapsed = time.time() - start
        # `config` and `batching` say how to retrain it bit for bit
        # (PE-DQN's float results differ between 'map' and 'vmap').
        record = dict(
            identity=identity(agent_name, bsuite_id, seed, overrides),
            config=config, batching=batching, size=size,
            solved_episode=solved if solved and solved <= last else None,
            episodes=int(last),
            censored=bool(solved is None and last < horizon),
            stop_when_solved=stop_when_solved,
            regret_at_end=int(stats[seed][1][last - 1]),
            first_treasure_episode=first_treasure(stats[seed][2][:last]),
            # `seconds` is this process's: a resumed unit's earlier
            # episodes were paid for by the process that was killed.
            seconds=round(elapsed, 1),
            resumed_at_episode=int(resumed_at.get(seed, 0)),
            env_steps_per_second=round(steps_run / max(elapsed, 1e-9), 1),
            # The seeds trained in this program: its cost is shared.
            run_seeds=list(todo),
            # Float results differ between CPU and GPU builds of XLA.
            device=device_name())
        write_unit(bsuite_id, directories[seed],
                   log_rows(*stats[seed][:, :last], size), record)
        stores[seed].remove()
        _remove_if_empty(os.path.join(directories[seed], CHECKPOINTS))
        records[seed] = record
        print(f'  {label} seed {seed}: {describe(record)}', flush=True)
      else:
        still_active.append(seed)
    active = still_active
    del carry
    now = time.time()
    if active and now - last_save >= checkpoint_seconds:
      for seed in active:
        stores[seed].save(stats[seed].shape[1],
                          {'carry': carries[seed], 'stats': stats[seed]})
      last_save = now
    if active and progress_every and now - last_report >= progress_every:
      last_report = now
      done = ', '.join(f'seed {s}: {stats[s].shape[1]} ep., regret '
                       f'{int(stats[s][1][-1])}, first find '
                       f'{first_treasure(stats[s][2]) or "none"}'
                       for s in active)
      print(f'  {label} {done}; {steps_run / (now - start):.0f} env '
            'steps/s (all seeds)', flush=True)
  summaries.extend(records[s] for s in todo)
  return summaries


def device_name() -> str:
  """Where this process trains: 'cpu', or platform and kind of its first
  accelerator ('gpu: NVIDIA H200'). Records without it were trained on CPU."""
  device = jax.devices()[0]
  if device.platform == 'cpu':
    return 'cpu'
  return f'{device.platform}: {device.device_kind}'


def first_treasure(denoised_returns: np.ndarray) -> Optional[int]:
  """1-based first episode that reached the treasure, or None.

  Args:
    denoised_returns: [E], treasures found so far after each episode.
  """
  found = np.nonzero(np.asarray(denoised_returns) > 0)[0]
  return int(found[0]) + 1 if len(found) else None


def describe(record: Dict[str, Any]) -> str:
  """One line: solved at episode E, or unsolved at B (censored) / final."""
  if record['solved_episode'] is not None:
    text = f'solved at episode {record["solved_episode"]}'
  elif record['censored']:
    text = f'unsolved at {record["episodes"]} episodes (censored)'
  else:
    text = f'unsolved after all {record["episodes"]} episodes'
  return (f'{text}, regret {record["regret_at_end"]}, first treasure '
          f'{record["first_treasure_episode"]}')
