r"""bsuite scores, radar and bar plots, and learning curves of several agents.

  python -m experiments.analyze_bsuite --save_path=results \
      --agents=pe_dqn,boot_dqn,ids_c51,dltv_qr --output_dir=results/analysis

Reads the CSV logs that `experiments.run_bsuite` wrote, in every layout its
runners write: `<save_path>/<agent>/` (one seed in bsuite's loop) and
`<save_path>/<agent>/seed_K/` (run_bsuite's --seeds, and --runner=jax);
default: every agent folder. Each folder is one run; bsuite's own
`summary_analysis` scores each run, and an agent's score per experiment is
the mean over its runs (`runs` says over how many); `--seeds=0` keeps the
agents' seed 0 alone. A log that cannot be read is named and left out.
Writes to `--output_dir`:

  bsuite_scores.csv         bsuite's score per agent and experiment, with
                            bsuite's `finished` flag (all ids of the
                            experiment ran its full episode count)
  bsuite_scores.md          the same as a table, experiments x agents, and
                            the average over each of the seven core tags
  bsuite_scores_by_tag.csv  score per agent and tag: bsuite's average of
                            what there is, how many of the tag's experiments
                            are whole, and the mean over those (the radar's)
  bsuite_radar.png          radar plot of the seven tags (paper Fig. 4a)
  bsuite_bar.png            bsuite's score bar plot, one panel per agent
  bsuite_bar_compare.png    agents side by side per experiment (faded: not
                            yet on all ids and episodes)
  episodic_returns.csv      mean episodic return over each experiment's ids
                            at bsuite's logged episodes (paper Fig. 10)
  episodic_returns.png      those curves, one panel per experiment

Experiments that have not finished are scored on what ran and flagged
`finished = False` (bsuite draws them faded).

Units of `run_bsuite --runner=jax` (`<agent>/seed_K/` with a JSON record
per log) get bsuite's deep sea scores, a table of the episode each seed was
solved at, and bsuite's scaling plot (`experiments.lib.deep_sea_scores`),
over the units of --agents and --seeds; the other logs beside them, and
every log of the agents named by --agents, also get the tables and plots
above.
"""

import glob
import json
import os
import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from absl import app
from absl import flags
from bsuite import sweep
from bsuite.experiments import summary_analysis
from bsuite.logging import csv_logging
from bsuite.logging import logging_utils
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
import numpy as np
import pandas as pd

from experiments.lib import compilation_cache
from experiments.lib import deep_sea_scores
from experiments.lib import results
from experiments.lib import unit_files

FLAGS = flags.FLAGS


def define_flags() -> None:
  """Defines the command-line flags (only when run as a script, so that
  several experiment modules can be imported into one process)."""
  flags.DEFINE_string('save_path', '/tmp/pe_jax',
                      'Folder holding one results folder per agent (as '
                      'run_bsuite writes them).')
  flags.DEFINE_list('agents', None,
                    'Agents to compare, in the scores, plots and the deep '
                    "sea units' report (default: every folder under "
                    '--save_path that holds bsuite CSV logs).')
  flags.DEFINE_string('output_dir', None,
                      'Where tables and plots go (default: '
                      '<save_path>/analysis).')
  flags.DEFINE_list('seeds', None,
                    'Only these agent seeds in the scores, plots, '
                    "curves and the deep sea units' report, e.g. 0 to "
                    'compare agents on seed 0 alone (default: every '
                    'seed).')



SWEEP_VAR = 'agent_name'  # bsuite's loader names the dict keys so.
RUN_VAR = 'run'  # 'single' (bsuite's loop) or 'seed_K' (a seed's folder).
TAGS = tuple(sorted(summary_analysis.ALL_TAGS))


# bsuite's deep sea scoring on pandas 2 (README: call it in a notebook).
restore_series_append = results.restore_series_append


def _logs(folder: str) -> List[str]:
  return sorted(glob.glob(os.path.join(
      folder, f'{csv_logging.BSUITE_PREFIX}*.csv')))


def result_folders(save_path: str, agent_name: str) -> List[Tuple[str, str]]:
  """(run, folder) of each folder of `agent_name`'s logs: 'single' for
  `<agent>/` itself (bsuite's loop), 'seed_K' for `<agent>/seed_K/`."""
  folder = os.path.join(save_path, agent_name)
  if not os.path.isdir(folder):
    return []
  found = [('single', folder)] if _logs(folder) else []
  for name in sorted(os.listdir(folder), key=lambda n: (len(n), n)):
    if re.fullmatch(r'seed_\d+', name) and _logs(os.path.join(folder, name)):
      found.append((name, os.path.join(folder, name)))
  return found


def find_agents(save_path: str) -> List[str]:
  """Folders under `save_path` that hold bsuite CSV logs (directly or in
  seed_K/ folders), sorted."""
  if not os.path.isdir(save_path):
    raise ValueError(f'--save_path {save_path!r} is not a folder.')
  return sorted(name for name in os.listdir(save_path)
                if result_folders(save_path, name))


