r"""Projected wall time of deep sea scaling runs (paper Fig. 4b) here.

  python -m experiments.paper.project_scaling --agents=pe_dqn \
      --sizes=10,20,30,40,50,60,70,80,90,100 --seeds=10 \
      --num_episodes=10000 --batching=vmap

For each (agent, size) it builds the group that `deep_sea_scaling
--runner=jax` runs (same agents, seeds, replay and torso), times its
compilation, runs chunks of about `--probe_steps` steps per seed until
learning has started, times one more chunk, and projects the full run:

  compilation + seeds x size x num_episodes / (env steps/s of that chunk)

It prints a table and writes `project_scaling.csv` to `--save_path`. The
total is the wall time of the groups run one after another;
`deep_sea_scaling --num_workers` can overlap them, which this does not
measure. Nothing is trained to the end and no results table is touched.
"""

import math
import os
import time
from typing import Any, Dict, List, Sequence

from absl import flags
from absl import logging as absl_logging
import jax

import agents
from agents import training
from experiments.lib import compilation_cache
from experiments.lib import deep_sea_groups
from experiments.lib import results
from experiments.lib import run_tables

FLAGS = flags.FLAGS
TABLE_FILE = 'project_scaling.csv'
COLUMNS = ('agent', 'size', 'seeds', 'batching', 'device', 'compile_seconds',
           'warmup_steps', 'probe_steps', 'env_steps_per_second',
           'num_episodes', 'projected_hours')


def define_flags() -> None:
  flags.DEFINE_list('agents', ['pe_dqn'],
                    f'Agents; any of {list(agents.AGENT_NAMES)}.')
  flags.DEFINE_list('sizes', [str(s) for s in range(10, 101, 10)],
                    'Deep sea sizes (>= 2).')
  flags.DEFINE_integer('seeds', 10, 'Seeds per group.', lower_bound=1)
  flags.DEFINE_integer('num_episodes', 10000,
                       'Episodes per run, for the projection.', lower_bound=1)
  flags.DEFINE_integer('probe_steps', 1000,
                       'Env steps per seed in each timed chunk (rounded up '
                       'to whole episodes).', lower_bound=1)
  flags.DEFINE_enum('batching', 'auto', list(training.BATCHING_CHOICES),
                    'How the seeds share the program (as deep_sea_scaling).')
  flags.DEFINE_string('save_path', '/tmp/pe_jax/project_scaling',
                      'Where project_scaling.csv goes.')
  deep_sea_groups.register_validators()


def probe(agent_name: str, size: int, num_seeds: int, num_episodes: int,
          probe_steps: int, batching: str = 'vmap') -> Dict[str, Any]:
  """Compilation time and steady env steps/s of one group; the projection.

  Chunks of ceil(probe_steps / size) episodes run until every seed's replay
  holds `min_replay_size` transitions (so the timed chunk learns at every
  step, as the rest of a run does), then one more is timed.
  """
  episodes = math.ceil(probe_steps / size)
  group = deep_sea_groups.build_group(agent_name, size, range(num_seeds),
                                       num_episodes, episodes,
                                       batching=batching)
  start = time.perf_counter()
  compiled = group.run_chunk.lower(group.carry).compile()
  compile_seconds = time.perf_counter() - start
  carry = group.carry
  warm_steps = 0
  min_replay = group.agent.config.min_replay_size
  while True:
    start = time.perf_counter()
    carry, stats = compiled(carry)
    jax.block_until_ready((carry, stats))
    seconds = time.perf_counter() - start
    if warm_steps >= min_replay:  # This chunk learnt at every step.
      break
    warm_steps += episodes * size
  rate = num_seeds * episodes * size / seconds
  projected = compile_seconds + num_seeds * size * num_episodes / rate
  return {
      'agent': agent_name, 'size': size, 'seeds': num_seeds,
      'batching': batching, 'device': jax.devices()[0].device_kind,
      'compile_seconds': round(compile_seconds, 2),
      'warmup_steps': warm_steps,  # per seed, before the timed chunk
      'probe_steps': episodes * size,
      'env_steps_per_second': round(rate, 1), 'num_episodes': num_episodes,
      'projected_hours': round(projected / 3600, 4),
  }


def duration(hours: float) -> str:
  """'2.35 h', or '14.2 min' below an hour."""
  return f'{hours:.2f} h' if hours >= 1 else f'{hours * 60:.1f} min'


def project(agent_names: Sequence[str], sizes: Sequence[int], num_seeds: int,
            num_episodes: int, probe_steps: int, batching: str,
            output_dir: str) -> List[Dict[str, Any]]:
  """Probes every (agent, size) and writes the table; returns its rows."""
  os.makedirs(output_dir, exist_ok=True)
  rows = []
  for agent_name in agent_names:
    for size in sizes:
      row = probe(agent_name, int(size), num_seeds, num_episodes, probe_steps,
                  batching)
      rows.append(row)
      run_tables.write_rows(os.path.join(output_dir, TABLE_FILE), rows, COLUMNS)
      print(f'  {agent_name} size {size}, {num_seeds} seeds ({batching}, '
            f'{row["device"]}): compiled in {row["compile_seconds"]} s, '
            f'{row["env_steps_per_second"]:.0f} env steps/s -> '
            f'{duration(row["projected_hours"])} for {num_episodes} episodes',
            flush=True)
  return rows


def main(argv: Sequence[str]) -> None:
  del argv
  absl_logging.set_verbosity(absl_logging.WARNING)
  results.check_output_flag(FLAGS.save_path, '--save_path')
  rows = project(FLAGS.agents, [int(s) for s in FLAGS.sizes], FLAGS.seeds,
                 FLAGS.num_episodes, FLAGS.probe_steps,
                 training.resolve_batching(FLAGS.batching),
                 FLAGS.save_path)
  for agent_name in FLAGS.agents:
    hours = sum(r['projected_hours'] for r in rows
                if r['agent'] == agent_name)
    print(f'{agent_name}: {duration(hours)} projected for sizes '
          f'{",".join(FLAGS.sizes)} one after another.')
  print(f'Wrote {os.path.join(FLAGS.save_path, TABLE_FILE)}')


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
