r"""Environment steps per second of our agents in bsuite's own loop.

  python -m experiments.benchmarks.benchmark_throughput
  python -m experiments.benchmarks.benchmark_throughput --agents=pe_dqn,boot_dqn \
      --bsuite_id=deep_sea/0 --num_episodes=50 --output_csv=throughput.csv

Each agent first runs `--warmup_episodes` (compilation, and enough data for
learning to start), then `--num_episodes` are timed with
`bsuite.baselines.experiment.run`. bsuite's reference JAX agents
(`bsuite.baselines.jax.dqn` and `boot_dqn`, which updates its 20 members one
after another) are measured in the same run, and ratios are printed against
them. Finally the achieved GFLOP/s of one PE-DQN SGD step (XLA's own flop
count over the measured time) is compared with a float32 matmul peak measured
in the same run.
"""

import csv
import time
from typing import Callable, Dict, List, Sequence

from absl import app
from absl import flags
import bsuite
from bsuite.baselines import experiment
import jax
import jax.numpy as jnp
import numpy as np

import agents
from agents import pe_dqn
from pe_jax import replay

FLAGS = flags.FLAGS


def define_flags() -> None:
  """Defines the command-line flags (only when run as a script, so that
  several experiment modules can be imported into one process)."""
  flags.DEFINE_list('agents', None,
                    'Agents to measure (default: every registered agent).')
  flags.DEFINE_string('bsuite_id', 'deep_sea/0', 'Environment to run on.')
  flags.DEFINE_integer('num_episodes', 30, 'Timed episodes per agent.',
                       lower_bound=1)
  flags.DEFINE_integer('warmup_episodes', 20,
                       'Untimed episodes first (compile, fill replay).',
                       lower_bound=0)
  flags.DEFINE_boolean('reference', True,
                       'Also measure bsuite\'s JAX dqn and boot_dqn.')
  flags.DEFINE_integer('sgd_repeats', 30, 'Timed PE-DQN SGD steps.',
                       lower_bound=1)
  flags.DEFINE_string('output_csv', None, 'Optional CSV of the results.')




def steps_per_second(make_agent: Callable, bsuite_id: str, warmup: int,
                     episodes: int) -> float:
  """Environment steps per second of a fresh agent after warm-up."""
  env = bsuite.load_from_id(bsuite_id)
  agent = make_agent(env)
  experiment.run(agent, env, num_episodes=warmup)
  counter = {'steps': 0}
  step = env.step

  def counting_step(action):
    counter['steps'] += 1
    return step(action)

  env.step = counting_step
  start = time.perf_counter()
  experiment.run(agent, env, num_episodes=episodes)
  return counter['steps'] / (time.perf_counter() - start)


def reference_agents() -> Dict[str, Callable]:
  from bsuite.baselines.jax import boot_dqn  # pylint: disable=g-import-not-at-top
  from bsuite.baselines.jax import dqn  # pylint: disable=g-import-not-at-top
  return {
      'bsuite dqn': lambda env: dqn.default_agent(env.observation_spec(),
                                                  env.action_spec()),
      'bsuite boot_dqn': lambda env: boot_dqn.default_agent(
          env.observation_spec(), env.action_spec()),
  }


def matmul_peak_gflops(size: int = 1024, repeats: int = 20) -> float:
  """float32 matmul GFLOP/s on the default device (best of a few runs)."""
  x = jnp.ones((size, size), jnp.float32)
  f = jax.jit(lambda a: a @ a)
  f(x).block_until_ready()
  best = float('inf')
  for _ in range(3):
    start = time.perf_counter()
    for _ in range(repeats):
      y = f(x)
    y.block_until_ready()
    best = min(best, (time.perf_counter() - start) / repeats)
  return 2 * size**3 / best / 1e9