def is_unit_log(path: str) -> bool:
  """A log written by `run_bsuite --runner=jax` (its record says so)."""
  return unit_files.log_runner(path) == 'jax'


def _unit_problem(path: str) -> str:
  """Why the record beside the log at `path` does not vouch for it ('' when
  it does, or when there is no record: a log of bsuite's loop without
  one)."""
  record_path = path + unit_files.MARKER_SUFFIX
  if not os.path.exists(record_path):
    return ''
  try:
    with open(record_path) as f:
      record = json.load(f)
  except (OSError, ValueError) as error:
    return f'its record {record_path} cannot be read ({type(error).__name__})'
  if not isinstance(record, dict) or 'episodes' not in record:
    return f'its record {record_path} is not a unit record'
  try:
    last = unit_files.last_log_episode(record['episodes'])
  except (TypeError, ValueError):
    return f'its record {record_path} is not a unit record'
  mismatch = unit_files.csv_mismatch(path, record, last)
  return f'{mismatch} (record {record_path})' if mismatch else ''


def read_log(path: str) -> pd.DataFrame:
  """One bsuite CSV log with its id and sweep settings, as bsuite's
  `csv_load` reads it; ValueError naming the problem if it cannot be read."""
  name = os.path.basename(path)[:-len('.csv')]
  bsuite_id = name.split(csv_logging.INITIAL_SEPARATOR)[1].replace(
      csv_logging.SAFE_SEPARATOR, sweep.SEPARATOR)
  if bsuite_id not in sweep.SETTINGS:
    raise ValueError(f'{bsuite_id!r} is not a bsuite id')
  try:
    df = pd.read_csv(path)
  except (pd.errors.EmptyDataError, pd.errors.ParserError,
          UnicodeDecodeError) as error:
    raise ValueError(f'not a CSV log ({type(error).__name__})') from None
  if 'episode' not in df.columns or df.empty:
    raise ValueError('no episode rows')
  # As the runners check a unit before they take it as done.
  problem = _unit_problem(path)
  if problem:
    raise ValueError(problem)
  missing = df.isna().any(axis=1)
  if missing.any():
    raise ValueError(f'row {int(missing.idxmax()) + 1} has empty or NaN '
                     'values (a log cut mid-row, or a diverged run)')
  df['bsuite_id'] = bsuite_id
  df['results_dir'] = os.path.dirname(path)
  return logging_utils.join_metadata(df)


def load(save_path: str, agent_names: Sequence[str],
         units: bool = True, seeds: Optional[Sequence[int]] = None
         ) -> Tuple[pd.DataFrame, List[str]]:
  """bsuite's data frame of the agents' logs (every layout; the jitted
  runner's units only if `units`; only the agent seeds in `seeds` if
  given, a log of unknown seed then left out), and its sweep variables
  (agent, run). Logs that cannot be read are named on stdout and left
  out."""
  if seeds is not None:
    seeds = parse_seeds(seeds)
  if not agent_names:
    raise ValueError(f'No agent results under {save_path!r}: expected '
                     'folders <save_path>/<agent>/ or <agent>/seed_K/ of '
                     'bsuite CSV logs.')
  frames = []
  seen = {}  # (agent, id, seed) -> the log read for it
  for name in agent_names:
    folders = result_folders(save_path, name)
    if not folders:
      raise ValueError(f'--agents: no bsuite CSV logs for agent {name!r} in '
                       f'{os.path.join(save_path, name)!r} or its seed_K '
                       'folders.')
    for run, folder in folders:
      if seeds is not None and run.startswith('seed_') and int(
          run[len('seed_'):]) not in seeds:
        continue  # (read nothing the filter drops)
      for path in _logs(folder):
        if not units and is_unit_log(path):
          continue
        if seeds is not None and _seed_of(path, run) not in seeds:
          continue
        try:
          df = read_log(path)
        except ValueError as error:
          print(f'Skipped {path}: {error}.', flush=True)
          continue
        seed = _seed_of(path, run)
        if seed is not None:
          unit = (name, df['bsuite_id'].iloc[0], seed)
          if unit in seen:
            print(f'Skipped {path}: seed {seed} of {unit[1]} is read from '
                  f'{seen[unit]} (one unit counts once).', flush=True)
            continue
          seen[unit] = path
        df[SWEEP_VAR], df[RUN_VAR] = name, run
        frames.append(df)
  if not frames:
    of_seeds = '' if seeds is None else f' of --seeds {list(seeds)}'
    raise ValueError(f'No readable bsuite CSV logs{of_seeds} for '
                     f'{list(agent_names)} under {save_path!r}.')
  return pd.concat(frames, sort=False), [SWEEP_VAR, RUN_VAR]


