"""The paper-settings arms of PE-DQN on deep sea, one row per arm and size.

  python docs/results/paper_presets/summary.py [--write]

--write puts the table into docs/study/paper_settings.md, between its
markers, instead of printing it.

For each arm folder here (run_arm.sh; `bdqn` holds BDQN+P on the same
seeds) and, beside them at the sizes the arms ran, today's default on the
same runner (docs/results/bonus_support: `default` at 10, `prior_n` at 20
and 30, seeds 10-12; `default10` at 40, seeds 10-19) and BDQN+P
(docs/results/bsuite/boot_dqn, seeds 0-4, at 40 and 50): per seed the episode at
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
from experiments.lib import doc_blocks

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.dirname(HERE)
BONUS_SUPPORT = os.path.join(RESULTS, 'bonus_support')
# (label, folder, agent, sizes) of the units shown beside the arms.
BESIDE = (
    ('default (ours)', os.path.join(BONUS_SUPPORT, 'default'), 'pe_dqn',
     (10,)),
    ('default (ours)', os.path.join(BONUS_SUPPORT, 'prior_n'), 'pe_dqn',
     (20, 30)),
    ('default (ours)', os.path.join(BONUS_SUPPORT, 'default10'), 'pe_dqn',
     (40,)),
    ('BDQN+P', os.path.join(RESULTS, 'bsuite'), 'boot_dqn', (40, 50)),
)
SIZES = (10, 20, 30, 40, 50)
HELD_OUT_SEED = 10  # Seeds from here on choose; those below report.


def _after_find_module():
  spec = importlib.util.spec_from_file_location(
      'after_find', os.path.join(RESULTS, 'bsuite', 'after_find.py'))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def _row(label, size, group, folder, after_find):
  solves, finds, shares = [], [], []
  for unit in group.itertuples():
    solves.append(float(unit.episodes) + 1 if pd.isna(unit.solved_episode)
                  else int(unit.solved_episode))
    if pd.isna(unit.first_treasure_episode):
      finds.append(np.nan)
      shares.append(np.nan)
    else:
      found = after_find.after_find(unit, folder)
      finds.append(found['find'])
      shares.append(found['share'])
  cells = [(f'{int(s)}' if s <= u.episodes else f'>{u.episodes}')
           for s, u in zip(solves, group.itertuples())]
  return dict(
      arm=label, size=int(size),
      seeds=','.join(str(s) for s in group.seed),
      solved=', '.join(cells),
      first_find=', '.join('-' if np.isnan(f) else str(int(f))
                           for f in finds),
      bad_share_after_find=', '.join('-' if np.isnan(s) else f'{s:.2f}'
                                     for s in shares),
      median_solved=float(np.median(solves)),
      median_find=(float(np.nanmedian(finds))
                   if not np.all(np.isnan(finds)) else np.nan))


def _deep_sea_units(folder, sizes):
  units = deep_sea_scores.load_units(folder)
  return units[units['size'].isin(sizes) & (units.experiment == 'deep_sea')]


def rows(sizes=SIZES):
  after_find = _after_find_module()
  out, arm_sizes = [], set()
  for arm in sorted(os.listdir(HERE)):
    folder = os.path.join(HERE, arm)
    if not deep_sea_scores.has_units(folder):
      continue
    units = _deep_sea_units(folder, sizes)
    for (agent, size), group in units.groupby(['agent', 'size']):
      if agent == 'pe_dqn':
        arm_sizes.add(int(size))
      label = (arm if agent == 'pe_dqn' else
               'BDQN+P' if agent == 'boot_dqn' else f'{arm} ({agent})')
      # The reported seeds (0-9) and the choosing ones (10-19) apart.
      for _, seeds in group.groupby(group.seed >= HELD_OUT_SEED):
        out.append(_row(label, size, seeds, folder, after_find))
  for label, folder, agent, beside_sizes in BESIDE:
    shown = [size for size in beside_sizes if size in arm_sizes]
    units = _deep_sea_units(folder, shown)
    for size, group in units[units.agent == agent].groupby('size'):
      out.append(_row(label, size, group, folder, after_find))
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
                 f'{row.median_solved:.0f} | '
                 f'{"-" if np.isnan(row.median_find) else f"{row.median_find:.0f}"} |')
  return '\n'.join(lines)


if __name__ == '__main__':
  import sys  # pylint: disable=g-import-not-at-top
  doc_blocks.print_or_replace_block(sys.argv, STUDY, BEGIN, END, markdown)
