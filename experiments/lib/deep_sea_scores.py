"""bsuite's deep sea scores from the jitted runner's units, a table and
bsuite's scaling plot.

`run_bsuite --runner=jax` leaves, per (agent, id, seed), bsuite's CSV log and
a JSON record of its outcome in `<save_path>/<agent>/seed_K/`. This reads
them all and writes

  deep_sea_units.csv   one row per unit: agent, experiment, size, seed,
                       solved_episode (bsuite's `find_solution`), episodes
                       run, censored, first treasure, regret at the end
  deep_sea_scores.md   per experiment: agent x size, the episode each seed
                       was solved at (">B": unsolved when cut at B episodes,
                       censored; "unsolved": all of bsuite's episodes), and
                       per agent and seed bsuite's own `score` of its logs
  deep_sea_scaling.png episodes to solve against size, every agent, with
                       the 2^N episodes a dithering agent needs

bsuite's `score` counts a size as beaten when it is solved before
2^N + 100 episodes. It sees a censored log as unsolved, so with censored
units the score is a lower bound; the table says how many there are.
"""

import glob
import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

from bsuite.experiments.deep_sea import analysis as deep_sea_analysis
from bsuite.experiments.deep_sea_stochastic import analysis as stochastic_analysis
from bsuite.logging import csv_load
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
import numpy as np
import pandas as pd

from experiments.lib import results
from experiments.lib import seed_statistics
from experiments.lib import unit_files

EXPERIMENTS = ('deep_sea', 'deep_sea_stochastic')
ANALYSES = {'deep_sea': deep_sea_analysis,
            'deep_sea_stochastic': stochastic_analysis}
UNITS_FILE = 'deep_sea_units.csv'
TABLE_FILE = 'deep_sea_scores.md'
PLOT_FILE = 'deep_sea_scaling.png'
# The sizes of Fig. 4b's question past size 30 (PE-DQN paper), five seeds.
FIG4B_SIZES = (40, 50)


def has_units(save_path: str) -> bool:
  """Whether `save_path` holds units of `run_bsuite --runner=jax`."""
  return any(unit_files.log_runner(path[:-len('.json')]) == 'jax'
             for path in glob.glob(os.path.join(save_path, '*', 'seed_*',
                                                '*.csv.json')))


def load_units(save_path: str) -> pd.DataFrame:
  """One row per finished or censored unit under `save_path`."""
  rows = []
  for path in sorted(glob.glob(os.path.join(save_path, '*', 'seed_*',
                                            '*.csv.json'))):
    try:
      with open(path) as f:
        record = json.load(f)
      identity = record['identity']
    except (OSError, ValueError, KeyError, TypeError) as error:
      print(f'Skipped {path}: not a unit record ({type(error).__name__}).',
            flush=True)
      continue
    if unit_files.record_runner(record) != 'jax':
      continue  # bsuite's loop: a log without deep sea's unit fields
    # A damaged or replaced log is never scored as the unit it claims.
    mismatch = unit_files.csv_mismatch(
        path[:-len('.json')], record,
        unit_files.last_log_episode(record['episodes']))
    if mismatch:
      print(f'Skipped {path}: {mismatch}.', flush=True)
      continue
    experiment = identity['bsuite_id'].split('/')[0]
    if experiment not in EXPERIMENTS:
      continue
    rows.append(dict(
        agent=identity['agent'], experiment=experiment,
        bsuite_id=identity['bsuite_id'], size=int(record['size']),
        seed=int(identity['seed']), solved_episode=record['solved_episode'],
        episodes=int(record['episodes']), censored=bool(record['censored']),
        first_treasure_episode=record['first_treasure_episode'],
        regret_at_end=int(record['regret_at_end']),
        seconds=float(record['seconds']),
        env_steps_per_second=float(record['env_steps_per_second']),
        resumed_at_episode=int(record.get('resumed_at_episode', 0)),
        # Units written before `run_seeds` was recorded: an id's seeds
        # were trained in one program.
        run=','.join(map(str, record.get('run_seeds', ['all']))),
        # Units written before devices were recorded all trained on CPU.
        device=record.get('device', 'cpu')))
  columns = ['agent', 'experiment', 'bsuite_id', 'size', 'seed',
             'solved_episode', 'episodes', 'censored',
             'first_treasure_episode', 'regret_at_end', 'seconds',
             'env_steps_per_second', 'resumed_at_episode', 'run', 'device']
  return pd.DataFrame(rows, columns=columns).sort_values(
      ['experiment', 'agent', 'size', 'seed']).reset_index(drop=True)


