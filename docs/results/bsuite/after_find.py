"""What happens after the first find on deterministic deep sea: the first
find and the bad episodes after it.

On deterministic deep sea an episode is bad when the agent leaves the
diagonal, and one that never leaves it reaches the treasure; so before the
first find every episode is bad, and the bad episodes after it are
    total_bad_episodes(S) - (first find - 1)
at the episode S where bsuite's analysis calls the size solved (or the last
logged episode of a censored unit). The script checks that premise on every
log point before the find, then prints a markdown table per size: for each
agent, the median first find, the median bad episodes after it, and the
median share of the episodes from the find to S that were bad (seeds in
brackets: min and max). A second table splits PE-DQN's lag behind
BDQN+P into its two parts: with a share s held from the find F on, the
counter is F - 1 + s (e - F + 1) at episode e >= F, and bsuite's rule
(`bsuite_jax.solved_episode`, the same log points) says when that solves;
the table gives it for each agent's own median (F, s), and for PE-DQN's F
with BDQN+P's s and the other way round. Run from the repository root:
  python docs/results/bsuite/after_find.py [FIRST_SIZE LAST_SIZE [SAVE_PATH [AGENTS]]]
AGENTS (comma-separated) defaults to pe_dqn,boot_dqn,tdu, e.g.
pe_dqn,pe_dqn_ind,pe_dqn_qr_qr for the ablations. SAVE_PATH defaults to
docs/results/bsuite; docs/results/bsuite_prior_0.5 holds the PE-DQN units run under the fixed prior that preceded today's
default.
"""
import os
import sys

import numpy as np
import pandas as pd

from experiments.lib import bsuite_jax
from experiments.lib import deep_sea_scores

SAVE_PATH = 'docs/results/bsuite'
AGENTS = ('pe_dqn', 'boot_dqn', 'tdu')


def after_find(unit, save_path: str) -> dict:
  """First find, end episode, bad episodes after the find and their share."""
  log = pd.read_csv(os.path.join(
      save_path, unit.agent, f'seed_{unit.seed}',
      f'bsuite_id_-_{unit.bsuite_id.replace("/", "-")}.csv'))
  find = int(unit.first_treasure_episode)
  before = log[log.episode < find]
  if not (before.total_bad_episodes == before.episode).all():
    raise ValueError(f'{unit.agent} {unit.bsuite_id} seed {unit.seed}: a good '
                     'episode before the first find')
  end = (int(unit.solved_episode) if not pd.isna(unit.solved_episode)
         else int(log.episode.max()))
  bad = int(log[log.episode == end].total_bad_episodes.iloc[0]) - (find - 1)
  return dict(find=find, bad_after=bad, share=bad / (end - find + 1),
              end=end, censored=pd.isna(unit.solved_episode))


def implied_solve(find: float, share: float, budget: int = 10_000):
  """The episode bsuite's rule calls solved if every episode before `find`
  is bad and a fraction `share` of those from `find` on is (None: not by
  `budget`)."""
  episodes = np.arange(1, budget + 1)
  bad = np.where(episodes < find, episodes,
                 find - 1 + share * (episodes - find + 1))
  return bsuite_jax.solved_episode(bad, 'deep_sea')


def lag_parts(rows: pd.DataFrame) -> None:
  """Prints, per size, PE-DQN's and BDQN+P's median end episodes (solved,
  or the budget of a censored unit) and the solves implied by their median
  (find, share) and by the two swapped."""
  if not {'pe_dqn', 'boot_dqn'} <= set(rows.agent):
    return
  print('\n| size | pe_dqn: solved / implied | boot_dqn: solved / implied '
        '| pe_dqn find, boot_dqn share | boot_dqn find, pe_dqn share |')
  print('|---:|---|---|---|---|')
  for size, group in rows.groupby('size'):
    medians = {a: group[group.agent == a][['find', 'share']].median()
               for a in ('pe_dqn', 'boot_dqn')}
    if any(m.isna().any() for m in medians.values()):
      continue
    pe, boot = medians['pe_dqn'], medians['boot_dqn']
    actual = {}
    for agent in medians:
      runs = group[group.agent == agent]
      cut = int(runs.censored.sum())
      actual[agent] = f'{np.median(runs.end):g}' + (f' ({cut} cut)' if cut
                                                    else '')
    print(f'| {size} | {actual["pe_dqn"]} / '
          f'{implied_solve(pe.find, pe.share)} | {actual["boot_dqn"]} / '
          f'{implied_solve(boot.find, boot.share)} | '
          f'{implied_solve(pe.find, boot.share)} | '
          f'{implied_solve(boot.find, pe.share)} |')


def main(first: int, last: int, save_path: str = SAVE_PATH,
         agents_wanted: tuple = AGENTS) -> None:
  units = deep_sea_scores.load_units(save_path)
  unknown = sorted(set(agents_wanted) - set(units.agent))
  if unknown:
    raise ValueError(f'AGENTS: no units of {unknown} under {save_path}; '
                     f'it has {sorted(set(units.agent))}')
  units = units[(units.experiment == 'deep_sea')
                & units.agent.isin(agents_wanted)
                & units['size'].between(first, last)
                & units.first_treasure_episode.notna()]
  rows = pd.DataFrame([
      dict(agent=u.agent, size=u.size, **after_find(u, save_path))
      for u in units.itertuples()])
  agents = [a for a in agents_wanted if a in set(rows.agent)]
  header = ' | '.join(f'{a}: find / bad after / share' for a in agents)
  print(f'| size | {header} |')
  print('|---:|' + '---|' * len(agents))
  for size, group in rows.groupby('size'):
    cells = []
    for agent in agents:
      runs = group[group.agent == agent]
      cells.append('' if runs.empty else (
          f'{np.median(runs.find):g} / {np.median(runs.bad_after):g} / '
          f'{np.median(runs.share):.2f} [{runs.share.min():.2f}, '
          f'{runs.share.max():.2f}] ({len(runs)})'))
    print(f'| {size} | ' + ' | '.join(cells) + ' |')
  lag_parts(rows)
  check_implied(rows)


def check_implied(rows: pd.DataFrame) -> None:
  """Each solved unit's own (find, share) must imply its solve or an earlier
  log point (the counters agree at the solve, so the model cannot cross
  later); prints how many are equal, earlier, or cut."""
  solved = rows[~rows.censored]
  implied = [implied_solve(r.find, r.share) for r in solved.itertuples()]
  later = [(r.agent, r.size, r.end, i) for r, i in
           zip(solved.itertuples(), implied) if i is None or i > r.end]
  if later:
    raise ValueError(f'implied solve after the real one: {later}')
  equal = sum(i == r.end for r, i in zip(solved.itertuples(), implied))
  print(f'\nImplied solve per unit: equal on {equal}, earlier on '
        f'{len(solved) - equal}, cut units {len(rows) - len(solved)} '
        f'(of {len(rows)} with a find).')


if __name__ == '__main__':
  bounds = [int(a) for a in sys.argv[1:3]] or [10, 50]
  save_path = sys.argv[3] if len(sys.argv) > 3 else SAVE_PATH
  agents_wanted = tuple(sys.argv[4].split(',')) if len(sys.argv) > 4 else AGENTS
  main(*bounds, save_path, agents_wanted)
