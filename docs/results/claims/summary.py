"""The comparisons behind docs/study/README.md's claims, tested: for each,
arm A against arm B size by size (`deep_sea_scores.compare_arms`) on the
committed units.

  python docs/results/claims/summary.py [--write]

--write puts the table into docs/study/README.md, between its markers,
instead of printing it. A size is compared where each arm has three seeds
or more; an unsolved seed counts as its budget + 1, so a ratio with one is
a bound. The sign test asks whether A is sooner at more sizes than chance
(untied sizes only); the rank test asks it of one size's seeds, and three
seeds against three never give p below 0.1.
"""
import os
import sys
from typing import NamedTuple, Tuple

import pandas as pd

from experiments.lib import deep_sea_scores
from experiments.lib import doc_blocks

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.dirname(HERE)
STUDY = os.path.join(os.path.dirname(RESULTS), 'study', 'README.md')
BEGIN, END = '<!-- claims table: begin -->', '<!-- claims table: end -->'
BSUITE = os.path.join(RESULTS, 'bsuite')


class Arm(NamedTuple):
  label: str
  folder: str
  agent: str
  seeds: Tuple[int, ...]


class Comparison(NamedTuple):
  claim: str
  experiment: str
  sizes: Tuple[int, ...]
  a: Arm
  b: Arm


def _arm(label, folder, agent, seeds):
  return Arm(label, os.path.join(RESULTS, folder), agent, tuple(seeds))


PE_DQN = _arm('PE-DQN, seeds 0-2 (0-4 at deep sea 40, 50)', 'bsuite', 'pe_dqn',
              range(5))
PE_DQN_HELD_OUT = _arm('PE-DQN, seeds 20-22 (chose nothing)', 'held_out',
                       'pe_dqn', (20, 21, 22))
BDQN = _arm('BDQN+P, seeds 0-2 (0-4 at deep sea 40, 50)', 'bsuite', 'boot_dqn',
            range(5))
TDU = _arm('TDU, seeds 0-2', 'bsuite', 'tdu', (0, 1, 2))
UCB = _arm('UCB, seeds 0-2', 'bsuite', 'ucb', (0, 1, 2))
BOTH = 'paper_presets/both'

