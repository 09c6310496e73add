"""Where a PE-DQN or IDS-C51 deep sea run stands, read from its checkpoints.

For each seed of a `run_bsuite --runner=jax` unit (finished units keep no
checkpoint; running or killed ones do), the newest checkpoint is copied and
read, never written:

  python -m experiments.diagnostics.frontier_diagnostics --save_path=docs/results/bsuite \
      --bsuite_id=deep_sea/15 --seeds=0,1,2,3,4 [--agent=pe_dqn_qr_qr]

The agent is rebuilt from the checkpoint's own record, so a run with
overrides (`--quantile_prior_scale=20`, say) is read as it was trained.

Per seed it prints what decides whether the treasure is found: the deepest
diagonal cell (the only path to the treasure) in the replay window, whether
'right' was tried there, the intrinsic signal w_avg on visited and
never-tried state-actions, and on the diagonal the optimistic score
Q + beta b of 'right' against 'left' (how many rows prefer 'right', and the
bonus gap at the top rows, which a propagated frontier signal must tilt),
and w_avg by the state-action's visits in the replay window: a count-like
signal falls with visits (as 1 / sqrt(n + 1) does), one with
a floor stops falling.

With `--agent=ids_c51` it prints, on the diagonal, what IDS's action rule
argmin_a Delta(a)^2 / I(a) reads for 'right' and 'left': the ensemble's
mean and spread of Q, the return variance Var Z and its normalised rho^2,
the information gain I and the ratio, and how many rows choose 'right'.
"""

import ast
import json
import os
import shutil
import tempfile
from typing import Any, Dict, Sequence, Tuple

from absl import app
from absl import flags
from bsuite import sweep
import jax
import jax.numpy as jnp
import numpy as np

from agents import ids_c51
from agents import pe_dqn
from agents import pure
from agents import training
from experiments.lib import bsuite_jax
from experiments.lib import checkpoints
from experiments.lib import results
from pe_jax.envs import deep_sea as jax_deep_sea

FLAGS = flags.FLAGS


def define_flags() -> None:
  flags.DEFINE_string('save_path', 'docs/results/bsuite',
                      'The results folder of the runs.')
  flags.DEFINE_string('bsuite_id', 'deep_sea/15', 'A deep_sea id.')
  flags.DEFINE_list('seeds', ['0', '1', '2'], 'Seeds whose checkpoints to '
                    'read.')
  flags.DEFINE_string('agent', 'pe_dqn', 'A PE-DQN agent (pe_dqn or one of '
                      'its ablations) or ids_c51: the folder under '
                      '--save_path.')


# Bins of visits in the replay window: [low, high] inclusive.
VISIT_BINS = ((0, 0), (1, 1), (2, 3), (4, 15), (16, 63), (64, None))


def _bin_label(low: int, high) -> str:
  if high is None:
    return f'{low}+'
  return str(low) if low == high else f'{low}-{high}'


def frontier(config, learner, replay_state, mapping: np.ndarray,
             beta: float) -> Dict[str, Any]:
  """The numbers above for one PE-DQN learner and its replay on deep sea of
  size N (`mapping` [N, N]: the action that moves right in each cell)."""
  size = mapping.shape[0]
  grid = np.eye(size * size, dtype=np.float32).reshape(-1, size, size)
  # The signal as the agent acts on it: scaled as trained.
  out = jax.vmap(pe_dqn.evaluate, in_axes=(None, None, None, 0, None))(
      config, learner.params, learner.prior_params, jnp.asarray(grid),
      pe_dqn.intrinsic_scale(config, learner))
  shape = (size, size, 2)
  w = np.asarray(out.disagreement).reshape(shape)
  bonus = np.asarray(out.bonus).reshape(shape)
  score = np.asarray(out.q_values).reshape(shape) + beta * bonus
  observations = np.asarray(replay_state.observation).reshape(
      replay_state.action.shape[0], -1)
  stored = observations.sum(1) > 0
  rows, columns = np.divmod(observations[stored].argmax(1), size)
  visits = np.zeros(shape)
  np.add.at(visits, (rows, columns, np.asarray(replay_state.action)[stored]),
            1)
  reachable = np.tril(np.ones((size, size), bool))[..., None].repeat(2, -1)
  visited, never = reachable & (visits > 0), reachable & (visits == 0)
  index = np.arange(size)
  deepest = max(r for r in range(size) if visits[r, r].sum() > 0)
  right = mapping[index, index]
  gap = score[index, index, right] - score[index, index, 1 - right]
  bonus_gap = bonus[index, index, right] - bonus[index, index, 1 - right]
  w_by_visits = {}
  for low, high in VISIT_BINS:
    members = reachable & (visits >= low)
    if high is not None:
      members &= visits <= high
    if members.any():
      w_by_visits[_bin_label(low, high)] = float(w[members].mean())
  return dict(
      transitions=int(stored.sum()), deepest_diagonal_row=int(deepest),
      right_tried_there=bool(visits[deepest, deepest, right[deepest]] > 0),
      w_right_there=float(w[deepest, deepest, right[deepest]]),
      w_visited=float(w[visited].mean()),
      w_never_tried=float(w[never].mean()) if never.any() else float('nan'),
      rows_preferring_right=int((gap[:deepest + 1] > 0).sum()),
      start_prefers_right=bool(gap[0] > 0),
      top_bonus_gap=float(np.abs(bonus_gap[:5]).mean()),
      bonus_visited=float(bonus[visited].mean()),
      bonus_never_tried=float(bonus[never].mean()) if never.any() else (
          float('nan')),
      w_by_visits=w_by_visits)


