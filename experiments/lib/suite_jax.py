"""Any bsuite id on the jitted runner, over the exact ports, logged as bsuite
logs it.

  run_id('dqn', 'catch/3', seeds=[0, 1, 2], save_path='results')

The seeds of one id train together in one compiled program
(`agents.training.make_train_bsuite` on `pe_jax.envs.load(id, seed)`), to
bsuite's episode count; each seed writes the CSV that the bsuite-loop
runner (`run_bsuite --runner=bsuite --seed=K`) writes for the same agent,
id and seed: the port is bsuite's environment bit for bit and the agent is
the same pure functions, so the rows are the same. Units are as deep sea's
(`bsuite_jax`): a record beside each finished log (identity, resolved
config, the log's fingerprint), a lock while running, checkpoints of the
carry every `checkpoint_seconds` and a resume from the newest. Deep sea's
ids keep their own runner (`bsuite_jax`, with its early stop at bsuite's
solve rule); this one takes every other id.
"""

import contextlib
import json
import os
import shutil
import time
from typing import Any, Dict, List, Optional, Sequence

from bsuite import sweep
from dm_env import specs
import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import agents
from agents import bsuite_settings
from agents import common
from agents import training
from experiments.lib import bsuite_jax
from experiments.lib import checkpoints
from experiments.lib import interrupts
from experiments.lib import unit_files
from experiments.lib import units
from pe_jax import envs
from pe_jax.envs import suite

BASE_COLUMNS = ('steps', 'episode', 'total_return', 'episode_len',
                'episode_return')
# bsuite counters that start as the int 0 and become floats at their first
# increment (`+= 1.`, `+= 2.`): logged as 0 until then, as bsuite logs them.
INT_UNTIL_INCREMENTED = {'deep_sea': ('denoised_return',),
                         'deep_sea_stochastic': ('denoised_return',),
                         'memory_len': ('total_regret',),
                         'memory_size': ('total_regret',),
                         'umbrella_length': ('total_regret',),
                         'umbrella_distract': ('total_regret',)}
INTEGER_COUNTERS = ('total_perfect', 'total_bad_episodes')


def check_id(bsuite_id: str) -> None:
  if bsuite_id not in sweep.SETTINGS:
    raise ValueError(f'Unknown bsuite id {bsuite_id!r}.')


def identity(agent_name: str, bsuite_id: str, seed: int,
             overrides: Dict[str, Any], episodes: int) -> Dict[str, Any]:
  """What makes two runs the same run (the episodes run are the agent's
  horizon, as in the bsuite-loop runner)."""
  return json.loads(json.dumps(dict(
      runner='jax', agent=agent_name, bsuite_id=bsuite_id, seed=int(seed),
      overrides=repr(sorted(overrides.items())), horizon=int(episodes),
      **units.environment_identity(bsuite_id, seed))))


def build_agent(agent_name: str, bsuite_id: str, env,
                overrides: Dict[str, Any], horizon: int):
  """The pure agent the bsuite-loop runner builds for `bsuite_id`."""
  kwargs = bsuite_settings.for_bsuite_id(agent_name, bsuite_id, overrides)
  return agents.make_pure(
      agent_name, specs.Array(env.observation_shape, np.float32,
                              'observation'),
      specs.DiscreteArray(env.num_actions, name='action'),
      num_episodes=horizon, **kwargs)


def log_rows(log: training.EpisodeLog, episodes: int, experiment_name: str,
             info_names: Sequence[str]) -> List[Dict[str, Any]]:
  """bsuite's logged rows of one seed's first `episodes` episodes, the
  environment's counters in `bsuite_info()`'s order (a pytree's dict is
  sorted by key)."""
  rows = []
  int_until = INT_UNTIL_INCREMENTED.get(experiment_name, ())
  for episode in bsuite_jax.log_episodes(episodes):
    i = episode - 1
    row = dict(steps=int(log.steps[i]), episode=int(episode),
               total_return=float(log.total_return[i]),
               episode_len=int(log.episode_len[i]),
               episode_return=float(log.episode_return[i]))
    for name in info_names:
      value = log.info[name][i]
      if name in INTEGER_COUNTERS or (name in int_until and value == 0):
        row[name] = int(value)
      else:
        row[name] = float(value)
    rows.append(row)
  return rows


