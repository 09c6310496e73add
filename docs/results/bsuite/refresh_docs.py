"""Every table in README.md, BUILD.md and docs/ that is made from committed
data: where it lives, and the function that makes it. Run from the
repository root after committing units:

  python docs/results/bsuite/refresh_docs.py          # rewrites them
  python docs/results/bsuite/refresh_docs.py --check  # names the stale ones

`tests/test_generated_docs.py` fails when a document's block differs from
what its generator makes of the committed data.
"""

import functools
import os
import sys
from typing import Callable, List, NamedTuple, Optional, Sequence

# The repository root (this file is docs/results/bsuite/refresh_docs.py),
# importable from there as a script is run.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
if ROOT not in sys.path:
  sys.path.insert(0, ROOT)


class Block(NamedTuple):
  path: str                 # the document, from the repository root
  start: str                # the line that opens the block
  end: str                  # the line that closes it
  body: Callable[[], str]   # what goes between them


# PE-DQN's units from before the size-scaled prior (its quantile prior 0.5
# at every size; docs/results/prior_n_heldout/promote.py moved them) stay
# in the tables as their own columns, beside today's default.
OLD_DEFAULT = ' (prior 0.5)'
# The ablations run only at sizes 40 and 50 (Fig. 4b's question): they
# have their own table, not columns of the size-by-size ones.
ABLATIONS = ('pe_dqn_qr_qr', 'pe_dqn_c51_c51', 'pe_dqn_ind')
RUNNER_CSVS = ('docs/results/benchmarks/runners.csv',
               'docs/results/benchmarks/runners_pe_dqn.csv')

_UNITS = {}


def _units():
  """(all deep sea units, those of the size-by-size tables), read once."""
  if not _UNITS:
    import pandas as pd  # pylint: disable=g-import-not-at-top
    from experiments.lib import deep_sea_scores  # pylint: disable=g-import-not-at-top
    old = deep_sea_scores.load_units('docs/results/bsuite_prior_0.5')
    old['agent'] = old['agent'] + OLD_DEFAULT
    units = pd.concat([deep_sea_scores.load_units('docs/results/bsuite'),
                       old], ignore_index=True)
    _UNITS['all'] = units
    _UNITS['sweep'] = units[~units.agent.isin(
        ABLATIONS + tuple(a + OLD_DEFAULT for a in ABLATIONS))]
  return _UNITS['all'], _UNITS['sweep']


def _with_note(table: str, shown) -> str:
  """The table, and under it what '*' means if a unit it shows has one."""
  from experiments.lib import deep_sea_scores  # pylint: disable=g-import-not-at-top
  if deep_sea_scores.has_accelerator_units(shown):
    return f'{table}\n\n{deep_sea_scores.ACCELERATOR_NOTE}'
  return table


def _summary(experiment: str) -> str:
  from experiments.lib import deep_sea_scores  # pylint: disable=g-import-not-at-top
  _, units = _units()
  return _with_note(deep_sea_scores.summary(units, experiment),
                    units[units.experiment == experiment])


def _large_sizes() -> str:
  from experiments.lib import deep_sea_scores  # pylint: disable=g-import-not-at-top
  units, _ = _units()
  return _with_note(deep_sea_scores.large_sizes(units),
                    units[(units.experiment == 'deep_sea') &
                          units['size'].isin(deep_sea_scores.FIG4B_SIZES)])


def _costs() -> str:
  from experiments.lib import deep_sea_scores  # pylint: disable=g-import-not-at-top
  units, _ = _units()
  return '\n'.join('- ' + line for line in deep_sea_scores.costs(units))


def _headline() -> str:
  from experiments.lib import deep_sea_scores  # pylint: disable=g-import-not-at-top
  _, units = _units()
  return deep_sea_scores.headline(
      units[~units.agent.str.endswith(OLD_DEFAULT)])


@functools.lru_cache(maxsize=1)
def _dqn_logs():
  """dqn's logs under docs/results/bsuite, read once for its three blocks
  (each filters them, never changes them)."""
  from experiments import analyze_bsuite  # pylint: disable=g-import-not-at-top
  return analyze_bsuite.load('docs/results/bsuite', ['dqn'])


DQN_SEEDS = ('seed_0', 'seed_1', 'seed_2')


def _dqn_whole_suite() -> str:
  from experiments import analyze_bsuite  # pylint: disable=g-import-not-at-top
  return analyze_bsuite.whole_suite_table('docs/results/bsuite', 'dqn',
                                          loaded=_dqn_logs())


def _dqn_tags() -> str:
  from experiments import analyze_bsuite  # pylint: disable=g-import-not-at-top
  return analyze_bsuite.tag_comparison_table('docs/results/bsuite', 'dqn',
                                             DQN_SEEDS, loaded=_dqn_logs())


def _dqn_seeds() -> str:
  from experiments import analyze_bsuite  # pylint: disable=g-import-not-at-top
  return analyze_bsuite.seeds_table('docs/results/bsuite', 'dqn', DQN_SEEDS,
                                    loaded=_dqn_logs())


