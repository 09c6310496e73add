r"""The jitted runner against bsuite's loop, per experiment and agent, and the
whole suite's projected time.

For each experiment (its first id) and agent: environment steps per second
of the agent learning in bsuite's loop (`agents.make` in
`common.run_episode` on bsuite's class, after a warm-up episode) and in the
jitted runner's program (`training.make_train_bsuite` on the exact port,
one seed, timed after compiling), in one run; and the whole suite's time
per agent on this machine projected from each experiment's steps (its ids x
bsuite's episodes x the mean episode length of a random policy on the port)
at the jitted rate.

  python -m experiments.benchmarks.benchmark_bsuite_runners \
      --agents=dqn,boot_dqn --output_csv=docs/results/benchmarks/runners.csv
"""

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
  flags.DEFINE_list('agents', ['dqn', 'boot_dqn', 'pe_dqn'],
                    'Agents to time.')
  flags.DEFINE_list('experiments', None,
                    "Experiments to time (default: all but MNIST's, which "
                    'need its files).')
  flags.DEFINE_integer('loop_steps', 1000,
                       "Timed steps in bsuite's loop (>= 1).", lower_bound=1)
  flags.DEFINE_integer('jax_steps', 5000,
                       'Timed steps of the jitted runner per id (>= 1).',
                       lower_bound=1)
  flags.DEFINE_integer('ids_per_program', 1,
                       "The experiment's ids timed in one program, seed 0 "
                       "each, as the runner batches units of one shape (0: "
                       'all that share the first id\'s program).',
                       lower_bound=0)
  flags.DEFINE_string('output_csv', None, 'Write the table here too.')


FLAGS = flags.FLAGS
COLUMNS = ('agent', 'experiment', 'loop_steps_per_s', 'jax_steps_per_s',
           'ratio', 'compile_s', 'program_ids', 'suite_steps',
           'projected_hours')


def experiment_steps(experiment: str, episodes: int = 20) -> float:
  """The experiment's environment steps for a random policy: its ids x
  bsuite's episodes x the mean episode length over `episodes` random
  episodes of each id's port."""
  from bsuite import sweep  # pylint: disable=g-import-not-at-top
  from pe_jax import envs  # pylint: disable=g-import-not-at-top
  total = 0.0
  for bsuite_id in [i for i in sweep.SWEEP
                    if i.split(sweep.SEPARATOR)[0] == experiment]:
    env = envs.load(bsuite_id)
    lengths = _random_lengths(env, episodes, 0)
    total += float(np.mean(lengths)) * env.num_episodes
  return total


_LENGTH_PROGRAMS = {}


def _random_lengths(env, episodes: int, seed: int) -> np.ndarray:
  """Episode lengths of a random policy (one jitted scan, compiled once per
  `program_key`: the ids of an experiment with one shape share it)."""
  key = (env.program_key, episodes)
  if key not in _LENGTH_PROGRAMS:
    _LENGTH_PROGRAMS[key] = _length_program(env, episodes)
  count, lengths = _LENGTH_PROGRAMS[key](env.init(),
                                         jax.random.PRNGKey(seed))
  return np.asarray(lengths)[:min(int(count), episodes)]


def _length_program(env, episodes: int):
  steps = 1200 * episodes  # more than the longest episodes need

  def body(carry, key):
    state, length, count, lengths = carry
    action = jax.random.randint(key, (), 0, env.num_actions)
    state, timestep = env.step(state, action)
    last = timestep.step_type == 2
    first = timestep.step_type == 0
    length = jnp.where(first, 0, length + 1)
    lengths = jnp.where(last & (count < episodes),
                        lengths.at[jnp.minimum(count, episodes - 1)].set(
                            length), lengths)
    return (state, length, count + last, lengths), None

  @jax.jit
  def run(state, key):
    state, _ = env.reset(state)
    carry = (state, 0, 0, jnp.zeros((episodes,), jnp.int32))
    (_, _, count, lengths), _ = jax.lax.scan(
        body, carry, jax.random.split(key, steps))
    return count, lengths

  return run