def bsuite_scores(save_path: str, units: pd.DataFrame) -> pd.DataFrame:
  """bsuite's own `score` per agent, experiment and seed, on its logs."""
  results.restore_series_append()
  rows = []
  for (agent, experiment, seed), group in units.groupby(
      ['agent', 'experiment', 'seed']):
    folder = os.path.join(save_path, agent, f'seed_{seed}')
    df, _ = csv_load.load_bsuite({agent: folder})
    df = df[df.bsuite_env == experiment]
    rows.append(dict(agent=agent, experiment=experiment, seed=int(seed),
                     score=float(ANALYSES[experiment].score(df)),
                     sizes=len(group), censored=int(group.censored.sum())))
  return pd.DataFrame(rows, columns=['agent', 'experiment', 'seed', 'score',
                                     'sizes', 'censored'])


# Marks a cell with a unit trained on an accelerator (not the CPU's floats).
ACCELERATOR_MARK = '*'
ACCELERATOR_NOTE = (f'{ACCELERATOR_MARK}: trained on a GPU or TPU (float '
                    'results are not bit for bit the CPU\'s).')


def has_accelerator_units(units: pd.DataFrame) -> bool:
  """Whether any of these units trained on a GPU or TPU."""
  return bool((np.asarray(units.device) != 'cpu').any())


def _mark(units) -> str:
  return ACCELERATOR_MARK if has_accelerator_units(units) else ''


def solve_episodes(units: pd.DataFrame) -> List[float]:
  """Each unit's solve episode, in the units' order; an unsolved unit at
  its budget + 1 (later than any episode it ran)."""
  return [float(u.episodes + 1) if pd.isna(u.solved_episode)
          else float(u.solved_episode) for u in units.itertuples()]


def seed_outcomes(units: pd.DataFrame) -> Dict[str, object]:
  """The cells of a study row for units of one agent and size, in their
  order: 'seeds' ('0,1,2'), 'solved' ('500, >2000': the solve episode, or
  '>B' where not solved within the budget B), 'first_find' ('321, -') and
  'median_solved' (an unsolved seed counts as B + 1)."""
  rows = list(units.itertuples())
  solved = [not pd.isna(u.solved_episode) for u in rows]
  return dict(
      seeds=','.join(str(u.seed) for u in rows),
      solved=', '.join(str(int(u.solved_episode)) if ok else f'>{u.episodes}'
                       for u, ok in zip(rows, solved)),
      first_find=', '.join('-' if pd.isna(u.first_treasure_episode)
                           else str(int(u.first_treasure_episode))
                           for u in rows),
      median_solved=float(np.median(solve_episodes(units))))


def _cell(unit) -> str:
  mark = '' if unit.device == 'cpu' else ACCELERATOR_MARK
  if unit.solved_episode is not None and not pd.isna(unit.solved_episode):
    return str(int(unit.solved_episode)) + mark
  return (f'>{unit.episodes}' if unit.censored else 'unsolved') + mark


