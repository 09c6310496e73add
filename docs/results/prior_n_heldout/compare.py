"""The 0.05 N quantile prior against the fixed prior of 0.5 on the reported
seeds. Prints a markdown table: per size and seed, episode solved (">B":
censored at B) and first find, for the old default (prior 0.5,
docs/results/bsuite_prior_0.5) and the 0.05 N prior (this folder), with
BDQN+P's median solve beside them. Run from the repository root:
  python docs/results/prior_n_heldout/compare.py
"""
import numpy as np
import pandas as pd

from experiments.lib import deep_sea_scores


def cell(unit):
  if unit is None:
    return ''
  solved = (f'>{unit.episodes}' if pd.isna(unit.solved_episode)
            else str(int(unit.solved_episode)))
  find = ('no find' if pd.isna(unit.first_treasure_episode)
          else f'find {int(unit.first_treasure_episode)}')
  return f'{solved} ({find})'


def median_solved(units):
  """The median episode solved, or how many solved where some did not."""
  if units.solved_episode.isna().any():
    return f'{units.solved_episode.notna().sum()}/{len(units)} solved'
  return f'{np.median(units.solved_episode):g}'


prior = deep_sea_scores.load_units('docs/results/prior_n_heldout')
old = deep_sea_scores.load_units('docs/results/bsuite_prior_0.5')
old = old[old.experiment == 'deep_sea']
reported = deep_sea_scores.load_units('docs/results/bsuite')
reported = reported[reported.experiment == 'deep_sea']
prior = prior[prior.experiment == 'deep_sea']
print('| size | seed | prior 0.5 (old default) | prior 0.05 N | '
      'BDQN+P median solved |')
print('|---:|---:|---|---|---:|')
for size in sorted(prior['size'].unique()):
  boot = reported[(reported.agent == 'boot_dqn') & (reported['size'] == size)]
  for seed in sorted(prior[prior['size'] == size].seed.unique()):
    def unit(units):
      rows = units[(units.agent == 'pe_dqn') & (units['size'] == size) &
                   (units.seed == seed)]
      return next(rows.itertuples(), None)
    print(f'| {size} | {seed} | {cell(unit(old))} | {cell(unit(prior))} '
          f'| {median_solved(boot)} |')
