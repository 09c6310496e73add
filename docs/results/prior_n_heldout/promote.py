"""Adopting the size-scaled quantile prior on deep sea, for the committed units:

1. Every unit under docs/results/bsuite whose recorded config is no longer
   what its agent resolves to today (`bsuite_jax.config_changes`) moves,
   with its CSV, to docs/results/bsuite_prior_0.5/ (same layout). Those
   were trained with PE-DQN's quantile prior 0.5 at every size; they stay
   for the comparisons in docs/study/prior_and_scaling.md.
2. Each held-out unit in docs/results/prior_n_heldout/ (trained with
   `--quantile_prior_scale=0.05N`, the value the default now resolves to)
   is copied into docs/results/bsuite as a default unit: the same config,
   field for field, is checked first; its identity's `overrides` become
   '[]', as a run with no flag records. Nothing else in it changes.

Idempotent; run from the repository root:
  python docs/results/prior_n_heldout/promote.py [--dry_run]
"""
import ast
import glob
import json
import os
import shutil
import sys

from experiments.lib import bsuite_jax

REPORTED = 'docs/results/bsuite'
ARCHIVE = 'docs/results/bsuite_prior_0.5'
HELD_OUT = 'docs/results/prior_n_heldout'


def todays_config(identity, overrides):
  return bsuite_jax.config_record(bsuite_jax.build_agent(
      identity['agent'], identity['bsuite_id'], overrides,
      identity['horizon']).config)


def records(folder):
  for marker in sorted(glob.glob(os.path.join(folder, '*', 'seed_*',
                                              '*.csv.json'))):
    with open(marker) as f:
      yield marker, json.load(f)


def main(dry_run: bool) -> None:
  configs = {}
  moved = promoted = 0
  for marker, record in records(REPORTED):
    identity = record['identity']
    key = (identity['agent'], identity['bsuite_id'], identity['overrides'])
    if key not in configs:
      configs[key] = todays_config(
          identity, dict(ast.literal_eval(identity['overrides'])))
    if not bsuite_jax.config_changes(record['config'], configs[key]):
      continue
    target = os.path.join(ARCHIVE, os.path.relpath(marker, REPORTED))
    print(f'archive {marker} -> {target}')
    moved += 1
    if not dry_run:
      os.makedirs(os.path.dirname(target), exist_ok=True)
      for path in (marker[:-len('.json')], marker):
        shutil.move(path, os.path.join(os.path.dirname(target),
                                       os.path.basename(path)))
  for marker, record in records(HELD_OUT):
    identity = dict(record['identity'], overrides='[]')
    target = os.path.join(REPORTED, os.path.relpath(marker, HELD_OUT))
    if os.path.exists(target):
      continue
    changes = bsuite_jax.config_changes(record['config'],
                                        todays_config(identity, {}))
    if changes:
      print(f'not promoted, config differs from the default: {marker} '
            f'({"; ".join(changes)})')
      continue
    print(f'promote {marker} -> {target}')
    promoted += 1
    if not dry_run:
      os.makedirs(os.path.dirname(target), exist_ok=True)
      shutil.copyfile(marker[:-len('.json')], target[:-len('.json')])
      with open(target, 'w') as f:
        json.dump(dict(record, identity=identity), f, indent=1)  # As written.
  print(f'{moved} units archived, {promoted} promoted'
        f'{" (dry run)" if dry_run else ""}.')


if __name__ == '__main__':
  main('--dry_run' in sys.argv[1:])
