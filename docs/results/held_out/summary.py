"""PE-DQN on deep sea sizes 10-30: the reported seeds 0-2, which were among
the seeds that chose its defaults (seeds 0-9), beside seeds 20-22, which
chose nothing.

  python docs/results/held_out/summary.py [--write]

--write puts the table into docs/study/defaults.md, between its markers,
instead of printing it. Units: docs/results/bsuite/pe_dqn/seed_{0,1,2}
and docs/results/held_out/pe_dqn/seed_{20,21,22} (the same command,
`run_bsuite --runner=jax --agent=pe_dqn --num_episodes=2000`, at bsuite's
deep sea ids 0-10). Per seed: the episode at which bsuite's analysis calls
the size solved ('>B' if not within the budget B) and the first find.
"""
import os
import sys

import numpy as np
import pandas as pd

from experiments.lib import deep_sea_scores
from experiments.lib import doc_blocks

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.dirname(HERE)
STUDY = os.path.join(os.path.dirname(RESULTS), 'study', 'defaults.md')
BEGIN, END = '<!-- held-out table: begin -->', '<!-- held-out table: end -->'
AGENT = 'pe_dqn'
SIZES = tuple(range(10, 31, 2))
# (label, folder, seeds) in the table's order.
ARMS = (('seeds 0-2 (chose the defaults)', os.path.join(RESULTS, 'bsuite'),
         (0, 1, 2)),
        ('seeds 20-22 (chose nothing)', HERE, (20, 21, 22)))


def _units(folder, seeds):
  if not deep_sea_scores.has_units(folder):
    return pd.DataFrame()
  units = deep_sea_scores.load_units(folder)
  keep = ((units.agent == AGENT) & units['size'].isin(SIZES) &
          (units.experiment == 'deep_sea') & units.seed.isin(seeds))
  return units[keep].sort_values('seed')


def outcomes():
  """{size: {arm label: `seed_outcomes`}} for arms with all seeds in."""
  out = {}
  for label, folder, seeds in ARMS:
    units = _units(folder, seeds)
    if units.empty:
      continue
    for size, group in units.groupby('size'):
      if len(group) == len(seeds):
        out.setdefault(int(size), {})[label] = (
            deep_sea_scores.seed_outcomes(group))
  return out


def markdown() -> str:
  found = outcomes()
  labels = [label for label, _, _ in ARMS]
  lines = ['| size | ' + ' | '.join(f'{label}: solved (first find)'
                                   for label in labels) + ' |',
           '|---:|' + '---|' * len(labels)]
  for size in sorted(found):
    cells = []
    for label in labels:
      cell = found[size].get(label)
      cells.append('' if cell is None else
                   f'{cell["solved"]} ({cell["first_find"]}); median '
                   f'{cell["median_solved"]:g}')
    lines.append(f'| {size} | ' + ' | '.join(cells) + ' |')
  paired = {size: by_arm for size, by_arm in found.items()
            if len(by_arm) == len(labels)}
  if not paired:
    return '\n'.join(lines)
  delta = np.array([by_arm[labels[1]]['median_solved'] -
                    by_arm[labels[0]]['median_solved']
                    for by_arm in paired.values()])
  unsolved = {label: sum('>' in by_arm[label]['solved']
                         for by_arm in paired.values()) for label in labels}
  lines += ['', f'Sizes with both seed sets in: {len(paired)} of '
            f'{len(SIZES)}. Sizes with a seed unsolved: '
            + ', '.join(f'{unsolved[label]} ({label})' for label in labels)
            + '. Per size, held-out median minus reported median: median '
            f'{np.median(delta):g} episodes [min {delta.min():g}, max '
            f'{delta.max():g}]; held out sooner at '
            f'{int(np.sum(delta < 0))}, later at {int(np.sum(delta > 0))}, '
            f'level at {int(np.sum(delta == 0))} sizes.']
  return '\n'.join(lines)


if __name__ == '__main__':
  doc_blocks.print_or_replace_block(sys.argv, STUDY, BEGIN, END, markdown)
