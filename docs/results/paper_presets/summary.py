"""The paper-settings arms of PE-DQN on deep sea, one row per arm and size.

  python docs/results/paper_presets/summary.py [--write]

--write puts the table into docs/study/paper_settings.md, between its
markers, instead of printing it.

For each arm folder here (run_arm.sh; `bdqn` holds BDQN+P on the same
seeds) and, beside them, today's default
(docs/results/bonus_support/default10, the same runner, seeds 10-19) and
BDQN+P (docs/results/bsuite/boot_dqn, seeds 0-4): per seed the episode at
which bsuite's analysis calls the size solved ('>B' if not within the
budget B), the first find, and the share of the episodes from the find to
the solve (or the budget) that were bad (`after_find.after_find`). Medians
over the seeds of each cell are in the last columns.
"""
import importlib.util
import os

import numpy as np
import pandas as pd

from experiments.lib import deep_sea_scores
from experiments.lib import results

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.dirname(HERE)
BESIDE = {'default (ours)': os.path.join(RESULTS, 'bonus_support',
                                         'default10'),
          'BDQN+P': os.path.join(RESULTS, 'bsuite')}


def _after_find_module():
  spec = importlib.util.spec_from_file_location(
      'after_find', os.path.join(RESULTS, 'bsuite', 'after_find.py'))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def rows(sizes=(40, 50)):
  after_find = _after_find_module()
  folders = {arm: os.path.join(HERE, arm) for arm in sorted(os.listdir(HERE))
             if deep_sea_scores.has_units(os.path.join(HERE, arm))}
  folders.update(BESIDE)
  out = []
  for arm, folder in folders.items():
    units = deep_sea_scores.load_units(folder)
    if arm in BESIDE:
      units = units[units.agent == ('boot_dqn' if arm == 'BDQN+P'
                                    else 'pe_dqn')]
    units = units[units['size'].isin(sizes) & (units.experiment == 'deep_sea')]
    for (agent, size), group in units.groupby(['agent', 'size']):
      label = (arm if arm in BESIDE or agent == 'pe_dqn' else
               'BDQN+P' if agent == 'boot_dqn' else f'{arm} ({agent})')

      solves, finds, shares = [], [], []
      for unit in group.itertuples():
        solved = (np.nan if pd.isna(unit.solved_episode)
                  else int(unit.solved_episode))
        solves.append(solved if not np.isnan(solved)
                      else float(unit.episodes) + 1)
        if pd.isna(unit.first_treasure_episode):
          finds.append(np.nan)
          shares.append(np.nan)
        else:
          found = after_find.after_find(unit, folder)
          finds.append(found['find'])
          shares.append(found['share'])
      cells = [
          (f'{int(s)}' if s <= u.episodes else f'>{u.episodes}')
          for s, u in zip(solves, group.itertuples())]
      out.append(dict(
          arm=label, size=int(size),
          seeds=','.join(str(s) for s in group.seed),
          solved=', '.join(cells),
          first_find=', '.join('-' if np.isnan(f) else str(int(f))
                               for f in finds),
          bad_share_after_find=', '.join('-' if np.isnan(s) else f'{s:.2f}'
                                         for s in shares),
          median_solved=float(np.median(solves)),
          median_find=(float(np.nanmedian(finds))
                       if not np.all(np.isnan(finds)) else np.nan)))
  return pd.DataFrame(out)


STUDY = os.path.join(os.path.dirname(RESULTS), 'study', 'paper_settings.md')
BEGIN, END = '<!-- arms table: begin -->', '<!-- arms table: end -->'


def markdown() -> str:
  lines = ['| arm | size | seeds | solved | first find | bad share after '
           'find | median solved | median find |',
           '|---|---:|---|---|---|---|---:|---:|']
  for row in rows().itertuples():
    lines.append(f'| {row.arm} | {row.size} | {row.seeds} | {row.solved} | '
                 f'{row.first_find} | {row.bad_share_after_find} | '
                 f'{row.median_solved:.0f} | {row.median_find:.0f} |')
  return '\n'.join(lines)


if __name__ == '__main__':
  import sys  # pylint: disable=g-import-not-at-top
  results.print_or_replace_block(sys.argv, STUDY, BEGIN, END, markdown)
