"""What drives PE-DQN's arm choice on bsuite's bandit: its value estimates or
its bonus. Trains `pe_dqn` (our default, bsuite's return range) on one bandit
id in bsuite's own loop and environment, and after each window of episodes
reads the networks at the bandit's one observation.

  python docs/results/bandit_bonus/probe.py --bsuite_id=bandit/0 \
      --num_episodes=3000 --window=250 --output_csv=docs/results/bandit_bonus/probe_bandit-0.csv
  (--set=huber_param=1 --set=learning_rate=5e-4: other settings)

One row per window:
  episode                   the window's last episode
  regret_per_episode        mean regret over the window's episodes
  best_arm_share            share of the window's pulls on the best arm
  greedy_is_best            argmax_a Q(a) is the best arm (1) or not (0)
  optimistic_is_best        argmax_a Q(a) + beta b(a), the acting rule, is
  q_abs_error_max           max over arms of |Q(a) - the arm's reward|
  smallest_gap              smallest gap between two arms' rewards
  w_mean, w_min             w_avg(a) (W1 between the members) over the arms
  beta_bonus_mean           beta b(a), the acting rule's bonus, over the arms
  beta_bonus_spread         max - min of beta b(a) over the arms
  quantile_std_best         std of the quantile member's atoms at the best arm
  categorical_std_best      std of the categorical member at the best arm
Arm rewards are deterministic, so a member fitted exactly has std 0 there.
"""

import csv
import os

from absl import app
from absl import flags
import bsuite
import numpy as np

import agents
from agents import bsuite_settings
from agents import pe_dqn

flags.DEFINE_string('bsuite_id', 'bandit/0', 'a bandit id (bandit/0-19)')
flags.DEFINE_integer('num_episodes', 3000, 'episodes to train (>= window)')
flags.DEFINE_integer('window', 250, 'episodes per row (>= 1)')
flags.DEFINE_integer('seed', 0, "the agent's seed")
flags.DEFINE_string('output_csv', None, 'where to write the rows (required)')
flags.DEFINE_multi_string('set', [], 'NAME=VALUE: a numeric pe_dqn '
                          'hyperparameter over our default (repeatable)')
FLAGS = flags.FLAGS

COLUMNS = ('episode', 'regret_per_episode', 'best_arm_share',
           'greedy_is_best', 'optimistic_is_best', 'q_abs_error_max',
           'smallest_gap', 'w_mean', 'w_min', 'beta_bonus_mean',
           'beta_bonus_spread', 'quantile_std_best', 'categorical_std_best')


def _std(atoms: np.ndarray, probs: np.ndarray) -> float:
  mean = np.sum(atoms * probs)
  return float(np.sqrt(np.sum(probs * (atoms - mean) ** 2)))


def main(argv):
  del argv
  if not FLAGS.bsuite_id.startswith('bandit/'):
    raise app.UsageError(f'--bsuite_id must be a bandit/N id, got '
                         f'{FLAGS.bsuite_id!r}')
  if FLAGS.window < 1 or FLAGS.num_episodes < FLAGS.window:
    raise app.UsageError('--window must be >= 1 and --num_episodes >= '
                         f'--window, got {FLAGS.window}, {FLAGS.num_episodes}')
  if not FLAGS.output_csv:
    raise app.UsageError('--output_csv is required')
  env = bsuite.load_from_id(FLAGS.bsuite_id)
  overrides = {}
  for item in FLAGS.set:
    name, _, value = item.partition('=')
    if name not in agents.hyperparameter_names('pe_dqn') or not value:
      raise app.UsageError(f'--set takes NAME=VALUE with NAME a pe_dqn '
                           f'hyperparameter, got {item!r}')
    overrides[name] = float(value)
  kwargs = bsuite_settings.for_bsuite_id('pe_dqn', FLAGS.bsuite_id, overrides)
  agent = agents.make('pe_dqn', env.observation_spec(), env.action_spec(),
                      seed=FLAGS.seed, **kwargs)
  config = agent.config
  # bsuite's SimpleBandit keeps its arms' rewards private; the probe needs
  # them to name the best arm and each estimate's error.
  rewards = np.asarray(env._rewards, dtype=np.float64)  # pylint: disable=protected-access
  best = int(np.argmax(rewards))
  gaps = np.diff(np.sort(rewards))
  rows = []
  timestep = env.reset()
  regret, best_pulls = 0.0, 0
  for episode in range(1, FLAGS.num_episodes + 1):
    action = agent.select_action(timestep)
    new_timestep = env.step(action)
    agent.update(timestep, action, new_timestep)
    regret += rewards[best] - rewards[action]
    best_pulls += int(action == best)
    timestep = env.reset()
    if episode % FLAGS.window:
      continue
    out = agent.evaluate(np.asarray(timestep.observation)[None])
    q = np.asarray(out.q_values)[0]
    beta = float(pe_dqn.beta_schedule(config, episode))
    beta_bonus = beta * np.asarray(out.bonus)[0]
    w = np.asarray(out.disagreement)[0]
    atoms = np.asarray(out.value_atoms)[0]   # [M, A, K]
    probs = np.asarray(out.value_probs)[0]
    rows.append(dict(
        episode=episode,
        regret_per_episode=regret / FLAGS.window,
        best_arm_share=best_pulls / FLAGS.window,
        greedy_is_best=int(np.argmax(q) == best),
        optimistic_is_best=int(np.argmax(q + beta_bonus) == best),
        q_abs_error_max=float(np.max(np.abs(q - rewards))),
        smallest_gap=float(np.min(gaps)),
        w_mean=float(np.mean(w)), w_min=float(np.min(w)),
        beta_bonus_mean=float(np.mean(beta_bonus)),
        beta_bonus_spread=float(np.ptp(beta_bonus)),
        quantile_std_best=_std(atoms[0, best], probs[0, best]),
        categorical_std_best=_std(atoms[-1, best], probs[-1, best])))
    print(' '.join(f'{k}={v:.3g}' if isinstance(v, float) else f'{k}={v}'
                   for k, v in rows[-1].items()), flush=True)
    regret, best_pulls = 0.0, 0
    # Written each window: a stopped probe keeps what it measured.
    os.makedirs(os.path.dirname(os.path.abspath(FLAGS.output_csv)),
                exist_ok=True)
    with open(FLAGS.output_csv, 'w', newline='') as f:
      writer = csv.DictWriter(f, COLUMNS)
      writer.writeheader()
      for row in rows:
        writer.writerow({k: (round(v, 4) if isinstance(v, float) else v)
                         for k, v in row.items()})


if __name__ == '__main__':
  app.run(main)
