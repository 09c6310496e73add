"""Refreshes docs/results.md's three deep sea tables, README's summary
table and BUILD.md's costs block from the committed units (run from the repository root, after
analyze_bsuite):
  python docs/results/bsuite/refresh_docs.py
"""
import pandas as pd

from experiments.lib import deep_sea_scores
from experiments.lib import results

# PE-DQN's units from before the size-scaled prior (its quantile prior 0.5
# at every size; docs/results/prior_n_heldout/promote.py moved them) stay
# in the tables as their own columns, beside today's default.
OLD_DEFAULT = ' (prior 0.5)'
old_units = deep_sea_scores.load_units('docs/results/bsuite_prior_0.5')
old_units['agent'] = old_units['agent'] + OLD_DEFAULT
units = pd.concat([deep_sea_scores.load_units('docs/results/bsuite'),
                   old_units], ignore_index=True)
# The ablations run only at sizes 40 and 50 (Fig. 4b's question): they
# have their own table, not columns of the size-by-size ones.
ABLATIONS = ('pe_dqn_qr_qr', 'pe_dqn_c51_c51', 'pe_dqn_ind')
sweep_units = units[~units.agent.isin(
    ABLATIONS + tuple(a + OLD_DEFAULT for a in ABLATIONS))]


def with_note(table, shown):
  """The table, and under it what '*' means if a unit it shows has one."""
  if deep_sea_scores.has_accelerator_units(shown):
    return f'{table}\n\n{deep_sea_scores.ACCELERATOR_NOTE}'
  return table


results.replace_block('docs/results.md',
              '<!-- deep sea summary: experiments.lib.deep_sea_scores.summary -->',
              '<!-- end deep sea summary -->',
              with_note(deep_sea_scores.summary(sweep_units, 'deep_sea'),
                        sweep_units[sweep_units.experiment == 'deep_sea']))
results.replace_block('docs/results.md',
              '<!-- stochastic summary: experiments.lib.deep_sea_scores.summary -->',
              '<!-- end stochastic summary -->',
              with_note(deep_sea_scores.summary(sweep_units,
                                                'deep_sea_stochastic'),
                        sweep_units[sweep_units.experiment ==
                                    'deep_sea_stochastic']))
results.replace_block('docs/results.md',
              '<!-- sizes 40 and 50: experiments.lib.deep_sea_scores.large_sizes -->',
              '<!-- end sizes 40 and 50 -->',
              with_note(deep_sea_scores.large_sizes(units),
                        units[(units.experiment == 'deep_sea') &
                              units['size'].isin(deep_sea_scores.FIG4B_SIZES)]))
results.replace_block('BUILD.md', '<!-- costs: experiments.lib.deep_sea_scores.costs -->',
              '<!-- end costs -->',
              '\n'.join('- ' + line for line in deep_sea_scores.costs(units)))
results.replace_block('README.md',
              '<!-- headline: experiments.lib.deep_sea_scores.headline -->',
              '<!-- end headline -->',
              deep_sea_scores.headline(
                  sweep_units[~sweep_units.agent.str.endswith(OLD_DEFAULT)]))
# The whole bsuite for dqn, seed 0, on the jitted runner (deep sea's ids
# from the deep sea runner, stopped when solved: their own tables above).
from experiments import analyze_bsuite  # pylint: disable=g-import-not-at-top
results.replace_block('docs/results.md',
              '<!-- dqn whole suite: experiments.analyze_bsuite.whole_suite_table -->',
              '<!-- end dqn whole suite -->',
              analyze_bsuite.whole_suite_table('docs/results/bsuite', 'dqn'))
print('docs/results.md tables, README summary and BUILD costs refreshed.')
