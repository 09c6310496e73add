r"""Environment steps per second of the exact bsuite ports against bsuite.

For each experiment: all its ids and `--seeds` seeds, grouped by compiled
program (ids of one observation shape share one), stepped with random
actions in one `jit(vmap)` scan per group; against bsuite's own classes
stepped one at a time in Python, in the same run. The environments alone:
no agent, no logging.

  python -m experiments.benchmarks.benchmark_envs --seeds=4 \
      --output_csv=docs/results/benchmarks/envs.csv

MNIST's ids need MNIST's four files (`--mnist_dir`); without them they are
skipped with a line.
"""

import collections
import functools
import time
from typing import Dict, List, Optional, Sequence

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import numpy as np



def define_flags() -> None:
  """The command's flags (defined when it runs, not on import: modules
  imported together would define them twice)."""
  flags.DEFINE_list('experiments', None,
                    'Experiments to time (default: all 23).')
  flags.DEFINE_integer('seeds', 4, 'Seeds per id (>= 1).', lower_bound=1)
  flags.DEFINE_integer('steps', 2000,
                       'Steps of each port in the timed scan (>= 1).',
                       lower_bound=1)
  flags.DEFINE_integer('bsuite_steps', 20000,
                       "Steps of bsuite's environment (>= 1).",
                       lower_bound=1)
  flags.DEFINE_string('mnist_dir', None, "Folder of MNIST's four files.")
  flags.DEFINE_string('output_csv', None, 'Write the table here too.')


FLAGS = flags.FLAGS
COLUMNS = ('experiment', 'ids', 'seeds', 'programs', 'compile_s',
           'port_steps_per_s', 'bsuite_steps_per_s', 'ratio')


def _groups(experiment: str, seeds: int, mnist_dir: Optional[str]):
  from bsuite import sweep  # pylint: disable=g-import-not-at-top
  from pe_jax import envs  # pylint: disable=g-import-not-at-top
  ids = [i for i in sweep.SWEEP if i.split(sweep.SEPARATOR)[0] == experiment]
  groups = collections.defaultdict(list)
  for bsuite_id in ids:
    for seed in range(seeds):
      env = envs.load(bsuite_id, seed=seed, mnist_dir=mnist_dir)
      groups[env.program_key].append(env)
  return ids, list(groups.values())


def _time_port(group, steps: int):
  """(compile seconds, steps/s) of one group's vmapped random rollout."""
  from pe_jax.envs import suite  # pylint: disable=g-import-not-at-top
  env = group[0]

  def rollout(states, key):
    def body(states, key):
      actions = jax.random.randint(key, (len(group),), 0, env.num_actions)
      states, timesteps = jax.vmap(env.step)(states, actions)
      return states, timesteps.step_type[0]
    return jax.lax.scan(body, states, jax.random.split(key, steps))

  states = suite.stack([e.init() for e in group])
  start = time.perf_counter()
  compiled = jax.jit(rollout).lower(states, jax.random.PRNGKey(0)).compile()
  compile_seconds = time.perf_counter() - start
  states, _ = jax.block_until_ready(compiled(states, jax.random.PRNGKey(0)))
  start = time.perf_counter()
  jax.block_until_ready(compiled(states, jax.random.PRNGKey(1)))
  return compile_seconds, len(group) * steps / (time.perf_counter() - start)


def _time_bsuite(bsuite_id: str, steps: int,
                 mnist_dir: Optional[str]) -> float:
  from bsuite.utils import datasets  # pylint: disable=g-import-not-at-top
  from experiments.lib import results  # pylint: disable=g-import-not-at-top
  load_mnist = datasets.load_mnist
  if mnist_dir:  # bsuite's loader reads the same files, never downloads
    datasets.load_mnist = functools.partial(load_mnist, directory=mnist_dir)
  try:
    env = results.load_seeded(bsuite_id, 0)
  finally:
    datasets.load_mnist = load_mnist
  num_actions = env.action_spec().num_values
  actions = np.random.RandomState(0).randint(num_actions, size=steps)
  env.reset()
  start = time.perf_counter()
  for action in actions:
    env.step(int(action))
  return steps / (time.perf_counter() - start)


def benchmark(experiments: Sequence[str], seeds: int, steps: int,
              bsuite_steps: int, mnist_dir: Optional[str] = None,
              output_csv: Optional[str] = None) -> List[Dict[str, object]]:
  """Times each experiment; prints and returns the table's rows."""
  from pe_jax.envs.suite import mnist  # pylint: disable=g-import-not-at-top
  rows = []
  print(f'{"experiment":22s} {"ids":>4s} {"programs":>8s} {"compile s":>9s}'
        f' {"port steps/s":>13s} {"bsuite steps/s":>14s} {"ratio":>7s}',
        flush=True)
  for experiment in experiments:
    try:
      ids, groups = _groups(experiment, seeds, mnist_dir)
      timed = [_time_port(group, steps) for group in groups]
    except mnist.MissingMNISTError as error:
      print(f'{experiment:22s} skipped: {error}', flush=True)
      continue
    compile_seconds = sum(t[0] for t in timed)
    # All groups' steps over all groups' time.
    total_steps = sum(len(g) for g in groups) * steps
    port_rate = total_steps / sum(len(g) * steps / t[1]
                                  for g, t in zip(groups, timed))
    bsuite_rate = _time_bsuite(ids[0], bsuite_steps, mnist_dir)
    row = dict(experiment=experiment, ids=len(ids), seeds=seeds,
               programs=len(groups), compile_s=round(compile_seconds, 2),
               port_steps_per_s=round(port_rate),
               bsuite_steps_per_s=round(bsuite_rate),
               ratio=round(port_rate / bsuite_rate, 1))
    rows.append(row)
    print(f'{experiment:22s} {len(ids):4d} {len(groups):8d} '
          f'{compile_seconds:9.1f} {port_rate:13.0f} {bsuite_rate:14.0f} '
          f'{port_rate / bsuite_rate:7.1f}', flush=True)
  if output_csv:
    from experiments.lib import run_tables  # pylint: disable=g-import-not-at-top
    run_tables.write_rows(output_csv, rows, COLUMNS)
  return rows


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'Unexpected arguments: {argv[1:]}')
  from bsuite import sweep  # pylint: disable=g-import-not-at-top
  known = sorted({i.split(sweep.SEPARATOR)[0] for i in sweep.SWEEP})
  chosen = FLAGS.experiments or known
  unknown = sorted(set(chosen) - set(known))
  if unknown:
    raise app.UsageError(f'--experiments: unknown {unknown}; known: {known}')
  jnp.zeros(())  # start the backend before timing
  benchmark(chosen, FLAGS.seeds, FLAGS.steps, FLAGS.bsuite_steps,
            FLAGS.mnist_dir, FLAGS.output_csv)


if __name__ == '__main__':
  define_flags()
  app.run(main)
