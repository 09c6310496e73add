r"""Runs an agent on bsuite ids or whole sweeps, logging with bsuite's loggers.

  python -m experiments.run_bsuite --agent=pe_dqn --bsuite_id=deep_sea/10
  python -m experiments.run_bsuite --agent=pe_dqn --bsuite_id=DEEP_SEA \
      --save_path=results --logging_mode=csv

Flags follow bsuite's own `run.py`. `--bsuite_id` takes one id or the name of
a sweep in `bsuite.sweep` (SWEEP for all 468, DEEP_SEA, TESTING, ...). Results
of agent NAME go to `<save_path>/NAME/`, where bsuite's analysis reads them.
Every hyperparameter of every agent is also a flag (e.g. `--learning_rate`,
`--v_min`); flags left unset keep the agent's defaults. For agents with a
categorical support, `v_min`/`v_max` default to the id's entry in
`agents.return_ranges`.
"""

import dataclasses
import os
import sys
import time
import typing
from typing import Any, Dict, List, Optional, Sequence

from absl import app
from absl import flags
import bsuite
from bsuite import sweep
from bsuite.logging import csv_logging
import numpy as np

import agents
from agents import return_ranges

# bsuite's run.py flags.
flags.DEFINE_string('bsuite_id', 'deep_sea/0',
                    'One bsuite id (deep_sea/10) or a sweep name (SWEEP, '
                    'DEEP_SEA, TESTING, ...).')
flags.DEFINE_string('save_path', '/tmp/pe_jax', 'Where to save results.')
flags.DEFINE_enum('logging_mode', 'csv', ['csv', 'sqlite', 'terminal'],
                  'Which bsuite logger to use.')
flags.DEFINE_boolean('overwrite', False,
                     'Overwrite existing results (otherwise finished ids are '
                     'skipped).')
flags.DEFINE_integer('num_episodes', None,
                     'Episodes per id (default: the id\'s bsuite_num_episodes).')
flags.DEFINE_boolean('verbose', False, 'Log every episode to the terminal.')
# Ours.
flags.DEFINE_enum('agent', 'pe_dqn', list(agents.AGENT_NAMES), 'Agent to run.')
flags.DEFINE_integer('seed', 0, 'Seed of the agent.')
flags.DEFINE_float('progress_every', 10.0,
                   'Seconds between progress lines (0: none).')

FLAGS = flags.FLAGS


def _flag_kind(annotation) -> str:
  text = str(annotation)
  if 'Tuple[int' in text or 'tuple[int' in text:
    return 'int_list'
  if 'Tuple[float' in text or 'tuple[float' in text:
    return 'float_list'
  if 'Tuple[str' in text or 'tuple[str' in text:
    return 'str_list'
  if annotation is bool or text == 'bool':
    return 'bool'
  if annotation is int or text == 'int' or 'Optional[int]' in text:
    return 'int'
  if annotation is float or text == 'float' or 'float' in text:
    return 'float'
  return 'str'


def _hyperparameter_kinds() -> Dict[str, str]:
  """Every hyperparameter of every registered agent -> its flag kind."""
  kinds = {}
  for name in agents.AGENT_NAMES:
    cls = agents.config_class(name)
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
      if field.name != 'num_actions':
        kinds.setdefault(field.name, _flag_kind(hints[field.name]))
  return kinds


HYPERPARAMETERS = _hyperparameter_kinds()
for _name, _kind in sorted(HYPERPARAMETERS.items()):
  _help = 'Agent hyperparameter (unset: the agent\'s default).'
  if _kind == 'bool':
    flags.DEFINE_boolean(_name, None, _help)
  elif _kind == 'int':
    flags.DEFINE_integer(_name, None, _help)
  elif _kind == 'float':
    flags.DEFINE_float(_name, None, _help)
  elif _kind.endswith('list'):
    flags.DEFINE_list(_name, None, _help + ' Comma-separated.')
  else:
    flags.DEFINE_string(_name, None, _help)


def resolve_ids(bsuite_id: str) -> List[str]:
  """One id, or every id of a named sweep."""
  if '/' in bsuite_id:
    if bsuite_id not in sweep.SETTINGS:
      raise ValueError(f'Unknown bsuite id {bsuite_id!r}.')
    return [bsuite_id]
  ids = getattr(sweep, bsuite_id, None)
  if not isinstance(ids, tuple) or not all(isinstance(i, str) for i in ids):
    names = sorted(n for n in dir(sweep)
                   if n.isupper() and not n.startswith('_') and
                   isinstance(getattr(sweep, n), tuple))
    raise ValueError(f'{bsuite_id!r} is neither a bsuite id nor a sweep; '
                     f'sweeps: {names}.')
  return list(ids)


def user_overrides(agent_name: str) -> Dict[str, Any]:
  """Hyperparameters set on the command line, checked against the agent."""
  accepted = set(agents.hyperparameter_names(agent_name))
  overrides = {}
  for name, kind in HYPERPARAMETERS.items():
    if FLAGS[name].present:
      if name not in accepted:
        raise app.UsageError(
            f'--{name} is not a hyperparameter of {agent_name}; its '
            f'hyperparameters: {sorted(accepted)}.')
      value = FLAGS[name].value
      if kind == 'int_list':
        value = tuple(int(v) for v in value)
      elif kind == 'float_list':
        value = tuple(float(v) for v in value)
      elif kind == 'str_list':
        value = tuple(value)
      overrides[name] = value
  return overrides


def results_dir(save_path: str, agent_name: str) -> str:
  return os.path.join(save_path, agent_name)