def _loop_rate(agent_name: str, bsuite_id: str, steps: int) -> float:
  from agents import bsuite_settings  # pylint: disable=g-import-not-at-top
  from agents import common  # pylint: disable=g-import-not-at-top
  from experiments.lib import results  # pylint: disable=g-import-not-at-top
  import agents  # pylint: disable=g-import-not-at-top
  env = results.load_seeded(bsuite_id, 0)
  kwargs = bsuite_settings.for_bsuite_id(agent_name, bsuite_id, {})
  agent = agents.make(agent_name, env.observation_spec(), env.action_spec(),
                      seed=0, num_episodes=env.bsuite_num_episodes, **kwargs)
  common.run_episode(agent, env)  # compiles
  done, start = 0, time.perf_counter()
  while done < steps:
    done += common.run_episode(agent, env)[1]
  return done / (time.perf_counter() - start)


def program_ids(experiment: str, ids_per_program: int) -> List[str]:
  """The experiment's first id and the next ids that share its program
  (`suite_jax.run_ids` trains them in one), `ids_per_program` at most (0:
  all)."""
  from bsuite import sweep  # pylint: disable=g-import-not-at-top
  from pe_jax import envs  # pylint: disable=g-import-not-at-top
  ids = [i for i in sweep.SWEEP if i.split(sweep.SEPARATOR)[0] == experiment]
  key = envs.load(ids[0]).program_key
  same = [i for i in ids if envs.load(i).program_key == key]
  return same[:ids_per_program or len(same)]


def _jax_rate(agent_name: str, bsuite_ids: Sequence[str], steps: int):
  """(compile seconds, env steps/s of all units) of `bsuite_ids`, seed 0
  each, in one program as the runner batches them on this platform."""
  from agents import training  # pylint: disable=g-import-not-at-top
  from experiments.lib import suite_jax  # pylint: disable=g-import-not-at-top
  from pe_jax import envs  # pylint: disable=g-import-not-at-top
  from pe_jax.envs import suite  # pylint: disable=g-import-not-at-top
  ports = [envs.load(i) for i in bsuite_ids]
  env = ports[0]
  agent = suite_jax.build_agent(agent_name, bsuite_ids[0], env, {},
                                env.num_episodes)
  train = training.make_train_bsuite(agent, env, env.num_episodes, steps)
  carry = jax.jit(jax.vmap(train.init))(
      jnp.stack([jax.random.PRNGKey(0)] * len(ports)),
      suite.stack([p.init() for p in ports]))
  batching = training.resolve_batching('auto')
  start = time.perf_counter()
  run = jax.jit(training.over_agents(train.run, batching)).lower(
      carry).compile()
  compile_seconds = time.perf_counter() - start
  carry = jax.block_until_ready(run(carry))  # past warm-up and first SGD
  start = time.perf_counter()
  jax.block_until_ready(run(carry))
  return compile_seconds, len(ports) * steps / (time.perf_counter() - start)