def parse_seeds(seeds: Sequence) -> List[int]:
  """`--seeds` as integers >= 0; ValueError naming the flag otherwise."""
  parsed = []
  for seed in seeds:
    try:
      value = int(seed)
    except (TypeError, ValueError):
      value = -1
    if value < 0 or str(seed).strip() not in (str(value), f'+{value}'):
      raise ValueError(f'--seeds: {seed!r} is not a seed (integers >= 0, '
                       'e.g. --seeds=0,1).')
    parsed.append(value)
  if not parsed:
    raise ValueError('--seeds: empty (integers >= 0, e.g. --seeds=0,1).')
  return parsed


def _seed_of(path: str, run: str) -> Optional[int]:
  """The agent seed of a log: its folder's (seed_K), or its record's for
  bsuite's loop layout; None when neither says."""
  if run.startswith('seed_'):
    return int(run[len('seed_'):])
  try:
    with open(path + unit_files.MARKER_SUFFIX) as f:
      identity = json.load(f).get('identity', {})
  except (OSError, ValueError, AttributeError):
    return None
  seed = identity.get('seed') if isinstance(identity, dict) else None
  return seed if isinstance(seed, int) else None


def scores(df: pd.DataFrame, sweep_vars: Sequence[str]) -> pd.DataFrame:
  """bsuite's score per agent and experiment (bsuite_env): the mean over
  the agent's runs of bsuite's score of each run (`runs` of them);
  `finished` when every run finished."""
  restore_series_append()
  per_run = summary_analysis.bsuite_score(df, sweep_vars)
  score_df = per_run.groupby([SWEEP_VAR, 'bsuite_env'], as_index=False).agg(
      score=('score', 'mean'), type=('type', 'first'), tags=('tags', 'first'),
      finished=('finished', 'all'), runs=(RUN_VAR, 'nunique'))
  # How many of the experiment's ids in bsuite's sweep the score rests on.
  ids = df.groupby([SWEEP_VAR, 'bsuite_env'], as_index=False).agg(
      ids=('bsuite_id', 'nunique'))
  score_df = score_df.merge(ids, on=[SWEEP_VAR, 'bsuite_env'])
  score_df['sweep_ids'] = [experiment_size(e) for e in score_df.bsuite_env]
  return score_df.sort_values([SWEEP_VAR, 'bsuite_env']).reset_index(
      drop=True)


def bar_plot_scores(score_df: pd.DataFrame) -> pd.DataFrame:
  """`scores` as bsuite's bar plots take them: `finished` (drawn solid,
  else faded) only where the score is final, on every id of the
  experiment's sweep and bsuite's whole episode count; bsuite's own flag
  knows only the episodes of the ids that ran."""
  return score_df.assign(
      finished=score_df.finished & (score_df.ids >= score_df.sweep_ids))


def whole_suite_table(save_path: str, agent_name: str,
                      run: str = 'seed_0', loaded=None) -> str:
  """A markdown table of bsuite's score per experiment for one run of an
  agent (its `run` folder), saying on how many of each experiment's ids
  the score rests and whether they ran bsuite's whole episode count; the
  experiments with no log listed below it. `loaded`: `load(save_path,
  [agent_name])`'s result, if already read."""
  df, sweep_vars = loaded or load(save_path, [agent_name])
  df = df[df[RUN_VAR] == run]
  score_df = scores(df, sweep_vars)
  lines = [f'| experiment | score | ids | finished |', '|---|---:|---:|---|']
  for row in score_df.itertuples():
    lines.append(f'| {row.bsuite_env} | {row.score:.3f} | {row.ids} of '
                 f'{row.sweep_ids} | {"yes" if row.finished else "no"} |')
  known = sorted({i.split(sweep.SEPARATOR)[0] for i in sweep.SWEEP})
  missing = [e for e in known if e not in set(score_df.bsuite_env)]
  if missing:
    lines.append('')
    lines.append(f'Not yet run: {", ".join(missing)}.')
  return '\n'.join(lines)


def _spread_cells(values: Sequence[float]) -> str:
  """'median | min-max | count' of `values`, blank where there are none."""
  if not values:
    return ' |  | 0'
  return (f'{float(np.median(values)):.3f} | {min(values):.3f}-'
          f'{max(values):.3f} | {len(values)}')