def summary(units: pd.DataFrame, experiment: str) -> str:
  """Sizes x agents: median episode solved [min, max] over seeds, with
  'k/n' where only k of n seeds are solved (cut ones shown as '>B')."""
  table = units[units.experiment == experiment]
  agents = sorted(table.agent.unique())
  # Seeds an agent usually has per size (the most common count): fewer
  # means some still to run, more a size run with extra seeds.
  usual = {agent: int(table[table.agent == agent].groupby('size').seed.count()
                      .mode().max()) for agent in agents}
  lines = ['| size | ' + ' | '.join(agents) + ' |',
           '|---:|' + '---:|' * len(agents)]
  for size, by_size in table.groupby('size'):
    cells = []
    for agent in agents:
      group = by_size[by_size.agent == agent]
      solved = group.solved_episode.dropna().astype(float)
      if group.empty:
        cells.append('')
      elif len(solved) == len(group):
        partial = ''
        if len(group) < usual[agent]:
          partial = f' ({len(group)} of {usual[agent]} seeds)'
        elif len(group) > usual[agent]:
          partial = f' ({len(group)} seeds)'
        cells.append(f'{np.median(solved):g} [{solved.min():g}, '
                     f'{solved.max():g}]{_mark(group)}{partial}')
      else:
        cut = ', '.join(_cell(u) for u in group.itertuples()
                        if pd.isna(u.solved_episode))
        cells.append(f'{len(solved)}/{len(group)} solved; {cut}')
    lines.append(f'| {size} | ' + ' | '.join(cells) + ' |')
  return '\n'.join(lines)


def solved_up_to(group: pd.DataFrame) -> Tuple[int, int, int]:
  """(largest size S such that every size run up to S is solved on every
  seed run there, 0 if the smallest is not; sizes solved on every seed;
  sizes run) for one agent's units of one experiment."""
  all_solved = group.groupby('size').solved_episode.apply(
      lambda s: bool(s.notna().all()))
  up_to = 0
  for size, solved in all_solved.sort_index().items():
    if not solved:
      break
    up_to = int(size)
  return up_to, int(all_solved.sum()), len(all_solved)


def solve_samples(units: pd.DataFrame) -> Dict[int, List[float]]:
  """{size: `solve_episodes` of its units in seed order}: one arm's units."""
  return {int(size): solve_episodes(group) for size, group in
          units.sort_values('seed').groupby('size')}


# Fewest seeds per arm for a size to be compared.
MIN_COMPARED_SEEDS = 3


def compare_arms(units_a: pd.DataFrame, units_b: pd.DataFrame) -> Dict:
  """Arm A against arm B, size by size, on the sizes where each has at
  least `MIN_COMPARED_SEEDS` seeds (each arm's units already filtered to
  its agent, experiment and seeds).

  Per size: each arm's median solve episode (`solve_samples`) and the
  rank test's p (`seed_statistics.rank_test_p`). Over sizes: at how many
  A's median is lower (A sooner), equal, higher; the sign test's p over
  the untied sizes; the median and range of A's median over B's.
  """
  a, b = solve_samples(units_a), solve_samples(units_b)
  sizes = sorted(size for size in set(a) & set(b)
                 if min(len(a[size]), len(b[size])) >= MIN_COMPARED_SEEDS)
  if not sizes:
    raise ValueError('compare_arms: no size where both arms have '
                     f'{MIN_COMPARED_SEEDS} seeds or more.')
  median_a = np.array([np.median(a[size]) for size in sizes])
  median_b = np.array([np.median(b[size]) for size in sizes])
  sooner, later = int(np.sum(median_a < median_b)), int(
      np.sum(median_a > median_b))
  ratios = median_a / median_b
  return dict(
      sizes=sizes, median_a=median_a.tolist(), median_b=median_b.tolist(),
      seeds_a=[len(a[size]) for size in sizes],
      seeds_b=[len(b[size]) for size in sizes],
      rank_p=[seed_statistics.rank_test_p(a[size], b[size])
              for size in sizes],
      sooner=sooner, level=len(sizes) - sooner - later, later=later,
      sign_p=seed_statistics.sign_test_p(sooner, later),
      ratio_median=float(np.median(ratios)),
      ratio_range=(float(ratios.min()), float(ratios.max())))


