"""Table of the bonus-scale study: per variant and size, each seed's solve.

  python docs/results/bonus_support/summary.py
"""
import os

import pandas as pd

from experiments.lib import deep_sea_scores

HERE = os.path.dirname(os.path.abspath(__file__))


def cell(unit) -> str:
  """Episode solved, or '>B' (censored at B) with the first find if any."""
  if not pd.isna(unit.solved_episode):
    return f'{int(unit.solved_episode)}'
  if not pd.isna(unit.first_treasure_episode):
    return f'>{unit.episodes} (find {int(unit.first_treasure_episode)})'
  return f'>{unit.episodes}'


def main() -> None:
  variants = sorted(d for d in os.listdir(HERE)
                    if deep_sea_scores.has_units(os.path.join(HERE, d)))
  rows = {}
  for variant in variants:
    units = deep_sea_scores.load_units(os.path.join(HERE, variant))
    for size, group in units.groupby('size'):
      rows.setdefault(size, {})[variant] = (
          ', '.join(cell(u) for u in group.itertuples()) +
          f' (seeds {",".join(str(s) for s in group.seed)})')
  print('| size | ' + ' | '.join(variants) + ' |')
  print('|---:|' + '---|' * len(variants))
  for size in sorted(rows):
    print(f'| {size} | ' + ' | '.join(rows[size].get(v, '')
                                      for v in variants) + ' |')


if __name__ == '__main__':
  main()