def seeds_table(save_path: str, agent_name: str, runs: Sequence[str],
                sweep_ids: Optional[Callable[[str], int]] = None,
                loaded=None) -> str:
  """Markdown tables of bsuite's score per experiment, then per core tag,
  for each of an agent's `runs` (seed_K folders), with the median, the
  range and the number of runs they rest on.

  A run counts for an experiment only once it holds every one of the
  experiment's `sweep_ids(experiment)` ids (bsuite's sweep by default),
  and for a tag only once it counts for each of the tag's experiments; a
  cell it lacks says how many ids are in. '*': scored on the episodes that
  ran, short of bsuite's episode count. `loaded` as for
  `whole_suite_table`."""
  sweep_ids = sweep_ids or experiment_size
  df, sweep_vars = loaded or load(save_path, [agent_name])
  known = sorted({i.split(sweep.SEPARATOR)[0] for i in sweep.SWEEP})
  by_run = {}
  for run in runs:
    score_df = scores(df[df[RUN_VAR] == run], sweep_vars)
    by_run[run] = {r.bsuite_env: r for r in score_df.itertuples()}
  header = ' | '.join(run.replace('seed_', 'seed ') for run in runs)
  rule = '|---|' + '---:|' * (len(runs) + 3)
  lines = [f'| experiment | {header} | median | range | seeds |', rule]
  complete = {}  # experiment -> {run: score} of the runs that hold it all
  unfinished = False
  for experiment in known:
    cells, complete[experiment] = [], {}
    for run in runs:
      row = by_run[run].get(experiment)
      cells.append(_score_cell(row, sweep_ids(experiment)))
      if _holds_all_ids(row, sweep_ids(experiment)):
        complete[experiment][run] = row.score
        unfinished |= not row.finished
    if any(cells):
      lines.append(f'| {experiment} | ' + ' | '.join(cells) + ' | ' +
                   _spread_cells(list(complete[experiment].values())) + ' |')
  lines += ['', f'| tag | {header} | median | range | seeds |', rule]
  for tag in TAGS:
    of_tag = [e for e in known
              if tag in summary_analysis.BSUITE_INFO[e].tags]
    values, cells = [], []
    for run in runs:
      if all(run in complete[e] for e in of_tag):
        values.append(float(np.mean([complete[e][run] for e in of_tag])))
        cells.append(f'{values[-1]:.3f}')
      else:
        cells.append('')
    lines.append(f'| {tag} | ' + ' | '.join(cells) + ' | ' +
                 _spread_cells(values) + ' |')
  if unfinished:
    lines += ['', UNFINISHED_NOTE]
  return '\n'.join(lines)


UNFINISHED_NOTE = ("\\* scored on the episodes that ran, short of bsuite's "
                   'episode count.')


def _holds_all_ids(row, num_ids: int) -> bool:
  """Whether a `scores` row (None: no log) rests on all `num_ids` ids."""
  return row is not None and row.ids >= num_ids


def _score_cell(row, num_ids: int) -> str:
  """A table cell for a `scores` row: its score ('*': short of bsuite's
  episode count) once it holds all `num_ids` ids, else how many it holds;
  blank for no log (None)."""
  if row is None:
    return ''
  if not _holds_all_ids(row, num_ids):
    return f'({row.ids} of {num_ids} ids)'
  return f'{row.score:.3f}' + ('' if row.finished else '*')


def agents_table(save_path: str, agent_names: Sequence[str],
                 run: str = 'seed_0',
                 sweep_ids: Optional[Callable[[str], int]] = None,
                 loaded=None) -> str:
  """Markdown tables of bsuite's score per experiment, then per core tag,
  of one run (a seed_K folder) of each of `agent_names`, side by side.

  A cell holds the score once the run holds every one of the experiment's
  `sweep_ids(experiment)` ids (bsuite's sweep by default), else how many
  it holds; a tag's score once the run holds each of the tag's
  experiments, else how many of them it holds. '*' as in `seeds_table`.
  `loaded`: `load(save_path, agent_names)`'s result, if already read.
  """
  sweep_ids = sweep_ids or experiment_size
  df, sweep_vars = loaded or load(save_path, list(agent_names))
  df = df[df[RUN_VAR] == run]
  by_agent = {name: {} for name in agent_names}
  for row in scores(df, sweep_vars).itertuples():
    if row.agent_name in by_agent:
      by_agent[row.agent_name][row.bsuite_env] = row
  known = sorted({i.split(sweep.SEPARATOR)[0] for i in sweep.SWEEP})
  header = ' | '.join(agent_names)
  rule = '|---|' + '---:|' * len(agent_names)
  lines = [f'| experiment | {header} |', rule]
  unfinished = False
  for experiment in known:
    rows = [by_agent[name].get(experiment) for name in agent_names]
    cells = [_score_cell(row, sweep_ids(experiment)) for row in rows]
    unfinished |= any('*' in cell for cell in cells)
    if any(cells):
      lines.append(f'| {experiment} | ' + ' | '.join(cells) + ' |')
  lines += ['', f'| tag | {header} |', rule]
  for tag in TAGS:
    of_tag = [e for e in known
              if tag in summary_analysis.BSUITE_INFO[e].tags]
    cells = []
    for name in agent_names:
      held = [by_agent[name][e] for e in of_tag if _holds_all_ids(
          by_agent[name].get(e), sweep_ids(e))]
      cells.append(f'{np.mean([r.score for r in held]):.3f}'
                   if held and len(held) == len(of_tag) else
                   f'({len(held)} of {len(of_tag)} experiments)')
    lines.append(f'| {tag} | ' + ' | '.join(cells) + ' |')
  if unfinished:
    lines += ['', UNFINISHED_NOTE]
  return '\n'.join(lines)