def write_unit(bsuite_id: str, directory: str, rows: List[Dict[str, Any]],
               record: Dict[str, Any]) -> None:
  """The log as bsuite's csv logger writes it, then the record."""
  os.makedirs(directory, exist_ok=True)
  path = unit_files.bsuite_csv_path(bsuite_id, directory)
  pd.DataFrame(rows).to_csv(path + '.tmp', index=False)
  os.replace(path + '.tmp', path)
  unit_files.write_record(bsuite_id, directory, record)


def _unit_slice(tree, index: int):
  return jax.tree_util.tree_map(lambda x: x[index], tree)


def _stack(trees):
  with jax.enable_x64(True):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *trees)


def run_id(agent_name: str, bsuite_id: str, seeds: Sequence[int],
           save_path: str, **options) -> List[Dict[str, Any]]:
  """`run_ids` of one id."""
  return run_ids(agent_name, [bsuite_id], seeds, save_path, **options)


def run_ids(agent_name: str, bsuite_ids: Sequence[str], seeds: Sequence[int],
            save_path: str, overrides: Optional[Dict[str, Any]] = None,
            num_episodes: Optional[int] = None, steps_per_call: int = 2000,
            batching: str = 'map', progress_every: float = 30.0,
            checkpoint_seconds: float = 300.0, overwrite: bool = False,
            mnist_dir: Optional[str] = None, units_per_program: int = 0,
            announce=None) -> List[Dict[str, Any]]:
  """Trains `agent_name` on every id of `bsuite_ids` with every seed; one
  record per (id, seed) unit, in that order.

  Units whose ports share a program (`program_key`) and whose agents have
  the same resolved config and episode count train in one compiled program,
  `units_per_program` at a time (0: all); each writes the log it would
  write alone.

  Args:
    agent_name: a registered agent.
    bsuite_ids: bsuite ids, deep sea's excepted (`bsuite_jax`).
    seeds: agent seeds (the environment is seeded as the bsuite-loop runner
      seeds it); seed K logs to `<save_path>/<agent>/seed_K/`.
    save_path: the results folder.
    overrides: hyperparameters set by the user.
    num_episodes: episodes per unit, and the agent's horizon (default
      bsuite's), as `run_bsuite --num_episodes`.
    steps_per_call: environment steps per compiled call.
    batching: how units share the program (`training.over_agents`).
    progress_every: seconds between progress lines (0: none).
    checkpoint_seconds: seconds between checkpoints.
    overwrite: redo finished units and replace another run's.
    mnist_dir: the folder of MNIST's files (MNIST ids).
    units_per_program: most units in one program (0: no limit).
    announce: called with each finished unit's record as it is written.
  """
  for bsuite_id in bsuite_ids:
    check_id(bsuite_id)
  if not isinstance(units_per_program, int) or units_per_program < 0:
    raise ValueError('units_per_program must be an int >= 0, got '
                     f'{units_per_program!r}.')
  overrides = dict(overrides or {})
  episodes = {}
  for bsuite_id in bsuite_ids:
    horizon = sweep.EPISODES[bsuite_id]
    episodes[bsuite_id] = num_episodes or horizon
    if (not isinstance(episodes[bsuite_id], int)
        or not 1 <= episodes[bsuite_id] <= horizon):
      raise ValueError(f'num_episodes must be an int in [1, {horizon}] '
                       f'({bsuite_id}), got {num_episodes!r}.')
  all_units = units.make_units(agent_name, bsuite_ids, seeds, overrides)
  directories = {u: u.directory(save_path) for u in all_units}
  labels = {u: u.label for u in all_units}
  with contextlib.ExitStack() as held:
    for unit in all_units:
      held.enter_context(unit_files.unit_lock(unit.bsuite_id, directories[unit],
                                           labels[unit]))
    records, groups = {}, {}
    for unit in all_units:
      unit_files.check_one_layout(unit.bsuite_id, save_path, agent_name,
                               unit.seed, directories[unit])
      port = envs.load(unit.bsuite_id, seed=unit.seed, mnist_dir=mnist_dir)
      agent = build_agent(agent_name, unit.bsuite_id, port, overrides,
                          episodes[unit.bsuite_id])
      config = bsuite_jax.config_record(agent.config)
      record = _finished_record(agent_name, unit, directories[unit],
                                labels[unit], overrides,
                                episodes[unit.bsuite_id], config, overwrite)
      if record is not None:
        records[unit] = record
        continue
      key = (port.program_key, repr(sorted(config.items())),
             episodes[unit.bsuite_id])
      groups.setdefault(key, []).append((unit, port, agent, config))
    programs = [members[first:first + (units_per_program or len(members))]
                for members in groups.values()
                for first in range(0, len(members),
                                   units_per_program or len(members))]
    for number, members in enumerate(programs, 1):
      records.update(_run_program(
          agent_name, members, directories, labels, overrides,
          episodes[members[0][0].bsuite_id], steps_per_call, batching,
          progress_every, checkpoint_seconds, overwrite, announce,
          f'program {number}/{len(programs)}'))
  return [records[u] for u in all_units]