def benchmark(agent_names: Sequence[str], experiments: Sequence[str],
              loop_steps: int, jax_steps: int, ids_per_program: int = 1,
              output_csv: Optional[str] = None) -> List[Dict[str, object]]:
  """Times each (agent, experiment); prints and returns the rows."""
  from bsuite import sweep  # pylint: disable=g-import-not-at-top
  suite_steps = {e: experiment_steps(e) for e in experiments}
  rows = []
  print(f'{"agent":10s} {"experiment":20s} {"loop steps/s":>12s} '
        f'{"jax steps/s":>11s} {"ratio":>6s} {"compile s":>9s} '
        f'{"suite steps":>11s} {"hours":>7s}', flush=True)
  for agent_name in agent_names:
    for experiment in experiments:
      bsuite_id = next(i for i in sweep.SWEEP
                       if i.split(sweep.SEPARATOR)[0] == experiment)
      loop = _loop_rate(agent_name, bsuite_id, loop_steps)
      ids = program_ids(experiment, ids_per_program)
      compile_seconds, rate = _jax_rate(agent_name, ids, jax_steps)
      hours = suite_steps[experiment] / rate / 3600
      row = dict(agent=agent_name, experiment=experiment,
                 loop_steps_per_s=round(loop), jax_steps_per_s=round(rate),
                 ratio=round(rate / loop, 1),
                 compile_s=round(compile_seconds, 1),
                 program_ids=len(ids),
                 suite_steps=round(suite_steps[experiment]),
                 projected_hours=round(hours, 2))
      rows.append(row)
      print(f'{agent_name:10s} {experiment:20s} {loop:12.0f} {rate:11.0f} '
            f'{rate / loop:6.1f} {compile_seconds:9.1f} '
            f'{suite_steps[experiment]:11.0f} {hours:7.2f}', flush=True)
    total = sum(r['projected_hours'] for r in rows
                if r['agent'] == agent_name)
    print(f'{agent_name}: the {len(experiments)} experiments, one seed, '
          f'projected {total:.1f} hours at the jitted rate', flush=True)
  if output_csv:
    from experiments.lib import run_tables  # pylint: disable=g-import-not-at-top
    run_tables.write_rows(output_csv, rows, COLUMNS)
  return rows


def markdown(csv_paths: Sequence[str]) -> str:
  """The benchmark CSVs' rows as one markdown table, and each agent's
  projected whole suite where every experiment but MNIST's is timed."""
  import csv  # pylint: disable=g-import-not-at-top
  rows = []
  for path in csv_paths:
    with open(path, newline='') as f:
      rows.extend(csv.DictReader(f))
  number = lambda text: f'{float(text):,.{1 if "." in text else 0}f}'
  lines = ['| agent | experiment | ids in the program | bsuite loop steps/s '
           '| jitted steps/s | ratio | compile s | suite steps | projected '
           'hours |', '|---|---|---:|---:|---:|---:|---:|---:|---:|']
  for row in rows:
    lines.append(
        f'| {row["agent"]} | {row["experiment"]} | '
        f'{row.get("program_ids") or 1} | {number(row["loop_steps_per_s"])} '
        f'| {number(row["jax_steps_per_s"])} | {row["ratio"]} | '
        f'{row["compile_s"]} | {number(row["suite_steps"])} | '
        f'{row["projected_hours"]} |')
  totals = []
  for agent in dict.fromkeys(r['agent'] for r in rows):
    mine = [r for r in rows if r['agent'] == agent]
    if len(mine) == 20:
      ratios = sorted(float(r['ratio']) for r in mine)
      totals.append(
          f'{agent} {sum(float(r["projected_hours"]) for r in mine):.1f} '
          f'hours (ratio to bsuite\'s loop {ratios[0]}-{ratios[-1]}, median '
          f'{np.median(ratios):.1f})')
  if totals:
    lines += ['', 'Projected whole suite (the 20 experiments but MNIST\'s, '
              'one seed, at the jitted rate): ' + '; '.join(totals) + '.']
  return '\n'.join(lines)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'Unexpected arguments: {argv[1:]}')
  import agents  # pylint: disable=g-import-not-at-top
  from bsuite import sweep  # pylint: disable=g-import-not-at-top
  known = sorted({i.split(sweep.SEPARATOR)[0] for i in sweep.SWEEP})
  chosen = FLAGS.experiments or [e for e in known
                                  if not e.startswith('mnist')]
  unknown = sorted(set(chosen) - set(known))
  if unknown:
    raise app.UsageError(f'--experiments: unknown {unknown}; known: {known}')
  bad = sorted(set(FLAGS.agents) - set(agents.AGENT_NAMES))
  if bad:
    raise app.UsageError(f'--agents: unknown {bad}; known: '
                         f'{sorted(agents.AGENT_NAMES)}')
  benchmark(FLAGS.agents, chosen, FLAGS.loop_steps, FLAGS.jax_steps,
            FLAGS.ids_per_program, FLAGS.output_csv)


if __name__ == '__main__':
  define_flags()
  app.run(main)