# What bsuite's paper (Osband et al., 2020, Sec. 4) says of its DQN, by tag.
BSUITE_PAPER_DQN = {'basic': 'strong', 'credit_assignment': 'strong',
                    'exploration': 'weak', 'memory': 'weak'}
# The reading of "strong" and "weak" the comparison uses: a tag score of at
# least 0.5, and below it.
STRONG_SCORE = 0.5


def tag_comparison_table(save_path: str, agent_name: str,
                         runs: Sequence[str] = ('seed_0',),
                         described=BSUITE_PAPER_DQN, loaded=None) -> str:
  """Per core tag: bsuite's tag score (the mean over the tag's experiments
  that ran) of each of `runs` (seed_K folders), the experiments it rests
  on with their scores, and `described` (bsuite's paper's word for its
  DQN) with whether the score agrees ('strong': >= STRONG_SCORE, 'weak':
  below). With several runs the score is their median with its range, an
  experiment's score its median over the runs that hold it, and "agrees"
  says on how many runs it does when they split. `loaded` as for
  `whole_suite_table`."""
  df, sweep_vars = loaded or load(save_path, [agent_name])
  by_tag, by_experiment = {}, {}  # name -> [score of each run that has it]
  for run in runs:
    score_df = scores(df[df[RUN_VAR] == run], sweep_vars)
    for row in scores_by_tag(score_df, [SWEEP_VAR]).itertuples():
      by_tag.setdefault(row.tag, []).append(float(row.score))
    for row in score_df.itertuples():
      by_experiment.setdefault(row.bsuite_env, []).append(
          (float(row.score), row.tags))
  known = sorted({i.split(sweep.SEPARATOR)[0] for i in sweep.SWEEP})
  lines = ['| tag | score | experiments in (score) | bsuite\'s paper on its '
           'DQN | agrees |', '|---|---:|---|---|---|']
  for tag in TAGS:
    rows = [(experiment, float(np.median([score for score, _ in values])))
            for experiment, values in sorted(by_experiment.items())
            if tag in values[0][1]]
    of_tag = [e for e in known
              if tag in summary_analysis.BSUITE_INFO[e].tags]
    word = described.get(tag, '')
    values = by_tag.get(tag, [])
    agrees = ''
    if word and values:
      agreeing = sum((value >= STRONG_SCORE) == (word == 'strong')
                     for value in values)
      agrees = ('yes' if agreeing == len(values) else 'no' if not agreeing
                else f'on {agreeing} of {len(values)} seeds')
    cells = ', '.join(f'{experiment} {score:.2f}'
                      for experiment, score in rows)
    count = f' ({len(rows)} of {len(of_tag)})'
    score = ''
    if len(values) == 1:
      score = f'{values[0]:.2f}'
    elif values:
      score = (f'{np.median(values):.2f} ({min(values):.2f}-'
               f'{max(values):.2f}, {len(values)} seeds)')
    lines.append(f'| {tag} | {score} | {cells}{count} | {word} | {agrees} |')
  return '\n'.join(lines)


def experiment_size(experiment: str) -> int:
  """The number of ids of `experiment` in bsuite's sweep."""
  return sum(i.split(sweep.SEPARATOR)[0] == experiment
             for i in sweep.SETTINGS)


def tag_experiments(tag: str) -> List[str]:
  """The experiments of bsuite's sweep that carry core tag `tag`."""
  known = sorted({i.split(sweep.SEPARATOR)[0] for i in sweep.SWEEP})
  return [e for e in known if tag in summary_analysis.BSUITE_INFO[e].tags]


def scores_by_tag(score_df: pd.DataFrame,
                  sweep_vars: Sequence[str]) -> pd.DataFrame:
  """Average score per agent over each core tag, and what it rests on.

  Columns: `score`, bsuite's average over whatever experiments of the tag
  have logs (`summary_analysis.ave_score_by_tag`, on part of an experiment's
  ids too); `experiments`, how many of the tag's `tag_experiments` (in
  bsuite's sweep) the agent holds on all their ids; `whole_score`, the mean
  over those alone (NaN when none), which the table and radar show, since
  a few ids of an experiment are not its score. The two agree once every
  experiment is whole.
  """
  by_tag = summary_analysis.ave_score_by_tag(score_df, sweep_vars)
  by_tag = by_tag[[SWEEP_VAR, 'tag', 'score']].reset_index(drop=True)
  whole = score_df[score_df.ids >= score_df.sweep_ids]
  held = {(a, e): float(score) for a, e, score in
          zip(whole[SWEEP_VAR], whole.bsuite_env, whole.score)}
  of_tag = {tag: tag_experiments(tag) for tag in by_tag.tag.unique()}
  whole_scores = [[held[a, e] for e in of_tag[t] if (a, e) in held]
                  for a, t in zip(by_tag[SWEEP_VAR], by_tag.tag)]
  by_tag['experiments'] = [len(values) for values in whole_scores]
  by_tag['tag_experiments'] = [len(of_tag[t]) for t in by_tag.tag]
  by_tag['whole_score'] = [float(np.mean(values)) if values else np.nan
                           for values in whole_scores]
  return by_tag


