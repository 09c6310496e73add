r"""Aggregate env steps/s of the jitted trainer against bsuite's loop.

  python -m experiments.benchmarks.benchmark_jax_training --agents=dqn,boot_dqn \
      --size=10 --seeds=8 --num_episodes=1000 --batchings=vmap,map

Counted as a user sees it: for each agent, one whole `deep_sea_scaling`
process with `--runner=bsuite` (one seed, bsuite's loop) and one with
`--runner=jax` (`--seeds` seeds in one compiled program), each timed from
launch to exit, so imports and compilation are included. Prints the
aggregate env steps/s of both and their ratio, measured in the same run.
With `--reference` (the default), agents that bsuite ships a reference of
(`dqn`, `boot_dqn`) are also timed as bsuite's own agent
(`bsuite.baselines.jax`) in bsuite's loop on `DeepSea(size, mapping_seed=0)`,
one whole process of the same episodes, and the jax runner's ratio against
it is printed too (the speed goal is stated against that agent).

Each pair runs twice on one fresh persistent compilation cache
(`experiments.lib.compilation_cache`): 'cold' compiles every program, 'warm' is
the same command again, loading them (a rerun, a resume, the next sweep
point of the same shapes).
"""

import os
import subprocess
import sys
import tempfile
import time
from typing import Sequence

from absl import app
from absl import flags

FLAGS = flags.FLAGS
# The repository root (experiments/benchmarks/ is two levels below it).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def define_flags() -> None:
  flags.DEFINE_list('agents', ['dqn', 'boot_dqn', 'pe_dqn'], 'Agents.')
  flags.DEFINE_integer('size', 10, 'Deep sea size.', lower_bound=2)
  flags.DEFINE_integer('seeds', 8, 'Seeds of the jax runner.', lower_bound=1)
  flags.DEFINE_integer('num_episodes', 1000, 'Episodes per run.',
                       lower_bound=1)
  flags.DEFINE_list('batchings', ['vmap', 'map'],
                    'How the jax runner batches agents (vmap, map).')
  flags.DEFINE_integer('episodes_per_call', 500,
                       'Episodes per compiled call (jax runner).',
                       lower_bound=1)
  flags.DEFINE_boolean('reference', True,
                       'Also time bsuite\'s reference agent (dqn, boot_dqn) '
                       'in its loop, once per agent (it has no cache).')


# Agents of ours that bsuite's baselines have a JAX reference for.
REFERENCE_AGENTS = ('dqn', 'boot_dqn')


def run_seconds(command: Sequence[str]) -> float:
  """Seconds of one process, launch to exit; raises if it fails."""
  start = time.perf_counter()
  result = subprocess.run(list(command), cwd=ROOT, capture_output=True,
                          text=True)
  seconds = time.perf_counter() - start
  if result.returncode != 0:
    raise RuntimeError(f'{" ".join(command)} failed:\n{result.stderr[-3000:]}')
  return seconds


def reference_process_seconds(agent: str, size: int,
                              num_episodes: int) -> float:
  """Seconds of one process that runs bsuite's reference `agent` (built as
  `benchmark_throughput.reference_agents` builds it) for `num_episodes` in
  bsuite's loop on its deep sea of `size`, action mapping seed 0."""
  if agent not in REFERENCE_AGENTS:
    raise ValueError(f'bsuite has no reference for {agent!r}; '
                     f'choose from {REFERENCE_AGENTS}.')
  code = ('from bsuite.baselines import experiment\n'
          'from bsuite.environments import deep_sea\n'
          'from experiments.benchmarks import benchmark_throughput\n'
          f'env = deep_sea.DeepSea(size={int(size)}, mapping_seed=0)\n'
          'make = benchmark_throughput.reference_agents()'
          f'["bsuite {agent}"]\n'
          f'experiment.run(make(env), env, num_episodes={int(num_episodes)})\n')
  return run_seconds([sys.executable, '-c', code])


def timed_process(agent: str, runner: str, size: int, seeds: int,
                  num_episodes: int, episodes_per_call: int,
                  batching: str = 'vmap', cache_dir: str = '') -> float:
  """Seconds of one `deep_sea_scaling` process, launch to exit, with the
  compilation cache in `cache_dir` ('' : none)."""
  with tempfile.TemporaryDirectory() as tmp:
    command = [sys.executable, '-m', 'experiments.paper.deep_sea_scaling',
               f'--agents={agent}', f'--sizes={size}', f'--seeds={seeds}',
               f'--num_episodes={num_episodes}', f'--runner={runner}',
               f'--episodes_per_call={episodes_per_call}',
               f'--batching={batching}',
               '--progress_every=0', f'--save_path={tmp}',
               f'--compilation_cache_dir={cache_dir}']
    return run_seconds(command)


def main(argv: Sequence[str]) -> None:
  del argv
  steps = FLAGS.num_episodes * FLAGS.size
  print(f'deep sea {FLAGS.size}, {FLAGS.num_episodes} episodes per seed; '
        f'bsuite runner: 1 seed, jax runner: {FLAGS.seeds} seeds; whole '
        'processes (compilation included)', flush=True)
  for agent in FLAGS.agents:
    reference_rate = None
    if FLAGS.reference and agent in REFERENCE_AGENTS:
      seconds = reference_process_seconds(agent, FLAGS.size,
                                          FLAGS.num_episodes)
      reference_rate = steps / seconds
      print(f'  {agent:<10s} bsuite\'s reference agent, bsuite loop: '
            f'{reference_rate:9.1f} env steps/s ({seconds:.1f} s)',
            flush=True)
    with tempfile.TemporaryDirectory() as cache_dir:
      for cache in ('cold', 'warm'):
        bsuite_seconds = timed_process(agent, 'bsuite', FLAGS.size, 1,
                                       FLAGS.num_episodes,
                                       FLAGS.episodes_per_call,
                                       cache_dir=cache_dir)
        bsuite_rate = steps / bsuite_seconds
        print(f'  {agent:<10s} {cache} cache, bsuite loop: '
              f'{bsuite_rate:9.1f} env steps/s ({bsuite_seconds:.1f} s)',
              flush=True)
        for batching in FLAGS.batchings:
          jax_seconds = timed_process(agent, 'jax', FLAGS.size, FLAGS.seeds,
                                      FLAGS.num_episodes,
                                      FLAGS.episodes_per_call, batching,
                                      cache_dir=cache_dir)
          jax_rate = FLAGS.seeds * steps / jax_seconds
          print(f'  {agent:<10s} {cache} cache, jax {batching}, '
                f'{FLAGS.seeds} seeds: {jax_rate:9.1f} env steps/s '
                f'({jax_seconds:.1f} s); ratio {jax_rate / bsuite_rate:.2f}x'
                + (f', {jax_rate / reference_rate:.2f}x bsuite\'s reference'
                   if reference_rate else ''), flush=True)


if __name__ == '__main__':
  define_flags()
  app.run(main)
