"""The tables of docs/study/bandit.md, from the committed bsuite units and
probe rows.

  python docs/results/bandit_bonus/summary.py [--write]

--write puts them into docs/study/bandit.md, between its markers, instead
of printing them.

1. Regret per episode of each agent's bandit units (seed 0, every id whose
   log holds bsuite's 10,000 episodes), in windows of episodes: median
   over the ids and the range.
2. The probe (`probe.py`, one row per 250 episodes of bandit/0): regret,
   how often the acting rule and the greedy rule pick the best arm, and the
   spread of each member at the best arm (whose reward is deterministic),
   per window of 1,000 episodes: medians over the window's rows.
"""
import glob
import os
import re
import sys

import pandas as pd

from experiments import analyze_bsuite
from experiments.lib import deep_sea_scores
from experiments.lib import doc_blocks

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.dirname(HERE)
STUDY = os.path.join(os.path.dirname(RESULTS), 'study', 'bandit.md')
BEGIN, END = '<!-- bandit tables: begin -->', '<!-- bandit tables: end -->'
BSUITE = os.path.join(RESULTS, 'bsuite')
AGENTS = ('dqn', 'boot_dqn', 'pe_dqn')
EDGES = (0, 1000, 3000, 6000, 10000)
# Probe rows: file suffix -> the setting it changed from our default.
PROBES = (('', 'our default'), ('_lr5e-4', 'learning_rate 5e-4 (Table 4)'),
          ('_huber1', 'huber_param 1'),
          ('_prior0', 'quantile_prior_scale 0'))
PROBE_WINDOW = 1000
# Deep sea with the Huber loss beside our default, on seeds that chose
# nothing: (label, folder, seeds).
DEEP_SEA_SEEDS = (20, 21, 22)
DEEP_SEA_ARMS = (
    ('our default', os.path.join(RESULTS, 'held_out'), DEEP_SEA_SEEDS),
    ('huber_param 1', os.path.join(HERE, 'deep_sea_huber1'), DEEP_SEA_SEEDS))


def unit_regret(agent: str) -> pd.DataFrame:
  """One row per finished bandit id of `agent`'s seed 0: its windows."""
  rows = []
  for path in sorted(glob.glob(os.path.join(
      BSUITE, agent, 'seed_0', 'bsuite_id_-_bandit-*.csv'))):
    log = analyze_bsuite.read_log(path)
    if log.episode.max() < EDGES[-1]:
      continue
    number = int(re.search(r'bandit-(\d+)\.csv$', path).group(1))
    rows.append([number] + analyze_bsuite.windowed_regret(log, EDGES))
  rows.sort()
  return pd.DataFrame(rows, columns=['id'] + [
      f'{a + 1}-{b}' for a, b in zip(EDGES, EDGES[1:])])


def units_table() -> str:
  windows = [f'{a + 1:,}-{b:,}' for a, b in zip(EDGES, EDGES[1:])]
  lines = ['| agent | ids (seed 0) | ' + ' | '.join(
      f'episodes {w}' for w in windows) + ' |',
           '|---|---|' + '---:|' * len(windows)]
  for agent in AGENTS:
    frame = unit_regret(agent)
    if frame.empty:
      continue
    lines.append(
        f'| {agent} | {doc_blocks.id_span(frame.id)} | ' + ' | '.join(
            doc_blocks.median_range(frame[c]) for c in frame.columns[1:])
        + ' |')
  return '\n'.join(lines)


def probe_table() -> str:
  lines = ['| setting | episodes | regret per episode | acting rule picks '
           'the best arm | greedy rule picks the best arm | quantile member '
           'std at the best arm | categorical member std at the best arm | '
           'smallest w over arms | spread of beta b over arms |',
           '|---|---|---:|---:|---:|---:|---:|---:|---:|']
  for suffix, label in PROBES:
    path = os.path.join(HERE, f'probe_bandit-0{suffix}.csv')
    if not os.path.exists(path):
      continue
    rows = pd.read_csv(path)
    step = int(rows.episode.iloc[0])  # the probe's --window: its first row
    window = (rows.episode - 1) // PROBE_WINDOW
    for _, part in rows.groupby(window):
      first = int(part.episode.min()) - step + 1
      last = int(part.episode.max())
      lines.append(
          f'| {label} | {first:,}-{last:,} | '
          f'{part.regret_per_episode.mean():.3f} | '
          f'{int(part.optimistic_is_best.sum())} of {len(part)} | '
          f'{int(part.greedy_is_best.sum())} of {len(part)} | '
          f'{part.quantile_std_best.median():.3f} | '
          f'{part.categorical_std_best.median():.4f} | '
          f'{part.w_min.median():.3f} | '
          f'{part.beta_bonus_spread.median():.2f} |')
  return '\n'.join(lines)


def deep_sea_table() -> str:
  """Per size where every arm holds all its seeds: each seed's solve
  episode (first find) and the median."""
  found = {}
  for label, folder, seeds in DEEP_SEA_ARMS:
    if not deep_sea_scores.has_units(folder):
      continue
    units = deep_sea_scores.load_units(folder)
    units = units[(units.agent == 'pe_dqn') &
                  (units.experiment == 'deep_sea') & units.seed.isin(seeds)]
    for size, group in units.sort_values('seed').groupby('size'):
      if len(group) == len(seeds):
        found.setdefault(int(size), {})[label] = (
            deep_sea_scores.seed_outcomes(group))
  labels = [label for label, _, _ in DEEP_SEA_ARMS]
  lines = ['| size | ' + ' | '.join(
      f'{label}, seeds 20-22: solved (first find)' for label in labels) + ' |',
           '|---:|' + '---|' * len(labels)]
  for size in sorted(found):
    if len(found[size]) < len(labels):
      continue
    lines.append(f'| {size} | ' + ' | '.join(
        f'{found[size][label]["solved"]} ({found[size][label]["first_find"]})'
        f'; median {found[size][label]["median_solved"]:g}'
        for label in labels) + ' |')
  return '\n'.join(lines)


def markdown() -> str:
  return (units_table() + '\n\nThe probe on bandit/0 (arm rewards 0, 0.1, '
          '..., 1; smallest gap 0.1), rows of 250 episodes read at the '
          "row's end, medians of a window's rows:\n\n" + probe_table() +
          '\n\nDeep sea, `pe_dqn` with the Huber loss beside our default on '
          "seeds that chose nothing (bsuite's solve rule; the Huber arm's "
          'budget 1,000 episodes):\n\n' + deep_sea_table())


if __name__ == '__main__':
  doc_blocks.print_or_replace_block(sys.argv, STUDY, BEGIN, END, markdown)