def pe_dqn_sgd_gflops(bsuite_id: str, repeats: int):
  """(GFLOP per step, ms per step, GFLOP/s) of PE-DQN's jitted learn step."""
  env = bsuite.load_from_id(bsuite_id)
  agent = pe_dqn.default_agent(env.observation_spec(), env.action_spec())
  config = agent.config
  rng = np.random.default_rng(0)
  shape = (config.batch_size,) + tuple(env.observation_spec().shape)
  batch = replay.Transition(
      rng.random(shape, dtype=np.float32),
      rng.integers(0, config.num_actions, config.batch_size).astype(np.int32),
      np.zeros(config.batch_size, np.float32),
      np.full(config.batch_size, config.discount, np.float32),
      rng.random(shape, dtype=np.float32))
  learn = jax.jit(pe_dqn.learn, static_argnums=0)
  compiled = learn.lower(config, agent.state, batch, np.int32(0)).compile()
  analysis = compiled.cost_analysis()
  if isinstance(analysis, (list, tuple)):
    analysis = analysis[0]
  flops = float(analysis.get('flops', float('nan')))
  state = agent.state
  state, _, _ = learn(config, state, batch, np.int32(0))
  jax.block_until_ready(state)
  start = time.perf_counter()
  for _ in range(repeats):
    state, _, _ = learn(config, state, batch, np.int32(0))
  jax.block_until_ready(state)
  seconds = (time.perf_counter() - start) / repeats
  return flops / 1e9, seconds * 1e3, flops / seconds / 1e9


def main(argv: Sequence[str]) -> None:
  del argv
  names = FLAGS.agents or list(agents.AGENT_NAMES)
  print(f'jax {jax.__version__}, devices: {jax.devices()}')
  print(f'{FLAGS.bsuite_id}: {FLAGS.warmup_episodes} warm-up + '
        f'{FLAGS.num_episodes} timed episodes per agent\n')
  rows: List[Dict] = []
  candidates = {}
  if FLAGS.reference:
    candidates.update(reference_agents())
  for name in names:
    candidates[name] = (lambda env, name=name: agents.make(
        name, env.observation_spec(), env.action_spec(), seed=0))
  for label, make_agent in candidates.items():
    rate = steps_per_second(make_agent, FLAGS.bsuite_id,
                            FLAGS.warmup_episodes, FLAGS.num_episodes)
    rows.append({'agent': label, 'steps_per_second': rate})
    print(f'  {label:<20s} {rate:9.1f} env steps/s', flush=True)
  by_name = {r['agent']: r['steps_per_second'] for r in rows}
  print('\nRatios against bsuite\'s reference agents (same run):')
  for ours, theirs in (('dqn', 'bsuite dqn'), ('boot_dqn', 'bsuite boot_dqn'),
                       ('pe_dqn', 'bsuite boot_dqn'),
                       ('pe_dqn', 'bsuite dqn')):
    if ours in by_name and theirs in by_name:
      print(f'  {ours} / {theirs}: {by_name[ours] / by_name[theirs]:.2f}x')
  peak = matmul_peak_gflops()
  gflop, ms, achieved = pe_dqn_sgd_gflops(FLAGS.bsuite_id, FLAGS.sgd_repeats)
  print(f'\nPE-DQN SGD step (Table 4 size, batch 128, 4 networks): '
        f'{gflop:.3f} GFLOP in {ms:.2f} ms = {achieved:.1f} GFLOP/s')
  print(f'float32 matmul peak (1024^3, same run): {peak:.1f} GFLOP/s; '
        f'SGD step at {100 * achieved / peak:.1f}% of peak')
  rows.append({'agent': 'pe_dqn sgd step GFLOP/s', 'steps_per_second': achieved})
  rows.append({'agent': 'matmul peak GFLOP/s', 'steps_per_second': peak})
  if FLAGS.output_csv:
    with open(FLAGS.output_csv, 'w', newline='') as f:
      writer = csv.DictWriter(f, fieldnames=['agent', 'steps_per_second'])
      writer.writeheader()
      writer.writerows(rows)
    print(f'Wrote {FLAGS.output_csv}')


if __name__ == '__main__':
  define_flags()
  app.run(main)