# The agents whose whole-suite units are beside dqn's, seed 0.
SUITE_AGENTS = ('dqn', 'boot_dqn', 'pe_dqn')


def _agents_whole_suite() -> str:
  from experiments import analyze_bsuite  # pylint: disable=g-import-not-at-top
  return analyze_bsuite.agents_table('docs/results/bsuite', SUITE_AGENTS)


def _runners() -> str:
  from experiments.benchmarks import benchmark_bsuite_runners  # pylint: disable=g-import-not-at-top
  return benchmark_bsuite_runners.markdown(RUNNER_CSVS)


# Study tables made by a script beside their units (each defines STUDY,
# BEGIN, END and markdown(), and writes its block with --write).
STUDY_SCRIPTS = ('docs/results/paper_presets/summary.py',
                 'docs/results/tdu_one_prior/summary.py',
                 'docs/results/ids_clip/summary.py',
                 'docs/results/held_out/summary.py',
                 'docs/results/claims/summary.py',
                 'docs/results/bandit_bonus/summary.py',
                 'docs/results/reward_noise/summary.py')


def _script_block(path: str) -> Block:
  """The block a study script writes, from the script's own STUDY, BEGIN,
  END and markdown (the script is imported; `path` from the repository
  root, beside this package)."""
  import importlib.util  # pylint: disable=g-import-not-at-top
  root = ROOT
  spec = importlib.util.spec_from_file_location(
      'study_' + path.replace('/', '_').replace('.', '_'),
      os.path.join(root, path))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return Block(os.path.relpath(module.STUDY, root), module.BEGIN, module.END,
               module.markdown)


BLOCKS = (
    Block('docs/results.md',
          '<!-- deep sea summary: experiments.lib.deep_sea_scores.summary -->',
          '<!-- end deep sea summary -->', lambda: _summary('deep_sea')),
    Block('docs/results.md',
          '<!-- stochastic summary: experiments.lib.deep_sea_scores.summary -->',
          '<!-- end stochastic summary -->',
          lambda: _summary('deep_sea_stochastic')),
    Block('docs/results.md',
          '<!-- sizes 40 and 50: experiments.lib.deep_sea_scores.large_sizes -->',
          '<!-- end sizes 40 and 50 -->', _large_sizes),
    Block('BUILD.md', '<!-- costs: experiments.lib.deep_sea_scores.costs -->',
          '<!-- end costs -->', _costs),
    Block('README.md',
          '<!-- headline: experiments.lib.deep_sea_scores.headline -->',
          '<!-- end headline -->', _headline),
    Block('docs/results.md',
          '<!-- dqn whole suite: experiments.analyze_bsuite.whole_suite_table -->',
          '<!-- end dqn whole suite -->', _dqn_whole_suite),
    Block('docs/results.md',
          '<!-- dqn tags: experiments.analyze_bsuite.tag_comparison_table -->',
          '<!-- end dqn tags -->', _dqn_tags),
    Block('docs/results.md',
          '<!-- dqn seeds: experiments.analyze_bsuite.seeds_table -->',
          '<!-- end dqn seeds -->', _dqn_seeds),
    Block('docs/results.md',
          '<!-- agents whole suite: experiments.analyze_bsuite.agents_table -->',
          '<!-- end agents whole suite -->', _agents_whole_suite),
    Block('docs/study/performance.md',
          '<!-- runners: experiments.benchmarks.benchmark_bsuite_runners.markdown -->',
          '<!-- end runners -->', _runners),
) + tuple(_script_block(path) for path in STUDY_SCRIPTS)


def current_body(block: Block) -> Optional[str]:
  """What the document holds between the block's lines (None: no block)."""
  with open(block.path, encoding='utf-8') as f:
    text = f.read()
  _, found, rest = text.partition(block.start + '\n')
  body, found_end, _ = rest.partition('\n' + block.end)
  return body if found and found_end else None


def stale(blocks: Sequence[Block] = BLOCKS) -> List[str]:
  """'path: start' of each block whose text differs from its generator's."""
  return [f'{b.path}: {b.start}' for b in blocks
          if current_body(b) != b.body()]


def refresh(blocks: Sequence[Block] = BLOCKS) -> List[str]:
  """Rewrites each block whose text differs from its generator's; returns
  their 'path: start' (the others are left untouched)."""
  from experiments.lib import doc_blocks  # pylint: disable=g-import-not-at-top
  changed = []
  for block in blocks:
    body = block.body()
    if current_body(block) != body:
      doc_blocks.replace_block(block.path, block.start, block.end, body)
      changed.append(f'{block.path}: {block.start}')
  return changed


def main(argv: Sequence[str]) -> int:
  if '--check' in argv[1:]:
    old = stale()
    for line in old:
      print(f'stale: {line}')
    print(f'{len(BLOCKS) - len(old)} of {len(BLOCKS)} generated blocks '
          'current.')
    return 1 if old else 0
  changed = refresh()
  for line in changed:
    print(f'rewritten: {line}')
  print(f'{len(changed)} of {len(BLOCKS)} generated blocks rewritten; the '
        'others were current.')
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
