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
from agents import common
from agents import return_ranges
from agents import training
from experiments.lib import bsuite_jax
from experiments.lib import checkpoints
from experiments.lib import interrupts
from experiments.lib import results
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
      overrides=repr(sorted(overrides.items())), horizon=int(episodes))))


def agent_settings(agent_name: str, bsuite_id: str,
                   overrides: Dict[str, Any]) -> Dict[str, Any]:
  """`overrides` with the agent's settings for `bsuite_id` (return range,
  deep sea's prior scale), as the bsuite-loop runner's `for_bsuite_id`."""
  experiment_name, settings = return_ranges.experiment_of(bsuite_id)
  return agents.for_experiment(agent_name, overrides, experiment_name,
                               **settings)


def build_agent(agent_name: str, bsuite_id: str, env,
                overrides: Dict[str, Any], horizon: int):
  """The pure agent the bsuite-loop runner builds for `bsuite_id`."""
  kwargs = agent_settings(agent_name, bsuite_id, overrides)
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
  path = results.bsuite_csv_path(bsuite_id, directory)
  pd.DataFrame(rows).to_csv(path + '.tmp', index=False)
  os.replace(path + '.tmp', path)
  results.write_record(bsuite_id, directory, record)


def _checkpoint_folder(bsuite_id: str, directory: str) -> str:
  return os.path.join(directory, results.CHECKPOINTS,
                      bsuite_id.replace(sweep.SEPARATOR, '-'))


def _seed_slice(tree, index: int):
  return jax.tree_util.tree_map(lambda x: x[index], tree)


def _stack(trees):
  with jax.enable_x64(True):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *trees)


def run_id(agent_name: str, bsuite_id: str, seeds: Sequence[int],
           save_path: str, overrides: Optional[Dict[str, Any]] = None,
           num_episodes: Optional[int] = None, steps_per_call: int = 2000,
           batching: str = 'map', progress_every: float = 30.0,
           checkpoint_seconds: float = 300.0, overwrite: bool = False,
           mnist_dir: Optional[str] = None) -> List[Dict[str, Any]]:
  """Trains `agent_name` on `bsuite_id` for each seed; one record each.

  Args:
    agent_name: a registered agent.
    bsuite_id: any bsuite id.
    seeds: agent seeds (the environment is seeded as the bsuite-loop runner
      seeds it); seed K logs to `<save_path>/<agent>/seed_K/`.
    save_path: the results folder.
    overrides: hyperparameters set by the user.
    num_episodes: episodes per seed, and the agent's horizon (default
      bsuite's), as `run_bsuite --num_episodes`.
    steps_per_call: environment steps per compiled call.
    batching: how seeds share the program (`training.over_agents`).
    progress_every: seconds between progress lines (0: none).
    checkpoint_seconds: seconds between checkpoints.
    overwrite: redo finished units and replace another run's.
    mnist_dir: the folder of MNIST's files (MNIST ids).
  """
  check_id(bsuite_id)
  overrides = dict(overrides or {})
  horizon = sweep.EPISODES[bsuite_id]
  episodes = num_episodes or horizon
  if not isinstance(episodes, int) or not 1 <= episodes <= horizon:
    raise ValueError(f'num_episodes must be an int in [1, {horizon}], got '
                     f'{num_episodes!r}.')
  if not seeds or len(set(seeds)) != len(seeds):
    raise ValueError(f'seeds must be distinct, got {list(seeds)}.')
  label = f'{bsuite_id} [{agent_name}]'
  directories = {s: os.path.join(save_path, agent_name, f'seed_{s}')
                 for s in seeds}
  with contextlib.ExitStack() as held:
    for seed in seeds:
      held.enter_context(results.unit_lock(bsuite_id, directories[seed],
                                           f'{label} seed {seed}'))
    return _run_locked(agent_name, bsuite_id, list(seeds), directories,
                       label, overrides, episodes, steps_per_call,
                       batching, progress_every, checkpoint_seconds,
                       overwrite, mnist_dir)