def episodic_returns(df: pd.DataFrame) -> pd.DataFrame:
  """Mean episodic return over each experiment's ids at logged episodes.

  bsuite logs every id at the same logarithmically spaced episodes, so ids of
  one experiment line up; `num_ids` counts the ids averaged at each point.
  """
  grouped = df.groupby([SWEEP_VAR, 'bsuite_env', 'episode'])
  curves = grouped.agg(mean_episode_return=('episode_return', 'mean'),
                       num_ids=('bsuite_id', 'nunique')).reset_index()
  return curves.rename(columns={'bsuite_env': 'experiment'})


def windowed_regret(log: pd.DataFrame, edges: Sequence[int]) -> List[float]:
  """Mean regret per episode in each window (edges[i], edges[i + 1]] of
  episodes, from one log's cumulative `total_regret` (bsuite's bandit,
  deep sea and others log it). edges: increasing episode numbers; the first
  may be 0, every other must be an episode the log holds. ValueError
  naming the edge otherwise."""
  edges = [int(e) for e in edges]
  if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
    raise ValueError(f'edges must be 2 or more increasing episodes, got '
                     f'{edges}')
  if 'total_regret' not in log.columns:
    raise ValueError('the log has no total_regret column')
  regret_at = dict(zip(log.episode.astype(int), log.total_regret))
  regret_at.setdefault(0, 0.0)
  missing = [e for e in edges if e not in regret_at]
  if missing:
    raise ValueError(f'episode {missing[0]} is not logged (edges must be '
                     'logged episodes or 0)')
  return [(regret_at[b] - regret_at[a]) / (b - a)
          for a, b in zip(edges, edges[1:])]


def markdown_table(score_df: pd.DataFrame, tag_df: pd.DataFrame) -> str:
  """Experiments x agents scores, then tag averages, as markdown."""
  agent_names = sorted(score_df[SWEEP_VAR].unique())

  def table(frame: pd.DataFrame, row_key: str, title: str,
            values: str = 'score') -> List[str]:
    pivot = frame.pivot(index=row_key, columns=SWEEP_VAR, values=values)
    partial = {}
    if 'ids' in frame:
      partial = {(r[row_key], r[SWEEP_VAR]): f' ({r.ids} of {r.sweep_ids} ids)'
                 for _, r in frame.iterrows() if r.ids < r.sweep_ids}
    if 'experiments' in frame:
      partial = {(r[row_key], r[SWEEP_VAR]):
                 f' ({r.experiments} of {r.tag_experiments} experiments)'
                 for _, r in frame.iterrows()
                 if r.experiments < r.tag_experiments}
    lines = [f'| {title} | ' + ' | '.join(agent_names) + ' |',
             '|---|' + '---:|' * len(agent_names)]
    for key, row in pivot.iterrows():
      cells = [('n/a' if pd.isna(row.get(a)) else f'{row[a]:.3f}') +
               partial.get((key, a), '')
               for a in agent_names]
      lines.append(f'| {key} | ' + ' | '.join(cells) + ' |')
    return lines

  unfinished = score_df.loc[~score_df.finished.astype(bool)]
  lines = ['# bsuite scores', '']
  lines += table(score_df, 'bsuite_env', 'experiment')
  if (score_df.ids < score_df.sweep_ids).any():
    lines += ['', "'(k of n ids)': the score rests on k of the experiment's n "
              "ids in bsuite's sweep."]
  lines += ['', '# Average score per tag', '']
  lines += table(tag_df, 'tag', 'tag', values='whole_score')
  if (tag_df.experiments < tag_df.tag_experiments).any():
    lines += ['', "'(k of n experiments)': the mean over the k of the tag's "
              "n experiments that are there on all their ids; n/a: none is "
              "(bsuite's own average of whatever there is: "
              "bsuite_scores_by_tag.csv, score)."]
  if not unfinished.empty:
    pairs = ', '.join(f'{a}: {e}' for a, e in zip(unfinished[SWEEP_VAR],
                                                  unfinished.bsuite_env))
    lines += ['', f'Not finished (scored on the episodes that ran): {pairs}.']
  return '\n'.join(lines) + '\n'