HEADLINE_SEEDS = (0, 1, 2)


def _seed_range(seeds) -> str:
  seeds = sorted(int(s) for s in seeds)
  if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
    return f'{seeds[0]}-{seeds[-1]}'
  return ', '.join(map(str, seeds))


def headline(units: pd.DataFrame,
             experiments=('deep_sea', 'deep_sea_stochastic'),
             seeds=HEADLINE_SEEDS) -> str:
  """Agents x experiments: 'every seed solved up to size S (k of n sizes
  run solved on every seed)' over `seeds`, the README's one-table summary.

  A size counts only where every one of `seeds` is in (other seeds' units
  are left out); sizes missing one are named as left out of the cell.
  """
  agents = sorted(units.agent.unique())
  lines = ['| agent | ' + ' | '.join(experiments) + ' |',
           '|---|' + '---|' * len(experiments)]
  wanted = set(seeds)
  for agent in agents:
    cells = []
    for experiment in experiments:
      group = units[(units.agent == agent) & (units.experiment == experiment)
                    & units.seed.isin(seeds)]
      if group.empty:
        cells.append('')
        continue
      complete = group.groupby('size').seed.apply(
          lambda s: wanted <= set(s))
      partial = sorted(int(size) for size, ok in complete.items() if not ok)
      group = group[group['size'].isin(complete[complete].index)]
      if group.empty:
        cells.append(f'no size with seeds {_seed_range(seeds)} (sizes '
                     f'{", ".join(map(str, partial))} with fewer)')
        continue
      up_to, solved, run = solved_up_to(group)
      lead = f'up to {up_to}' if up_to else 'none from the smallest'
      left = (f'; left out, with fewer seeds: size'
              f'{"s" if len(partial) > 1 else ""} '
              f'{", ".join(map(str, partial))}' if partial else '')
      cells.append(f'{lead} ({solved} of {run} sizes{left})')
    lines.append(f'| {agent} | ' + ' | '.join(cells) + ' |')
  return '\n'.join(lines)


def large_sizes(units: pd.DataFrame, sizes=FIG4B_SIZES) -> str:
  """Fig. 4b's question past size 30, deep sea at `sizes`: per agent, size
  and seed, the episode solved with the first find and the regret there
  (at the cut for a censored unit), and how many seeds found the treasure."""
  table = units[(units.experiment == 'deep_sea') &
                units['size'].isin(sizes)]
  if table.empty:
    return ''
  seeds = sorted(table.seed.unique())
  lines = ['| agent | size | ' + ' | '.join(f'seed {s}' for s in seeds) +
           ' | seeds with a find | median regret |',
           '|---|---:|' + '---|' * len(seeds) + '---:|---:|']
  for (agent, size), group in table.groupby(['agent', 'size']):
    by_seed = {}
    for unit in group.itertuples():
      find = ('no find' if pd.isna(unit.first_treasure_episode) else
              f'find {int(unit.first_treasure_episode)}')
      by_seed[unit.seed] = f'{_cell(unit)} ({find}; {unit.regret_at_end})'
    found = int(group.first_treasure_episode.notna().sum())
    lines.append(f'| {agent} | {size} | ' + ' | '.join(
        by_seed.get(s, '') for s in seeds) +
                 f' | {found}/{len(group)} | '
                 f'{np.median(group.regret_at_end):g} |')
  return '\n'.join(lines)