def _run_locked(agent_name, bsuite_id, seeds, directories, label, overrides,
                episodes, steps_per_call, batching, progress_every,
                checkpoint_seconds, overwrite, mnist_dir):
  experiment_name = bsuite_id.split(sweep.SEPARATOR)[0]
  ports = {s: envs.load(bsuite_id, seed=s, mnist_dir=mnist_dir)
           for s in seeds}
  env = ports[seeds[0]]
  agent = build_agent(agent_name, bsuite_id, env, overrides, episodes)
  config = bsuite_jax.config_record(agent.config)
  records, todo = [], []
  for seed in seeds:
    results.check_no_other_runner(bsuite_id, directories[seed], 'jax',
                                  overwrite)
    record = results.read_record(bsuite_id, directories[seed])
    wanted = identity(agent_name, bsuite_id, seed, overrides, episodes)
    if record is not None and not overwrite:
      path = results.marker_path(bsuite_id, directories[seed])
      if record.get('identity') != wanted:
        raise results.AnotherRunError(
            f'{path} holds another run ({record.get("identity")}), not '
            f'{wanted}; use --overwrite to replace it or another '
            '--save_path.')
      changes = bsuite_jax.config_changes(record.get('config'), config)
      mismatch = results.csv_mismatch(
          results.bsuite_csv_path(bsuite_id, directories[seed]), record,
          results.last_log_episode(record['episodes']))
      if changes:
        raise results.AnotherRunError(
            f'{path} was trained with other hyperparameters than '
            f'{agent_name}\'s today ({"; ".join(changes)}). Use --overwrite '
            'to rerun it, or another --save_path.')
      if not mismatch:
        print(f'  {label} seed {seed}: done ({record["episodes"]} episodes),'
              ' skipped (--overwrite to redo).', flush=True)
        # A run killed after its record was written leaves its checkpoints.
        shutil.rmtree(_checkpoint_folder(bsuite_id, directories[seed]),
                      ignore_errors=True)
        records.append(record)
        continue
      if mismatch:
        print(f'  {label} seed {seed}: {mismatch}; running it again.',
              flush=True)
    todo.append(seed)
  if not todo:
    return records

  train = training.make_train_bsuite(agent, env, episodes, steps_per_call)
  init = jax.jit(jax.vmap(train.init))
  run_chunk = jax.jit(training.over_agents(train.run, batching),
                      donate_argnums=0)
  fresh = init(jnp.stack([jax.random.PRNGKey(s) for s in todo]),
               suite.stack([ports[s].init() for s in todo]))
  carries, stores, resumed_at = {}, {}, {}
  for index, seed in enumerate(todo):
    carries[seed] = _seed_slice(fresh, index)
    folder = _checkpoint_folder(bsuite_id, directories[seed])
    if overwrite:
      shutil.rmtree(folder, ignore_errors=True)
    stores[seed] = checkpoints.ChunkCheckpoints(folder, dict(
        identity(agent_name, bsuite_id, seed, overrides, episodes), episodes=episodes,
        steps_per_call=steps_per_call, config=config, batching=batching),
        differences=bsuite_jax.checkpoint_differences)
    # Restored with x64 on: the ports' float64 leaves stay float64.
    with jax.enable_x64(True):
      restored = stores[seed].restore_latest(
          lambda step, s=seed: carries[s])
    if restored is not None:
      resumed_at[seed], carries[seed] = restored
      print(f'  {label} seed {seed}: resuming at step {resumed_at[seed]} '
            f'({stores[seed].directory})', flush=True)
  del fresh

  start = last_report = last_save = time.time()
  steps_run = 0
  active = list(todo)
  done_records = {}
  while active:
    interrupts.raise_if_requested()
    before = {s: int(carries[s].steps) for s in active}
    carry = run_chunk(_stack([carries[s] for s in active]))
    common.check_finite_per_agent(
        carry.agent, [f'{label} seed {s}, episode '
                      f'{int(carries[s].episodes)}' for s in active])
    still = []
    for index, seed in enumerate(active):
      carries[seed] = _seed_slice(carry, index)
      steps_run += int(carries[seed].steps) - before[seed]
      if int(carries[seed].episodes) >= episodes:
        log = jax.tree_util.tree_map(np.asarray, carries[seed].log)
        elapsed = time.time() - start
        record = dict(
            identity=identity(agent_name, bsuite_id, seed, overrides, episodes),
            config=config, batching=batching, episodes=int(episodes),
            steps=int(carries[seed].steps), seconds=round(elapsed, 1),
            resumed_at_step=int(resumed_at.get(seed, 0)),
            env_steps_per_second=round(steps_run / max(elapsed, 1e-9), 1),
            run_seeds=list(todo), device=bsuite_jax.device_name())
        write_unit(bsuite_id, directories[seed],
                   log_rows(log, episodes, experiment_name,
                            env.info_names), record)
        stores[seed].remove()
        done_records[seed] = record
        print(f'  {label} seed {seed}: {episodes} episodes, '
              f'{record["steps"]} steps, total return '
              f'{float(log.total_return[episodes - 1]):.1f}', flush=True)
      else:
        still.append(seed)
    active = still
    del carry
    now = time.time()
    if active and now - last_save >= checkpoint_seconds:
      for seed in active:
        stores[seed].save(int(carries[seed].steps), carries[seed])
      last_save = now
    if active and progress_every and now - last_report >= progress_every:
      last_report = now
      done = ', '.join(f'seed {s}: episode {int(carries[s].episodes)}/'
                       f'{episodes}' for s in active)
      print(f'  {label} {done}; {steps_run / (now - start):.0f} env steps/s '
            '(all seeds)', flush=True)
  records.extend(done_records[s] for s in todo)
  return records