def _finished_record(agent_name, unit, directory, label, overrides, episodes,
                     config, overwrite):
  """The record of `unit` when its log is finished and the same run's (and
  not `overwrite`); None: to run. Refuses another run's folder."""
  unit_files.check_no_other_runner(unit.bsuite_id, directory, 'jax', overwrite)
  record = unit_files.read_record(unit.bsuite_id, directory)
  if record is None or overwrite:
    return None
  wanted = identity(agent_name, unit.bsuite_id, unit.seed, overrides,
                    episodes)
  bsuite_jax.check_same_run(record, wanted, config, agent_name,
                            unit_files.marker_path(unit.bsuite_id, directory))
  mismatch = unit_files.csv_mismatch(
      unit_files.bsuite_csv_path(unit.bsuite_id, directory), record,
      unit_files.last_log_episode(record['episodes']))
  if mismatch:
    print(f'  {label}: {mismatch}; running it again.', flush=True)
    return None
  print(f'  {label}: done ({record["episodes"]} episodes), skipped '
        '(--overwrite to redo).', flush=True)
  # A run killed after its record was written leaves its checkpoints.
  shutil.rmtree(units.checkpoint_folder(unit.bsuite_id, directory),
                ignore_errors=True)
  return record


def remaining_seconds(done, steps, episodes: int, steps_per_second: float
                      ) -> float:
  """Seconds a program's units need to reach `episodes`, at the program's
  `steps_per_second` (all units together): each unfinished unit's
  remaining episodes at its own mean steps per episode so far. [U] `done`
  episodes and `steps` of each unit; inf before any episode or step rate."""
  done, steps = np.asarray(done, np.float64), np.asarray(steps, np.float64)
  active = done < episodes
  if not active.any():
    return 0.0
  if steps_per_second <= 0 or (done[active] <= 0).any():
    return float('inf')
  left = (episodes - done[active]) * steps[active] / done[active]
  return float(left.sum() / steps_per_second)


def _duration(seconds: float) -> str:
  """'about 35 min', 'about 2.4 h', 'unknown' (inf)."""
  if not np.isfinite(seconds):
    return 'unknown'
  if seconds < 5400:
    return f'about {max(1, round(seconds / 60))} min'
  return f'about {seconds / 3600:.1f} h'


