r"""VizDoom throughput: environment frames/s alone, training frames/s, and
the memory of the replay (PE-DQN paper Sec. 6.4 settings unless changed).

  python -m experiments.benchmarks.benchmark_vizdoom --num_envs=32 --batch_size=512

Environment frames/s: one MyWayHome stepped with random actions in this
process, and a vector of `--num_envs` in subprocesses. Training frames/s:
`agents.pixel` acting and learning (one learning step per vector step, as
in a run past `learning_starts`) on random frames, timed after compilation.
Replay memory: the arrays of a frame replay of `--replay_frames`.
"""

import time
from typing import Sequence

from absl import app
from absl import flags
import dm_env
import jax
import numpy as np

import agents
from agents import pixel
from agents import pure
from experiments.lib import vizdoom_runs
from pe_jax import frame_replay
from experiments.lib import my_way_home

FLAGS = flags.FLAGS


def env_frames_per_second(num_steps: int) -> float:
  env = my_way_home.MyWayHome('dense', seed=0)
  rng = np.random.default_rng(0)
  env.reset()
  start = time.perf_counter()
  for _ in range(num_steps):
    env.step(int(rng.integers(5)))
  elapsed = time.perf_counter() - start
  env.close()
  return num_steps / elapsed


def vector_frames_per_second(num_envs: int, num_steps: int) -> float:
  rng = np.random.default_rng(0)
  with my_way_home.VectorMyWayHome('dense', num_envs, seed=0) as vector:
    vector.reset()
    start = time.perf_counter()
    for _ in range(num_steps):
      vector.step(rng.integers(0, 5, num_envs))
    elapsed = time.perf_counter() - start
  return num_envs * num_steps / elapsed


def replay_bytes(replay_frames: int, num_envs: int) -> int:
  shapes = jax.eval_shape(lambda: frame_replay.frame_replay_init(
      num_envs, replay_frames // num_envs, (42, 42), 6, 10))
  return sum(int(np.prod(s.shape)) * s.dtype.itemsize
             for s in jax.tree_util.tree_leaves(shapes))


def training_frames_per_second(num_envs: int, batch_size: int,
                               num_steps: int, replay_frames: int):
  """(frames/s, seconds per vector step) of acting + learning."""
  defaults = pixel.PixelSettings()
  config = vizdoom_runs.make_config({'batch_size': batch_size},
                                    defaults.total_frames, num_envs,
                                    defaults.target_update_frames,
                                    defaults.beta_decay_fraction)
  settings = pixel.PixelSettings(num_envs=num_envs,
                                 replay_frames=replay_frames,
                                 learning_starts=0)
  agent = pixel.make_pixel_agent(config, settings)
  state = pure.jit_init(agent.init)(jax.random.PRNGKey(0))
  act = jax.jit(agent.act, donate_argnums=0)
  observe_learn = jax.jit(lambda state, *step: agent.learn(
      agent.observe(state, *step)), donate_argnums=0)
  observe = jax.jit(agent.observe, donate_argnums=0)
  rng = np.random.default_rng(0)

  def observations():
    return rng.integers(0, 256, (num_envs, 42, 42, 6)).astype(np.uint8)

  timestep = dm_env.TimeStep(
      np.ones(num_envs, np.int32), np.zeros(num_envs, np.float32),
      np.ones(num_envs, np.float32), observations())
  active = np.ones(num_envs, bool)

  def step(state, observation, learn=True):
    state, actions = act(state, observation)
    next_timestep = timestep._replace(observation=observations())
    step = (observation, actions, next_timestep, active)
    if learn:
      state, metrics = observe_learn(state, *step)
    else:
      state, metrics = observe(state, *step), None
    return state, next_timestep.observation, metrics

  observation = timestep.observation
  # Fill past n_step so that the replay has starts, then compile learning.
  for _ in range(settings.n_step + 2):
    state, observation, _ = step(state, observation, learn=False)
  state, observation, metrics = step(state, observation)
  jax.block_until_ready(metrics)
  start = time.perf_counter()
  for _ in range(num_steps):
    state, observation, metrics = step(state, observation)
  jax.block_until_ready(metrics)
  per_step = (time.perf_counter() - start) / num_steps
  return num_envs / per_step, per_step


def main(argv: Sequence[str]) -> None:
  del argv
  print(f'JAX devices: {jax.devices()}')
  fps = env_frames_per_second(FLAGS.env_steps)
  print(f'one MyWayHome, random actions: {fps:.0f} frames/s')
  fps = vector_frames_per_second(FLAGS.num_envs, FLAGS.env_steps //
                                 FLAGS.num_envs)
  print(f'{FLAGS.num_envs} MyWayHome in subprocesses: {fps:.0f} frames/s')
  size = replay_bytes(FLAGS.replay_frames, FLAGS.num_envs)
  print(f'replay of {FLAGS.replay_frames} frames: {size / 2**30:.2f} GiB')
  fps, per_step = training_frames_per_second(
      FLAGS.num_envs, FLAGS.batch_size, FLAGS.train_steps,
      FLAGS.train_replay_frames)
  frames = pixel.PixelSettings().total_frames
  print(f'training (act + learn, batch {FLAGS.batch_size}, '
        f'{FLAGS.num_envs} envs): {per_step:.3f} s per vector step, '
        f'{fps:.1f} frames/s; the run\'s {frames / 1e6:g}M frames would '
        f'take {frames / fps / 3600:.1f} h')


def define_flags() -> None:
  run = pixel.PixelSettings()  # the run's settings (Table 5)
  flags.DEFINE_integer('num_envs', run.num_envs, 'Environments.',
                       lower_bound=1)
  flags.DEFINE_integer('batch_size',
                       agents.vizdoom_settings('pe_dqn')['batch_size'],
                       'Learning batch (default: Table 5\'s).', lower_bound=1)
  flags.DEFINE_integer('env_steps', 4000, 'Frames timed per env benchmark.',
                       lower_bound=1)
  flags.DEFINE_integer('train_steps', 5, 'Vector steps timed in training.',
                       lower_bound=1)
  flags.DEFINE_integer('replay_frames', run.replay_frames,
                       'Replay size reported.',
                       lower_bound=1)
  flags.DEFINE_integer('train_replay_frames', 100_000,
                       'Replay allocated for the training benchmark.',
                       lower_bound=1)


if __name__ == '__main__':
  define_flags()
  app.run(main)
