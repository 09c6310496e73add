"""TDU against its baseline at one prior on stochastic deep sea, one row per
arm and size, and TDU's beta sweep on the held-out seeds.

  python docs/results/tdu_one_prior/summary.py [--write]

--write puts the table into docs/study/paper_settings.md, between its
markers, instead of printing it.

Arms (all at TDU's prior 3 unless named): TDU as reported (beta 1,
docs/results/bsuite/tdu), TDU with beta 0 (its bonus off: BDQN+P in TDU's
program, tdu_beta0 here), BDQN+P at prior 3 (boot_dqn_prior3 here) and at
its default prior 5 (docs/results/bsuite/boot_dqn), on the reported seeds
0-2; then every beta of docs/results/tdu_beta_sweep (beta_B/, seeds 10-12).
Per seed: the episode at which bsuite's analysis calls the size solved
('>B' if not within the budget B) and the first find.
"""
import os
import sys

import pandas as pd

from experiments.lib import deep_sea_scores
from experiments.lib import doc_blocks

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.dirname(HERE)
SWEEP = os.path.join(RESULTS, 'tdu_beta_sweep')
STUDY = os.path.join(os.path.dirname(RESULTS), 'study', 'paper_settings.md')
BEGIN, END = '<!-- tdu table: begin -->', '<!-- tdu table: end -->'
REPORTED_SEEDS = (0, 1, 2)

# (label, folder, agent) of the reported arms, in the table's order.
ARMS = (
    ('TDU (beta 1, prior 3)', os.path.join(RESULTS, 'bsuite'), 'tdu'),
    ('TDU beta 0 (prior 3)', os.path.join(HERE, 'tdu_beta0'), 'tdu'),
    ('BDQN+P prior 3', os.path.join(HERE, 'boot_dqn_prior3'), 'boot_dqn'),
    ('BDQN+P prior 5 (default)', os.path.join(RESULTS, 'bsuite'),
     'boot_dqn'),
)


def _units(folder, agent, sizes, seeds=None):
  if not deep_sea_scores.has_units(folder):
    return pd.DataFrame()
  units = deep_sea_scores.load_units(folder)
  keep = ((units.agent == agent) & units['size'].isin(sizes) &
          (units.experiment == 'deep_sea_stochastic'))
  if seeds is not None:
    keep &= units.seed.isin(seeds)
  return units[keep].sort_values('seed')


def _row(label, size, group):
  return dict(arm=label, size=int(size),
              **deep_sea_scores.seed_outcomes(group))


def rows(sizes=(30, 40)):
  out = []
  for size in sizes:
    for label, folder, agent in ARMS:
      group = _units(folder, agent, [size], REPORTED_SEEDS)
      if len(group):
        out.append(_row(label, size, group))
  if os.path.isdir(SWEEP):
    betas = sorted((name for name in os.listdir(SWEEP)
                    if name.startswith('beta_')),
                   key=lambda name: float(name[len('beta_'):]))
    for name in betas:
      group = _units(os.path.join(SWEEP, name), 'tdu', sizes)
      if group.empty:
        continue
      for size, by_size in group.groupby('size'):
        out.append(_row(f'TDU beta {name[len("beta_"):]} (prior 3)', size,
                        by_size))
  return pd.DataFrame(out)


def markdown() -> str:
  lines = ['| arm | size | seeds | solved | first find | median solved |',
           '|---|---:|---|---|---|---:|']
  for row in rows().itertuples():
    lines.append(f'| {row.arm} | {row.size} | {row.seeds} | {row.solved} | '
                 f'{row.first_find} | {row.median_solved:.0f} |')
  return '\n'.join(lines)


if __name__ == '__main__':
  doc_blocks.print_or_replace_block(sys.argv, STUDY, BEGIN, END, markdown)