def describe(seed: int, episode: int, row: Dict[str, float]) -> str:
  return (f'seed {seed}, episode {episode}: deepest diagonal row in replay '
          f'{row["deepest_diagonal_row"]} (right tried there: '
          f'{row["right_tried_there"]}, w(right) {row["w_right_there"]:.4f}); '
          f'w_avg visited {row["w_visited"]:.4f}, never tried '
          f'{row["w_never_tried"]:.4f}; diagonal rows preferring right '
          f'{row["rows_preferring_right"]}/{row["deepest_diagonal_row"] + 1}, '
          f'start prefers right: {row["start_prefers_right"]}; mean |bonus '
          f'gap| rows 0-4 {row["top_bonus_gap"]:.4f}; bonus visited '
          f'{row["bonus_visited"]:.3f}, never tried '
          f'{row["bonus_never_tried"]:.3f}; w_avg by visits in replay ' +
          ', '.join(f'{k}: {v:.4f}' for k, v in row['w_by_visits'].items()))


def ids_path(config, learner, mapping: np.ndarray,
             clock: float) -> Dict[str, Any]:
  """IDS's action rule on the diagonal of deep sea (`mapping` [N, N]: the
  action that moves right in each cell), row by row: each array [N, 2],
  column 0 'right', 1 'left'; `chooses_right` [N] from the agent's own
  `scores`, `lam` the lambda at `clock`."""
  size = mapping.shape[0]
  index = np.arange(size)
  grid = np.zeros((size, size, size), np.float32)
  grid[index, index, index] = 1.0  # row r's diagonal cell (r, r)
  mean, std, variance, lam = jax.vmap(
      ids_c51.ratio_terms, in_axes=(None, None, 0, None))(
          config, learner, jnp.asarray(grid), clock)
  chosen = np.asarray(jax.vmap(
      lambda o: jnp.argmax(ids_c51.scores(config, learner, o, clock)))(
          jnp.asarray(grid)))
  regret, rho2, info_gain = jax.vmap(
      ids_c51.ratio_parts, in_axes=(0, 0, 0, 0, None, None, None))(
          mean, std, variance, lam, config.eps1, config.eps2,
          config.rho_clip)
  right = mapping[index, index]
  order = np.stack([right, 1 - right], 1)  # [N, 2]: right, left
  mean, std, variance, regret, rho2, info_gain = (
      np.take_along_axis(np.asarray(x, np.float64), order, 1)
      for x in (mean, std, variance, regret, rho2, info_gain))
  return dict(mean=mean, std=std, return_variance=variance, rho2=rho2,
              regret=regret, info_gain=info_gain,
              ratio=np.square(regret) / info_gain,
              lam=float(np.asarray(lam)[0]), chooses_right=chosen == right)


def describe_ids(seed: int, episode: int, path: Dict[str, Any],
                 rows: int = 5) -> str:
  """A line per seed, then the first `rows` rows of `ids_path`."""
  def median(key, column):
    return float(np.median(path[key][:, column]))
  lines = [f'seed {seed}, episode {episode}: lambda {path["lam"]:.3f}; '
           'diagonal rows choosing right '
           f'{int(path["chooses_right"].sum())}/{len(path["chooses_right"])}'
           '; medians over rows, right / left: Var Z '
           f'{median("return_variance", 0):.4f} / '
           f'{median("return_variance", 1):.4f}, rho^2 '
           f'{median("rho2", 0):.3g} / {median("rho2", 1):.3g}, std Q '
           f'{median("std", 0):.4f} / {median("std", 1):.4f}']
  for r in range(min(rows, len(path['chooses_right']))):
    terms = ', '.join(
        f'{name} {path[key][r, 0]:.4g} / {path[key][r, 1]:.4g}'
        for name, key in (('mean Q', 'mean'), ('std Q', 'std'),
                          ('Var Z', 'return_variance'), ('rho^2', 'rho2'),
                          ('I', 'info_gain'), ('Delta', 'regret'),
                          ('ratio', 'ratio')))
    lines.append(f'  row {r} (right / left): {terms}; chooses '
                 f'{"right" if path["chooses_right"][r] else "left"}')
  return '\n'.join(lines)


