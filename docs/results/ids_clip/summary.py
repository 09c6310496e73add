"""IDS-C51 [clip] (rho^2 floored at 0.25) beside IDS-C51 on bsuite's deep
sea, one row per agent and size.

  python docs/results/ids_clip/summary.py [--write]

--write puts the table into docs/study/baselines.md, between its markers,
instead of printing it. Units: docs/results/ids_clip/ids_c51 ([clip]) and
docs/results/bsuite/ids_c51 (no floor), seeds 0-2, budget 5,000. Per seed:
the episode at which bsuite's analysis calls the size solved ('>B' if not
within the budget B), the first find and the regret at the solve.
"""
import os
import sys

import pandas as pd

from experiments.lib import deep_sea_scores
from experiments.lib import doc_blocks

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.dirname(HERE)
STUDY = os.path.join(os.path.dirname(RESULTS), 'study', 'baselines.md')
BEGIN, END = '<!-- ids clip table: begin -->', '<!-- ids clip table: end -->'
SEEDS = (0, 1, 2)
ARMS = (('IDS-C51 [clip]', HERE), ('IDS-C51', os.path.join(RESULTS, 'bsuite')))


def _units(folder):
  if not deep_sea_scores.has_units(folder):
    return pd.DataFrame()
  units = deep_sea_scores.load_units(folder)
  return units[(units.agent == 'ids_c51') & (units.experiment == 'deep_sea')
               & units.seed.isin(SEEDS)]


def markdown() -> str:
  arms = [(label, _units(folder)) for label, folder in ARMS]
  clip = arms[0][1]
  sizes = sorted(clip['size'].unique()) if len(clip) else []
  lines = ['| agent | size | seeds | solved | first find | regret at the '
           'solve | median solved |', '|---|---:|---|---|---|---|---:|']
  for size in sizes:
    for label, units in arms:
      if units.empty:
        continue
      group = units[units['size'] == size].sort_values('seed')
      if group.empty:
        continue
      cells = deep_sea_scores.seed_outcomes(group)
      regrets = ', '.join(str(int(r)) for r in group.regret_at_end)
      lines.append(f'| {label} | {size} | {cells["seeds"]} | '
                   f'{cells["solved"]} | {cells["first_find"]} | {regrets} | '
                   f'{cells["median_solved"]:.0f} |')
  return '\n'.join(lines)


if __name__ == '__main__':
  doc_blocks.print_or_replace_block(sys.argv, STUDY, BEGIN, END, markdown)