def markdown(units: pd.DataFrame, scores: pd.DataFrame) -> str:
  """Per experiment: agent x size cells per seed, then bsuite's scores."""
  lines = []
  seeds = sorted(units.seed.unique())
  for experiment, table in units.groupby('experiment'):
    lines += [f'## {experiment}', '',
              'Median episode solved [min, max] over seeds:', '',
              summary(units, experiment), '',
              'Episode at which bsuite\'s analysis calls the size solved, per '
              'seed (">B": cut unsolved at B episodes, censored).', '',
              '| agent | size | ' + ' | '.join(f'seed {s}' for s in seeds) +
              ' | median solved | first treasure (median) |',
              '|---|---:|' + '---:|' * len(seeds) + '---:|---:|']
    for (agent, size), group in table.groupby(['agent', 'size']):
      by_seed = {u.seed: _cell(u) for u in group.itertuples()}
      solved = group.solved_episode.dropna().astype(float)
      median = (f'{np.median(solved):g}' if len(solved) == len(group)
                else f'{np.median(solved):g} ({len(solved)}/{len(group)})'
                if len(solved) else 'n/a')
      finds = group.first_treasure_episode.dropna().astype(float)
      lines.append(f'| {agent} | {size} | ' + ' | '.join(
          by_seed.get(s, '') for s in seeds) + f' | {median} | ' +
                   (f'{np.median(finds):g}' if len(finds) else 'n/a') + ' |')
    lines += ['', f'bsuite\'s {experiment} score per seed (fraction of the '
              'sizes that seed ran, in brackets, solved before 2^N + 100 '
              'episodes; a lower bound where units are censored):', '',
              '| agent | sizes run | censored | ' +
              ' | '.join(f'seed {s}' for s in seeds) + ' |',
              '|---|---:|---:|' + '---:|' * len(seeds)]
    for agent, group in scores[scores.experiment == experiment].groupby(
        'agent'):
      # Seeds differ in the sizes they ran (sizes 40 and 50 have five).
      by_seed = {r.seed: f'{r.score:.3f} ({r.sizes})'
                 for r in group.itertuples()}
      lines.append(f'| {agent} | {group.sizes.max()} | '
                   f'{group.censored.sum()} | ' +
                   ' | '.join(by_seed.get(s, '') for s in seeds) + ' |')
    lines.append('')
  if has_accelerator_units(units):
    lines += [ACCELERATOR_NOTE, '']
  large = large_sizes(units)
  if large:
    lines += ['## deep_sea sizes ' + ' and '.join(map(str, FIG4B_SIZES)),
              '', 'Per seed: episode solved (">B": censored at B), then in '
              'brackets the first episode that found the treasure and the '
              'regret (bad episodes) at the solve or the cut.', '', large, '']
  return '\n'.join(lines)


def median_line(group: pd.DataFrame) -> pd.Series:
  """One agent's median episode solved per size (index: size), over the
  sizes where it ran at least its usual number of seeds (the most common
  count; a median over fewer would hide the unsolved ones) and every seed
  is solved."""
  seeds = group.groupby('size').seed.count()
  usual = seeds.mode().max()
  sizes = [size for size in seeds.index[seeds >= usual]
           if group[group['size'] == size].solved_episode.notna().all()]
  return group[group['size'].isin(sizes)].groupby(
      'size').solved_episode.median().astype(float)