def run(save_path: str, bsuite_id: str, seeds: Sequence[int],
        agent_name: str = 'pe_dqn') -> Dict[int, Tuple[int, Dict[str, Any]]]:
  """Prints, and returns per seed, (episode, `frontier` numbers) of the
  newest checkpoint of each seed's unit. The agent is rebuilt from the
  checkpoint's own record (its overrides, config and episodes per call),
  so runs with overrides (`--quantile_prior_scale=20`, say) read as trained.
  """
  bsuite_jax.check_id(bsuite_id)
  experiment = bsuite_id.split(sweep.SEPARATOR)[0]
  size = sweep.SETTINGS[bsuite_id]['size']
  horizon = sweep.EPISODES[bsuite_id]
  env = jax_deep_sea.DeepSea(size, deterministic=experiment == 'deep_sea')
  mapping = jax_deep_sea.bsuite_action_mapping(
      size, sweep.SETTINGS[bsuite_id]['mapping_seed'])
  config = bsuite_jax.build_agent(agent_name, bsuite_id, {}, horizon).config
  reads_ids = isinstance(config, ids_c51.IDSConfig)
  if not reads_ids and not isinstance(config, pe_dqn.PEDQNConfig):
    raise ValueError(f'--agent={agent_name} is not a PE-DQN agent nor '
                     'ids_c51: the diagnostics read their action rules.')
  rows = {}
  for seed in seeds:
    folder = os.path.join(save_path, agent_name, f'seed_{seed}',
                          bsuite_jax.CHECKPOINTS,
                          bsuite_id.replace(sweep.SEPARATOR, '-'))
    if not os.path.isdir(folder):
      print(f'seed {seed}: no checkpoint in {folder} (finished or not '
            'started)')
      continue
    with tempfile.TemporaryDirectory() as tmp:
      copy = os.path.join(tmp, 'checkpoints')
      # The run may be writing its next checkpoint (orbax's temporary
      # folders, left out) and pruning old ones while this copies.
      for attempt in range(3):
        try:
          shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(
              '*.orbax-checkpoint-tmp*'))
          break
        except shutil.Error:
          shutil.rmtree(copy, ignore_errors=True)
          if attempt == 2:
            raise
      with open(os.path.join(copy, checkpoints.IDENTITY_FILE)) as f:
        recorded = json.load(f)
      overrides = dict(ast.literal_eval(recorded['overrides']))
      agent = bsuite_jax.build_agent(agent_name, bsuite_id, overrides,
                                     horizon)
      changes = bsuite_jax.config_changes(recorded.get('config'),
                                          bsuite_jax.config_record(
                                              agent.config))
      if changes:
        print(f'seed {seed}: {folder} was trained with other '
              f'hyperparameters than {agent_name}\'s today '
              f'({"; ".join(changes)}); skipped')
        continue
      train = training.make_train(
          agent, env, episodes_per_call=recorded['episodes_per_call'])
      like = pure.jit_init(train.init)(jax.random.PRNGKey(0),
                                       jnp.asarray(mapping))
      restored = checkpoints.ChunkCheckpoints(copy, recorded).restore_latest(
          lambda step, like=like: {'carry': like,
                                   'stats': np.zeros((3, step))})
    if restored is None:
      print(f'seed {seed}: no readable checkpoint in {folder}')
      continue
    episode, tree = restored
    learner = tree['carry'].agent.learner
    if reads_ids:
      rows[seed] = (episode, ids_path(agent.config, learner, mapping,
                                      float(episode)))
      print(describe_ids(seed, *rows[seed]), flush=True)
      continue
    beta = float(pe_dqn.beta_schedule(agent.config, episode))
    rows[seed] = (episode, frontier(agent.config, learner,
                                    tree['carry'].agent.replay, mapping,
                                    beta))
    print(describe(seed, *rows[seed]), flush=True)
  return rows


def main(argv: Sequence[str]) -> None:
  del argv
  results.quiet_checkpoint_logs()
  try:
    seeds = [int(s) for s in FLAGS.seeds]
    bsuite_jax.check_id(FLAGS.bsuite_id)
    run(FLAGS.save_path, FLAGS.bsuite_id, seeds, FLAGS.agent)
  except ValueError as error:
    raise app.UsageError(str(error)) from None


if __name__ == '__main__':
  define_flags()
  app.run(main)