def radar_label(frame: pd.DataFrame) -> str:
  """An agent's legend entry: its name, and how many tags rest on all their
  experiments when some do not (`frame`: its `scores_by_tag` rows)."""
  name = frame[SWEEP_VAR].iloc[0]
  whole = int(np.sum(frame.experiments >= frame.tag_experiments))
  if whole == len(frame):
    return name
  return f'{name} ({whole} of {len(frame)} tags on all their experiments)'


def plot_radar(tag_df: pd.DataFrame, path: str) -> None:
  """Radar plot of the average score per core tag, one polygon per agent.

  Drawn here rather than with bsuite's `bsuite_radar_plot`, which averages a
  frame holding string columns and fails on pandas >= 2; its data once
  every experiment is whole, its layout (tags clockwise from the top, rings
  at .25, .5, .75, 1). A point is `whole_score` (`scores_by_tag`): filled
  when the tag rests on all its experiments, hollow on some, a gap in the
  line on none (never a 0); only an agent with every tag whole is filled.
  """
  tags = sorted(tag_df.tag.unique())
  angles = np.linspace(0.0, 2.0 * np.pi, len(tags), endpoint=False)
  closed = np.concatenate([angles, angles[:1]])
  fig = plt.figure(figsize=(7, 7))
  ax = fig.add_subplot(111, polar=True)
  ax.set_theta_offset(np.pi / 2)
  ax.set_theta_direction(-1)
  incomplete = False
  for index, agent_name in enumerate(sorted(tag_df[SWEEP_VAR].unique())):
    frame = tag_df[tag_df[SWEEP_VAR] == agent_name].set_index('tag').reindex(
        tags)
    frame[SWEEP_VAR] = agent_name
    values = frame.whole_score.to_numpy(float)
    whole = (frame.experiments >= frame.tag_experiments).to_numpy()
    color = f'C{index}'
    ax.plot(closed, np.concatenate([values, values[:1]]), color=color,
            label=radar_label(frame.fillna({'experiments': 0})))
    ax.plot(angles[whole], values[whole], 'o', color=color)
    some = ~whole & np.isfinite(values)
    ax.plot(angles[some], values[some], 'o', markerfacecolor='white',
            color=color)
    if whole.all():
      ax.fill(closed, np.concatenate([values, values[:1]]), color=color,
              alpha=0.15)
    else:
      incomplete = True
  ax.set_xticks(angles)
  ax.set_xticklabels([t.replace('_', '\n') for t in tags])
  ax.set_ylim(0.0, 1.0)
  ax.set_yticks([0.25, 0.5, 0.75, 1.0])
  ax.set_yticklabels(['.25', '.5', '.75', '1'])
  ax.legend(loc=(1.05, 0.0), title='agent')
  if incomplete:
    fig.text(0.5, 0.02, 'filled point: the tag on all its experiments; '
             'hollow: on some; gap: none', ha='center', fontsize=9)
  fig.savefig(path, bbox_inches='tight', dpi=100)
  plt.close(fig)


def plot_episodic_returns(curves: pd.DataFrame, path: str) -> None:
  """One panel per experiment, one line per agent (paper Fig. 10)."""
  experiments = sorted(curves.experiment.unique())
  columns = min(5, len(experiments))
  rows = int(np.ceil(len(experiments) / columns))
  fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.6 * rows),
                           squeeze=False)
  agent_names = sorted(curves[SWEEP_VAR].unique())
  colors = {a: f'C{i}' for i, a in enumerate(agent_names)}
  for ax, experiment in zip(axes.flat, experiments):
    for agent_name in agent_names:
      curve = curves[(curves.experiment == experiment) &
                     (curves[SWEEP_VAR] == agent_name)].sort_values('episode')
      if not curve.empty:
        ax.plot(curve.episode, curve.mean_episode_return, marker='.',
                color=colors[agent_name], label=agent_name)
    ax.set_title(experiment, fontsize=9)
    if curves[curves.experiment == experiment].episode.max() > 100:
      ax.set_xscale('log')
    ax.tick_params(labelsize=7)
  for ax in list(axes.flat)[len(experiments):]:
    ax.axis('off')
  # Every agent once, even one missing from the first panel.
  legend = {}
  for ax in axes.flat:
    for handle, label in zip(*ax.get_legend_handles_labels()):
      legend.setdefault(label, handle)
  labels = [a for a in agent_names if a in legend]
  handles = [legend[a] for a in labels]
  fig.supxlabel('episode')
  fig.supylabel('mean episodic return over ids')
  fig.tight_layout(rect=(0, 0, 1, 1.0 - 0.5 / fig.get_figheight()))
  fig.legend(handles, labels, loc='upper center', ncol=len(agent_names),
             bbox_to_anchor=(0.5, 1.0), frameon=False)
  fig.savefig(path, dpi=100)
  plt.close(fig)