def plot(units: pd.DataFrame, path: str) -> None:
  """bsuite's scaling plot: episodes to solve against size, per agent
  (`median_line`, seeds as dots, censored seeds as open triangles at their
  budget), and the 2^N line of dithering. An agent keeps its colour in
  every panel."""
  experiments = sorted(units.experiment.unique())
  palette = plt.get_cmap('tab10')
  colors = {agent: palette(i % 10)
            for i, agent in enumerate(sorted(units.agent.unique()))}
  fig, axes = plt.subplots(1, max(len(experiments), 1),
                           figsize=(6 * max(len(experiments), 1), 4.5),
                           squeeze=False)
  for ax, experiment in zip(axes[0], experiments):
    table = units[units.experiment == experiment]
    for agent, group in table.groupby('agent'):
      color = colors[agent]
      solved = group[group.solved_episode.notna()]
      ax.scatter(solved['size'], solved.solved_episode.astype(float), s=12,
                 color=color, alpha=0.6)
      cut = group[group.solved_episode.isna()]
      ax.scatter(cut['size'], cut.episodes, s=30, marker='^',
                 facecolors='none', edgecolors=color)
      medians = median_line(group)
      ax.plot(medians.index, medians.values, color=color, label=agent)
    sizes = np.arange(table['size'].min(), table['size'].max() + 1)
    ax.plot(sizes, 2.0 ** sizes, 'k--', linewidth=1,
            label='2^N (dithering)')
    # Log scale: the 2^N line and bsuite's 10,000 episodes on one axis.
    ax.set_yscale('log')
    ax.set_ylim(10, 2e4)
    ax.axhline(1e4, color='grey', linewidth=0.8, linestyle=':')
    ax.set_xlabel('deep sea size N')
    ax.set_ylabel('episodes until < 90% bad episodes' if
                  experiment == 'deep_sea' else
                  'episodes until < 80% bad episodes')
    ax.set_title(f'{experiment} (triangles: unsolved when cut)')
    ax.legend(loc='upper left', fontsize=8)
  fig.tight_layout()
  temporary = path + '.tmp.png'
  fig.savefig(temporary, dpi=100)
  plt.close(fig)
  os.replace(temporary, path)


def select_units(units: pd.DataFrame, agents: Optional[Sequence[str]] = None,
                 seeds: Optional[Sequence[int]] = None) -> pd.DataFrame:
  """The rows of `units` (`load_units`) of `agents` and `seeds`; None: all."""
  keep = np.ones(len(units), bool)
  if agents is not None:
    keep &= units.agent.isin(list(agents)).to_numpy()
  if seeds is not None:
    keep &= units.seed.isin([int(s) for s in seeds]).to_numpy()
  return units[keep].reset_index(drop=True)


def report(save_path: str, output_dir: str,
           agents: Optional[Sequence[str]] = None,
           seeds: Optional[Sequence[int]] = None) -> Dict[str, str]:
  """Writes the units table, the markdown scores and the plot, over the
  units of `agents` and `seeds` (None: every one under `save_path`).
  ValueError when there are none."""
  units = select_units(load_units(save_path), agents, seeds)
  if units.empty:
    which = ''.join(f', {name} {", ".join(map(str, values))}'
                    for name, values in (('agents', agents), ('seeds', seeds))
                    if values is not None)
    raise ValueError(f'No deep sea units (*.csv.json) under {save_path}'
                     f'{which}.')
  os.makedirs(output_dir, exist_ok=True)
  paths = {name: os.path.join(output_dir, name)
           for name in (UNITS_FILE, TABLE_FILE, PLOT_FILE)}
  units.to_csv(paths[UNITS_FILE], index=False)
  scores = bsuite_scores(save_path, units)
  with open(paths[TABLE_FILE], 'w') as f:
    f.write(markdown(units, scores))
  plot(units, paths[PLOT_FILE])
  return paths


def costs(units: pd.DataFrame) -> List[str]:
  """Per agent, experiment and device: wall time of its runs (the seeds
  trained in one program share its time) and env steps per second, for
  BUILD.md's costs (a GPU's units apart from the CPU's)."""
  lines = []
  for (agent, experiment, device), group in units.groupby(
      ['agent', 'experiment', 'device']):
    runs = group.groupby(['bsuite_id', 'run']).agg(
        seconds=('seconds', 'max'), rate=('env_steps_per_second', 'max'))
    resumed = int((group.resumed_at_episode > 0).sum())
    where = '' if device == 'cpu' else f' on {device}'
    lines.append(f'{agent} {experiment}{where}: {len(group)} units in '
                 f'{len(runs)} '
                 f'runs, {runs.seconds.sum() / 3600:.2f} h of wall time, '
                 f'median {runs.rate.median():.0f} env steps/s (all seeds '
                 'of a run)' + (
                     f'; {resumed} resumed after a stop, counted from the '
                     'resume only' if resumed else ''))
  return lines