def _run_program(agent_name, members, directories, labels, overrides,
                 episodes, steps_per_call, batching, progress_every,
                 checkpoint_seconds, overwrite, announce, program='program'):
  """Trains `members` ((unit, port, agent, config), one program's) to the
  end; {unit: record}. `program` names it in progress lines
  ('program 2/5')."""
  group = [m[0] for m in members]
  _, env, agent, config = members[0]
  experiment_name = group[0].experiment
  train = training.make_train_bsuite(agent, env, episodes, steps_per_call)
  init = jax.jit(jax.vmap(train.init))
  run_chunk = jax.jit(training.over_agents(train.run, batching),
                      donate_argnums=0)
  fresh = init(jnp.stack([jax.random.PRNGKey(u.seed) for u in group]),
               suite.stack([port.init() for _, port, _, _ in members]))
  carries, stores, resumed_at = [], {}, {}
  for index, unit in enumerate(group):
    carry = _unit_slice(fresh, index)
    folder = units.checkpoint_folder(unit.bsuite_id, directories[unit])
    if overwrite:
      shutil.rmtree(folder, ignore_errors=True)
    stores[unit] = checkpoints.ChunkCheckpoints(folder, dict(
        identity(agent_name, unit.bsuite_id, unit.seed, overrides, episodes),
        episodes=episodes, steps_per_call=steps_per_call, config=config,
        batching=batching), differences=bsuite_jax.checkpoint_differences)
    # Restored with x64 on: the ports' float64 leaves stay float64.
    with jax.enable_x64(True):
      restored = stores[unit].restore_latest(lambda step, c=carry: c)
    if restored is not None:
      resumed_at[unit], carry = restored
      print(f'  {labels[unit]}: resuming at step {resumed_at[unit]} '
            f'({stores[unit].directory})', flush=True)
    carries.append(carry)
  carry = _stack(carries)
  del fresh, carries
  print(f'  {program}: {len(group)} unit{"s" if len(group) > 1 else ""}, '
        f'{", ".join(u.bsuite_id for u in group[:3])}'
        f'{" ..." if len(group) > 3 else ""} [{agent_name}]', flush=True)

  start = last_report = last_save = time.time()
  first_steps = np.asarray(carry.steps)
  finished = {}
  while len(finished) < len(group):
    interrupts.raise_if_requested()
    carry = interrupts.call_until_ready(run_chunk, carry)
    steps, done = np.asarray(carry.steps), np.asarray(carry.episodes)
    common.check_finite_per_agent(
        carry.agent, [f'{labels[u]}, episode {int(done[i])}'
                      for i, u in enumerate(group)])
    steps_run = int(np.sum(steps - first_steps))
    for index, unit in enumerate(group):
      if unit in finished or done[index] < episodes:
        continue
      log = jax.tree_util.tree_map(lambda x, i=index: np.asarray(x[i]),
                                   carry.log)
      elapsed = time.time() - start
      record = dict(
          identity=identity(agent_name, unit.bsuite_id, unit.seed, overrides,
                            episodes),
          config=config, batching=batching, episodes=int(episodes),
          steps=int(steps[index]), seconds=round(elapsed, 1),
          resumed_at_step=int(resumed_at.get(unit, 0)),
          env_steps_per_second=round(steps_run / max(elapsed, 1e-9), 1),
          run_seeds=sorted({u.seed for u in group}),
          device=bsuite_jax.device_name())
      if len(group) > 1:
        record['program_units'] = len(group)
      write_unit(unit.bsuite_id, directories[unit],
                 log_rows(log, episodes, experiment_name, env.info_names),
                 record)
      stores[unit].remove()
      finished[unit] = record
      print(f'  {labels[unit]}: {episodes} episodes, {record["steps"]} '
            f'steps, total return {float(log.total_return[episodes - 1]):.1f}',
            flush=True)
      if announce is not None:
        announce(record)
    now = time.time()
    active = [i for i, u in enumerate(group) if u not in finished]
    if active and now - last_save >= checkpoint_seconds:
      for index in active:
        stores[group[index]].save(int(steps[index]),
                                  _unit_slice(carry, index))
      last_save = now
    if active and progress_every and now - last_report >= progress_every:
      last_report = now
      rate = steps_run / (now - start)
      left = remaining_seconds(done, steps, episodes, rate)
      print(f'  [{agent_name}] {program}: {len(finished)}/{len(group)} '
            'units done; '
            + ', '.join(f'{group[i].bsuite_id} seed {group[i].seed}: episode '
                        f'{int(done[i])}/{episodes}' for i in active[:3])
            + (' ...' if len(active) > 3 else '')
            + f'; {rate:.0f} env steps/s (all units); {_duration(left)} '
            'left', flush=True)
  return finished