COMPARISONS = (
    Comparison('PE-DQN ahead of BDQN+P to 34', 'deep_sea',
               tuple(range(10, 31, 2)), PE_DQN_HELD_OUT, BDQN),
    Comparison('PE-DQN ahead of BDQN+P to 34', 'deep_sea', (32, 34), PE_DQN,
               BDQN),
    Comparison('PE-DQN behind BDQN+P from 36', 'deep_sea',
               tuple(range(36, 51, 2)), PE_DQN, BDQN),
    *(Comparison('PE-DQN sooner than its ablation at 40', 'deep_sea', (40,),
                 PE_DQN, _arm(f'{label}, seeds 0-4', 'bsuite', agent,
                              range(5)))
      for label, agent in (('[QR/QR]', 'pe_dqn_qr_qr'),
                           ('[Ind.]', 'pe_dqn_ind'),
                           ('[C51/C51]', 'pe_dqn_c51_c51'))),
    Comparison('PE-DQN behind both baselines on the stochastic variant '
               'from 20', 'deep_sea_stochastic', tuple(range(20, 51, 2)),
               PE_DQN, BDQN),
    Comparison('PE-DQN behind both baselines on the stochastic variant '
               'from 20', 'deep_sea_stochastic', tuple(range(20, 51, 2)),
               PE_DQN, TDU),
    Comparison("UCB at about twice BDQN+P's episodes", 'deep_sea',
               tuple(range(24, 51, 2)), UCB, BDQN),
    Comparison('UCB level with BDQN+P on the stochastic variant from 26',
               'deep_sea_stochastic', tuple(range(26, 51, 2)), UCB, BDQN),
    Comparison('TDU and BDQN+P level on the stochastic variant',
               'deep_sea_stochastic', tuple(range(10, 51, 2)), TDU, BDQN),
    Comparison("TDU's bonus sooner at one prior (3)", 'deep_sea_stochastic',
               (30, 40), TDU,
               _arm('TDU beta 0, seeds 0-2', 'tdu_one_prior/tdu_beta0',
                    'tdu', (0, 1, 2))),
    Comparison("TDU's bonus sooner at one prior (3)", 'deep_sea_stochastic',
               (30, 40), TDU,
               _arm('BDQN+P prior 3, seeds 0-2',
                    'tdu_one_prior/boot_dqn_prior3', 'boot_dqn', (0, 1, 2))),
    Comparison("PE-DQN at Table 4's prior 20 and B.2's falling beta level "
               'with BDQN+P at 50', 'deep_sea', (50,),
               _arm('PE-DQN prior 20 + falling beta, seeds 0-4', BOTH,
                    'pe_dqn', range(5)), BDQN),
    Comparison("PE-DQN at Table 4's prior 20 and B.2's falling beta against "
               'our default', 'deep_sea', (10, 20, 30),
               _arm('PE-DQN prior 20 + falling beta, seeds 10-12', BOTH,
                    'pe_dqn', (10, 11, 12)), PE_DQN_HELD_OUT),
    Comparison('IDS-C51 [clip] no better than IDS-C51 (budget 5,000)',
               'deep_sea', (10, 12, 14, 16),
               _arm('IDS-C51 [clip], seeds 0-2', 'ids_clip', 'ids_c51',
                    (0, 1, 2)),
               _arm('IDS-C51, seeds 0-2', 'bsuite', 'ids_c51', (0, 1, 2))),
)

_LOADED = {}


def _units(arm: Arm, experiment: str, sizes) -> pd.DataFrame:
  if arm.folder not in _LOADED:
    _LOADED[arm.folder] = deep_sea_scores.load_units(arm.folder)
  units = _LOADED[arm.folder]
  return units[(units.agent == arm.agent) &
               (units.experiment == experiment) &
               units['size'].isin(sizes) & units.seed.isin(arm.seeds)]


def _p(value: float) -> str:
  return f'{value:.2g}' if value < 0.01 else f'{value:.2f}'


def _sizes(sizes) -> str:
  sizes = list(sizes)
  if len(sizes) > 2 and sizes == list(range(sizes[0], sizes[-1] + 1, 2)):
    return f'{sizes[0]}-{sizes[-1]}'
  return ', '.join(map(str, sizes))


def markdown() -> str:
  lines = ['| claim | A | B | variant | sizes compared | A sooner / level '
           '/ later (sizes, by median) | sign test p | per size, A\'s median '
           '/ B\'s: median [range] | smallest per-size rank test p |',
           '|---|---|---|---|---|---|---:|---|---:|']
  for c in COMPARISONS:
    result = deep_sea_scores.compare_arms(_units(c.a, c.experiment, c.sizes),
                                          _units(c.b, c.experiment, c.sizes))
    low, high = result['ratio_range']
    # One size: no sign test over sizes, its seeds' rank test says it all.
    sign = _p(result['sign_p']) if len(result['sizes']) > 1 else '-'
    variant = ('stochastic' if c.experiment == 'deep_sea_stochastic' else
               'deep sea')
    lines.append(
        f'| {c.claim} | {c.a.label} | {c.b.label} | {variant} | '
        f'{_sizes(result["sizes"])} | {result["sooner"]} / '
        f'{result["level"]} / {result["later"]} | {sign} | '
        f'{result["ratio_median"]:.2f} [{low:.2f}-{high:.2f}] | '
        f'{_p(min(result["rank_p"]))} |')
  return '\n'.join(lines)


if __name__ == '__main__':
  doc_blocks.print_or_replace_block(sys.argv, STUDY, BEGIN, END, markdown)