def csv_path(bsuite_id: str, directory: str) -> str:
  """Where bsuite's CSV logger writes `bsuite_id`'s results."""
  safe_id = bsuite_id.replace(sweep.SEPARATOR, csv_logging.SAFE_SEPARATOR)
  return os.path.join(directory, f'{csv_logging.BSUITE_PREFIX}{safe_id}.csv')


def is_finished(bsuite_id: str, directory: str, num_episodes: int) -> bool:
  """True when a CSV log of `bsuite_id` already reaches `num_episodes`."""
  path = csv_path(bsuite_id, directory)
  if not os.path.exists(path):
    return False
  with open(path) as f:
    header = f.readline().strip().split(',')
    if 'episode' not in header:
      return False
    column = header.index('episode')
    last = None
    for line in f:
      fields = line.strip().split(',')
      if len(fields) > column and fields[column]:
        last = int(float(fields[column]))
  return last is not None and last >= num_episodes


def run_one(bsuite_id: str, agent_name: str, overrides: Dict[str, Any],
            num_episodes: Optional[int], seed: int, save_path: str,
            logging_mode: str, overwrite: bool, verbose: bool,
            progress_every: float) -> Dict[str, Any]:
  """Trains a fresh agent on one id; returns a summary dict."""
  directory = results_dir(save_path, agent_name)
  if logging_mode == 'terminal':
    env = bsuite.load_and_record_to_terminal(bsuite_id)
  else:
    if logging_mode == 'csv':
      os.makedirs(directory, exist_ok=True)
    target = directory if logging_mode == 'csv' else os.path.join(
        save_path, f'{agent_name}.db')
    env = bsuite.load_and_record(bsuite_id, target, logging_mode=logging_mode,
                                 overwrite=overwrite)
  episodes = num_episodes or env.bsuite_num_episodes  # pytype: disable=attribute-error
  kwargs = dict(overrides)
  accepted = set(agents.hyperparameter_names(agent_name))
  if {'v_min', 'v_max'} <= accepted and 'v_min' not in kwargs and \
      'v_max' not in kwargs:
    kwargs['v_min'], kwargs['v_max'] = return_ranges.return_range(bsuite_id)
  agent = agents.make(agent_name, env.observation_spec(), env.action_spec(),
                      seed=seed, num_episodes=episodes, **kwargs)
  start = last_report = time.time()
  total_return, steps = 0.0, 0
  returns = []
  for episode in range(episodes):
    timestep = env.reset()
    episode_return = 0.0
    while not timestep.last():
      action = agent.select_action(timestep)
      new_timestep = env.step(action)
      agent.update(timestep, action, new_timestep)
      timestep = new_timestep
      episode_return += timestep.reward
      steps += 1
    returns.append(episode_return)
    total_return += episode_return
    now = time.time()
    if verbose or (progress_every and now - last_report >= progress_every):
      last_report = now
      recent = np.mean(returns[-20:])
      print(f'  {bsuite_id} [{agent_name}] episode {episode + 1}/{episodes}  '
            f'steps {steps}  {steps / (now - start):.0f} steps/s  '
            f'mean return (last 20) {recent:.3f}', flush=True)
  elapsed = time.time() - start
  info = env.bsuite_info() if hasattr(env, 'bsuite_info') else {}
  return {
      'bsuite_id': bsuite_id,
      'agent': agent_name,
      'episodes': episodes,
      'steps': steps,
      'mean_return': total_return / max(episodes, 1),
      'regret': info.get('total_bad_episodes'),
      'seconds': elapsed,
      'steps_per_second': steps / max(elapsed, 1e-9),
      'bsuite_info': info,
  }


def format_summary(summary: Dict[str, Any]) -> str:
  regret = summary['regret']
  regret_text = (f'regret (non-rewarding episodes) {regret}'
                 if regret is not None else 'regret n/a')
  return (f'{summary["bsuite_id"]} [{summary["agent"]}]: '
          f'{summary["episodes"]} episodes, {summary["steps"]} steps, '
          f'mean return {summary["mean_return"]:.3f}, {regret_text}, '
          f'{summary["seconds"]:.1f} s ({summary["steps_per_second"]:.0f} '
          'steps/s)')


def main(argv: Sequence[str]) -> None:
  del argv
  ids = resolve_ids(FLAGS.bsuite_id)
  overrides = user_overrides(FLAGS.agent)
  directory = results_dir(FLAGS.save_path, FLAGS.agent)
  summaries = []
  for index, bsuite_id in enumerate(ids):
    if FLAGS.logging_mode == 'csv' and not FLAGS.overwrite:
      episodes = FLAGS.num_episodes or sweep.EPISODES[bsuite_id]
      if is_finished(bsuite_id, directory, episodes):
        print(f'[{index + 1}/{len(ids)}] {bsuite_id}: finished results in '
              f'{directory}, skipped (--overwrite to redo).')
        continue
    print(f'[{index + 1}/{len(ids)}] {bsuite_id}: running {FLAGS.agent}',
          flush=True)
    # bsuite's CSV logger rewrites its whole file on each write, so an id
    # that was cut off is rerun from scratch over its partial log: nothing
    # is lost or duplicated.
    summary = run_one(bsuite_id, FLAGS.agent, overrides, FLAGS.num_episodes,
                      FLAGS.seed, FLAGS.save_path, FLAGS.logging_mode,
                      True if FLAGS.logging_mode == 'csv' else FLAGS.overwrite,
                      FLAGS.verbose, FLAGS.progress_every)
    summaries.append(summary)
    print(format_summary(summary), flush=True)
  print('\nSummary')
  for summary in summaries:
    print('  ' + format_summary(summary))
  if FLAGS.logging_mode != 'terminal':
    print(f'Results: {directory if FLAGS.logging_mode == "csv" else FLAGS.save_path}')
  sys.stdout.flush()


if __name__ == '__main__':
  app.run(main)
