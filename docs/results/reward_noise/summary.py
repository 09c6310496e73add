"""The table of docs/study/reward_noise.md, from the committed bsuite units.

  python docs/results/reward_noise/summary.py [--write]

--write puts it into docs/study/reward_noise.md, between its markers,
instead of printing it.

For each agent (seed 0) and each of catch_noise's five noise scales (four
ids each in bsuite's sweep): bsuite's catch score of the scale's finished
ids (what `catch_noise`'s score averages over the scales before taking
mean minus std), and the regret per episode in windows of episodes,
median over the ids and the range. Regret is bsuite's `total_regret`,
counted on the noise-free reward (1 per episode for a policy that always
catches; about 1.6 for a uniform policy, bsuite's BASE_REGRET).
"""
import glob
import os
import re
import sys

import numpy as np
import pandas as pd

from bsuite.experiments.catch import analysis as catch_analysis
from bsuite.experiments.catch_noise import sweep as catch_noise_sweep
from experiments import analyze_bsuite
from experiments.lib import doc_blocks

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.dirname(HERE)
STUDY = os.path.join(os.path.dirname(RESULTS), 'study', 'reward_noise.md')
BEGIN = '<!-- reward noise tables: begin -->'
END = '<!-- reward noise tables: end -->'
BSUITE = os.path.join(RESULTS, 'bsuite')
AGENTS = ('dqn', 'boot_dqn', 'pe_dqn')
EXPERIMENT = 'catch_noise'
EDGES = (0, 1000, 3000, 6000, 10000)
# The probes: pe_dqn on catch_noise/12 (s = 3), seed 0, its first 3,000
# episodes, one setting changed from our default: (label, folder). The
# first arm is the whole-suite unit itself, read to episode 3,000.
PROBE_ID = 12
PROBE_EDGES = (0, 500, 1000, 2000, 3000)
PROBE_ARMS = (
    ('our default (the whole-suite unit)', BSUITE),
    ("s = 1's support (v_min, v_max = -10.07, 10.07)",
     os.path.join(HERE, 'support_s1')),
    ('beta falling from 5 to 0 over episodes 1-1,000 (beta_final 0)',
     os.path.join(HERE, 'beta_final0')),
    ('no bonus (beta 0 throughout)', os.path.join(HERE, 'beta0')))


def noise_scale(bsuite_id_number: int) -> float:
  """catch_noise's reward noise scale (std of the Gaussian added to every
  reward) at id `bsuite_id_number`, from bsuite's sweep."""
  return float(catch_noise_sweep.SETTINGS[bsuite_id_number]['noise_scale'])


def finished_logs(agent: str):
  """(id number, log) of each catch_noise id of `agent`'s seed 0 whose log
  holds bsuite's whole episode count, in id order."""
  found = []
  for path in glob.glob(os.path.join(
      BSUITE, agent, 'seed_0', f'bsuite_id_-_{EXPERIMENT}-*.csv')):
    log = analyze_bsuite.read_log(path)
    if log.episode.max() < catch_noise_sweep.NUM_EPISODES:
      continue
    number = int(re.search(r'-(\d+)\.csv$', path).group(1))
    found.append((number, log))
  return sorted(found, key=lambda pair: pair[0])


def rows(agent: str):
  """One dict per noise scale that holds a finished id of `agent`."""
  by_scale = {}
  for number, log in finished_logs(agent):
    by_scale.setdefault(noise_scale(number), []).append((number, log))
  out = []
  for scale in sorted(by_scale):
    pairs = by_scale[scale]
    regrets = np.array([analyze_bsuite.windowed_regret(log, EDGES)
                        for _, log in pairs])
    score = catch_analysis.score(pd.concat([log for _, log in pairs]))
    out.append(dict(scale=scale, ids=[n for n, _ in pairs], score=score,
                    regrets=regrets))
  return out


def table() -> str:
  windows = [f'{a + 1:,}-{b:,}' for a, b in zip(EDGES, EDGES[1:])]
  lines = ['| agent | noise scale | ids (seed 0) | catch score | ' +
           ' | '.join(f'regret per episode, episodes {w}' for w in windows)
           + ' |', '|---|---:|---|---:|' + '---:|' * len(windows)]
  for agent in AGENTS:
    for row in rows(agent):
      lines.append(
          f'| {agent} | {row["scale"]:g} | {doc_blocks.id_span(row["ids"])} | '
          f'{row["score"]:.3f} | ' + ' | '.join(
              doc_blocks.median_range(row['regrets'][:, k], 2)
              for k in range(len(windows)))
          + ' |')
  return '\n'.join(lines)


def probe_table() -> str:
  """Regret per episode of each probe arm that has run its 3,000
  episodes, in PROBE_EDGES' windows."""
  windows = [f'{a + 1:,}-{b:,}' for a, b in zip(PROBE_EDGES, PROBE_EDGES[1:])]
  lines = ['| setting | ' + ' | '.join(
      f'regret per episode, episodes {w}' for w in windows) + ' |',
           '|---|' + '---:|' * len(windows)]
  for label, folder in PROBE_ARMS:
    path = os.path.join(folder, 'pe_dqn', 'seed_0',
                        f'bsuite_id_-_{EXPERIMENT}-{PROBE_ID}.csv')
    if not os.path.exists(path):
      continue
    log = analyze_bsuite.read_log(path)
    if log.episode.max() < PROBE_EDGES[-1]:
      continue
    lines.append(f'| {label} | ' + ' | '.join(
        f'{r:.2f}' for r in analyze_bsuite.windowed_regret(log, PROBE_EDGES))
                 + ' |')
  return '\n'.join(lines)


def markdown() -> str:
  return (table() + f'\n\nThe probes: `pe_dqn` on {EXPERIMENT}/'
          f'{PROBE_ID} (s = {noise_scale(PROBE_ID):g}), seed 0, one setting '
          'changed from our default, regret per episode (a uniform policy '
          'pays about 1.6):\n\n' + probe_table())


if __name__ == '__main__':
  doc_blocks.print_or_replace_block(sys.argv, STUDY, BEGIN, END, markdown)