def analyze(save_path: str, agent_names: Optional[Sequence[str]],
            output_dir: str, units: bool = True,
            seeds: Optional[Sequence[int]] = None) -> Dict[str, str]:
  """Writes every table and plot; returns name -> path. `units`: include
  the jitted runner's units; `seeds`: only these agent seeds (see
  `load`)."""
  restore_series_append()
  agent_names = list(agent_names or (find_agents(save_path) if units
                                     else other_logs(save_path)))
  df, sweep_vars = load(save_path, agent_names, units, seeds)
  runs = df.groupby(SWEEP_VAR)[RUN_VAR].nunique()
  print(f'Loaded {len(df)} log rows: {df.bsuite_id.nunique()} ids; runs per '
        f'agent: {", ".join(f"{a} {n}" for a, n in runs.items())}.',
        flush=True)
  os.makedirs(output_dir, exist_ok=True)
  paths = {name: os.path.join(output_dir, name) for name in (
      'bsuite_scores.csv', 'bsuite_scores.md', 'bsuite_scores_by_tag.csv',
      'bsuite_radar.png', 'bsuite_bar.png', 'bsuite_bar_compare.png',
      'episodic_returns.csv', 'episodic_returns.png')}

  score_df = scores(df, sweep_vars)
  score_df.to_csv(paths['bsuite_scores.csv'], index=False)
  run_vars, sweep_vars = sweep_vars, [SWEEP_VAR]  # per agent from here on
  tag_df = scores_by_tag(score_df, sweep_vars)
  tag_df.sort_values([SWEEP_VAR, 'tag']).to_csv(  # one order every run
      paths['bsuite_scores_by_tag.csv'], index=False)
  with open(paths['bsuite_scores.md'], 'w') as f:
    f.write(markdown_table(score_df, tag_df))

  plot_radar(tag_df, paths['bsuite_radar.png'])
  bars = bar_plot_scores(score_df)
  summary_analysis.bsuite_bar_plot(bars, sweep_vars).save(
      paths['bsuite_bar.png'], dpi=80, verbose=False)
  summary_analysis.bsuite_bar_plot_compare(bars, sweep_vars).save(
      paths['bsuite_bar_compare.png'], dpi=60, verbose=False)

  curves = episodic_returns(df)
  curves.to_csv(paths['episodic_returns.csv'], index=False)
  plot_episodic_returns(curves, paths['episodic_returns.png'])

  # An agent with several seeds: each seed's scores, median and range.
  for name in agent_names:
    mine = df[df[SWEEP_VAR] == name]
    seed_runs = sorted((r for r in mine[RUN_VAR].unique()
                        if re.fullmatch(r'seed_\d+', r)),
                       key=lambda r: int(r[len('seed_'):]))
    if len(seed_runs) >= 2:
      key = f'bsuite_seeds_{name}.md'
      paths[key] = os.path.join(output_dir, key)
      with open(paths[key], 'w') as f:
        f.write(seeds_table(save_path, name, seed_runs,
                            loaded=(mine, run_vars)) + '\n')
  return paths


def other_logs(save_path: str) -> List[str]:
  """Agents under `save_path` with logs that are not jitted-runner units."""
  return [name for name in find_agents(save_path)
          if any(not is_unit_log(path)
                 for _, folder in result_folders(save_path, name)
                 for path in _logs(folder))]


def main(argv: Sequence[str]) -> None:
  del argv
  output_dir = FLAGS.output_dir or os.path.join(FLAGS.save_path, 'analysis')
  results.check_output_flag(output_dir, '--output_dir')
  try:
    seeds = None if FLAGS.seeds is None else parse_seeds(FLAGS.seeds)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  units = deep_sea_scores.has_units(FLAGS.save_path)
  if units:
    # run_bsuite --runner=jax units: bsuite's deep sea scores and plot, of
    # the agents and seeds asked for.
    try:
      paths = deep_sea_scores.report(FLAGS.save_path, output_dir,
                                     FLAGS.agents, seeds)
    except ValueError as error:
      print(f'{error} No deep sea report.', flush=True)
    else:
      with open(paths[deep_sea_scores.TABLE_FILE]) as f:
        print(f.read())
      for line in deep_sea_scores.costs(deep_sea_scores.select_units(
          deep_sea_scores.load_units(FLAGS.save_path), FLAGS.agents, seeds)):
        print(line)
      for path in paths.values():
        print(f'Wrote {path}')
    if not FLAGS.agents and not other_logs(FLAGS.save_path):
      return
  try:
    # Beside units: every agent asked for, with all its logs; else the
    # logs the units' report does not cover.
    paths = analyze(FLAGS.save_path, FLAGS.agents, output_dir,
                    units=bool(FLAGS.agents) or not units, seeds=seeds)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  for name in ['bsuite_scores.md'] + [n for n in paths
                                       if n.startswith('bsuite_seeds_')]:
    with open(paths[name]) as f:
      print(f.read())
  for path in paths.values():
    print(f'Wrote {path}')


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)  # (for its quiet logs; nothing here compiles)
