r"""PE-DQN and its baselines BDQN+P, DLTV-QR and IDS-C51 on VizDoom's
MyWayHome from pixels (PE-DQN paper Sec. 6.4, Table 5).

  python -m experiments.run_vizdoom --agent=pe_dqn --variant=sparse \
      --frames=10000000 --num_envs=32 --save_path=results/vizdoom

`--frames` counts environment steps summed over all environments (the
paper's 10M frames). Hyperparameters default to Table 5 and are flags named
after the config's fields (`--learning_rate`, `--beta_init`, ...); the
schedules and replay are flags in frames (`--learning_starts`,
`--epsilon_decay_frames`, `--target_update_frames`, `--replay_frames`).

Writes, under `<save_path>/<agent>_<variant>_seed<seed>/`:
- `episodes.csv`: one row per finished episode (`frame` at which it ended,
  `env`, `return`, `length`);
- `learning_curve.png`: return against frames, like the paper's Fig. 5b;
- `checkpoints/` with `--checkpoint_every=FRAMES`: the agent's whole state
  (parameters, optimiser, replay, RNG, counters, schedules) with orbax, the
  last two kept. At each checkpoint the episodes in progress are cut (stored
  as truncated) and the environments restarted with seeds derived from the
  run's seed and the checkpoint's number, so a killed run restarted with the
  same command resumes from its last checkpoint, drops the CSV rows written
  after it, and continues exactly as the uninterrupted run: no episode lost
  or repeated. The same command with a larger `--frames` continues a
  finished run the same way.
"""

# Before the other imports: a Ctrl-C while they load (seconds) is kept,
# not lost in a library's start-up (experiments/lib/interrupts.py).
from experiments.lib import interrupts  # pylint: disable=g-bad-import-order
if __name__ == '__main__':
  interrupts.record_during_imports()

import dataclasses
import functools
import os
import time
from typing import Any, Dict, List, Optional, Sequence

from absl import app
from absl import flags
import dm_env
import jax
import numpy as np

from agents import common
from agents import pixel
from agents import pure
from experiments.lib import checkpoints as checkpoints_lib
from experiments.lib import compilation_cache
from experiments.lib import hyperparameter_flags
from experiments.lib import results
from experiments.lib import run_tables
from experiments.lib import vizdoom_runs
from experiments.lib import my_way_home

FLAGS = flags.FLAGS
EPISODE_COLUMNS = ('frame', 'env', 'return', 'length')


def define_flags() -> None:
  flags.DEFINE_enum('agent', 'pe_dqn', list(vizdoom_runs.AGENTS),
                    'Agent to run: pe_dqn, boot_dqn (BDQN+P), dltv_qr or '
                    'ids_c51.')
  flags.DEFINE_enum('variant', 'dense', list(my_way_home.VARIANTS),
                    'MyWayHome variant (Table 6).')
  defaults = pixel.PixelSettings()
  flags.DEFINE_integer('frames', defaults.total_frames,
                       'Environment steps, summed over environments.',
                       lower_bound=1)
  flags.DEFINE_integer('num_envs', defaults.num_envs,
                       'Environments stepped together.',
                       lower_bound=1)
  flags.DEFINE_string('save_path', '/tmp/pe_jax_vizdoom',
                      'Where to save results.')
  flags.DEFINE_integer('seed', 0, 'Seed of the agent and the environments.',
                       lower_bound=0)
  flags.DEFINE_integer('checkpoint_every', 0,
                       'Frames between checkpoints (0: none).', lower_bound=0)
  flags.DEFINE_boolean('overwrite', False,
                       'Start over, deleting an earlier run of these flags.')
  flags.DEFINE_float('progress_every', 30.0,
                     'Seconds between progress lines (0: none).',
                     lower_bound=0.0)
  flags.DEFINE_boolean('verbose', False, 'Print every finished episode.')
  flags.DEFINE_integer('max_episode_steps', my_way_home.MAX_STEPS,
                       'Steps after which an episode is truncated (Table 6: '
                       '2100).', lower_bound=1)
  flags.DEFINE_integer('replay_frames', defaults.replay_frames,
                       'Replay capacity in frames (stored once, uint8).',
                       lower_bound=1)
  flags.DEFINE_integer('n_step', defaults.n_step, 'n of n-step returns.',
                       lower_bound=1)
  flags.DEFINE_integer('learning_starts', defaults.learning_starts,
                       'Frames stored before learning starts.',
                       lower_bound=0)
  flags.DEFINE_integer('epsilon_decay_frames', defaults.epsilon_decay_frames,
                       'Frames over which epsilon goes 1 -> 0.01.',
                       lower_bound=1)
  flags.DEFINE_integer('target_update_frames', defaults.target_update_frames,
                       'Frames between target network updates.',
                       lower_bound=1)
  flags.DEFINE_float('beta_decay_fraction', defaults.beta_decay_fraction,
                     'Fraction of --frames over which beta decays.',
                     lower_bound=0.0, upper_bound=1.0)
  flags.DEFINE_float('per_alpha', defaults.per_alpha,
                     'Priority exponent of prioritized replay.',
                     lower_bound=0.0)
  flags.DEFINE_float('per_beta0', defaults.per_beta0,
                     'Initial importance exponent (annealed to 1).',
                     lower_bound=0.0, upper_bound=1.0)
  hyperparameter_flags.define_hyperparameter_flags()


def run_directory(save_path: str, agent: str, variant: str, seed: int) -> str:
  return os.path.join(save_path, f'{agent}_{variant}_seed{seed}')


def env_seed(seed: int, restarts: int) -> int:
  """Seed of the environment vector after `restarts` restarts."""
  return int(np.random.SeedSequence((seed, restarts)).generate_state(1)[0])


class _Progress:
  """Progress lines: frames, frames/s, episodes, recent return, loss."""

  def __init__(self, every: float, total: int, start_frames: int):
    self.every, self.total = every, total
    self.start, self.start_frames = time.time(), start_frames
    self.last = self.start

  def maybe_print(self, frames: int, rows: List[Dict[str, Any]], state,
                  force: bool = False):
    """`state` must be live: its buffers are donated by the next step."""
    now = time.time()
    if not force and (self.every <= 0 or now - self.last < self.every):
      return
    self.last = now
    recent = [float(r['return']) for r in rows[-100:]]
    mean = f'{np.mean(recent):.3f}' if recent else 'n/a'
    rate = (frames - self.start_frames) / max(now - self.start, 1e-9)
    print(f'frames {frames}/{self.total} ({rate:.0f}/s), episodes '
          f'{len(rows)}, mean return of the last {len(recent)} {mean}, '
          f'loss {float(state.metrics["loss"]):.4f}', flush=True)


def plot_learning_curve(rows: Sequence[Dict[str, Any]], path: str,
                        title: str) -> None:
  """Return against frames: every episode, and a mean over 100 episodes."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use('Agg')
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  frames = np.array([float(r['frame']) for r in rows])
  returns = np.array([float(r['return']) for r in rows])
  fig, ax = plt.subplots(figsize=(6, 4))
  if len(rows):
    ax.scatter(frames, returns, s=3, alpha=0.3, label='episodes')
    window = min(100, len(rows))
    smooth = np.convolve(returns, np.ones(window) / window, mode='valid')
    ax.plot(frames[window - 1:], smooth, color='C1',
            label=f'mean of {window} episodes')
    ax.legend(loc='lower right')
  ax.set_xlabel('frames')
  ax.set_ylabel('return')
  ax.set_title(title)
  fig.tight_layout()
  temporary = path + '.tmp.png'
  fig.savefig(temporary, dpi=100)
  plt.close(fig)
  os.replace(temporary, path)


@functools.lru_cache(maxsize=4)
def _programs(config, settings: pixel.PixelSettings):
  """Jitted act, observe, observe-and-learn and ready of an agent (cached:
  runs of one config in one process compile once)."""
  agent = pixel.make_pixel_agent(config, settings)
  observe_learn = lambda state, *step: agent.learn(agent.observe(state, *step))
  return (jax.jit(agent.act, donate_argnums=0),
          jax.jit(agent.observe, donate_argnums=0),
          jax.jit(observe_learn, donate_argnums=0), jax.jit(agent.ready))


def _as_timestep(timestep: dm_env.TimeStep) -> dm_env.TimeStep:
  return dm_env.TimeStep(np.asarray(timestep.step_type, np.int32),
                         np.asarray(timestep.reward, np.float32),
                         np.asarray(timestep.discount, np.float32),
                         timestep.observation)


def run(agent_name: str, variant: str, frames: int, num_envs: int,
        save_path: str, seed: int = 0, checkpoint_every: int = 0,
        overwrite: bool = False, overrides: Optional[Dict[str, Any]] = None,
        settings: Optional[Dict[str, Any]] = None,
        target_update_frames: int = pixel.PixelSettings.target_update_frames,
        beta_decay_fraction: float = pixel.PixelSettings.beta_decay_fraction,
        progress_every: float = 30.0, verbose: bool = False,
        env_kwargs: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
  """Trains, logs every finished episode, checkpoints; returns the rows."""
  overrides = dict(overrides or {})
  config = vizdoom_runs.make_config(overrides, frames, num_envs, target_update_frames,
                       beta_decay_fraction, agent_name)
  settings = pixel.PixelSettings(
      num_envs=num_envs, total_frames=frames,
      target_update_frames=target_update_frames,
      beta_decay_fraction=beta_decay_fraction, **(settings or {}))
  agent = pixel.make_pixel_agent(config, settings)
  directory = run_directory(save_path, agent_name, variant, seed)
  csv_path = os.path.join(directory, 'episodes.csv')
  if overwrite and os.path.exists(directory):
    import shutil  # pylint: disable=g-import-not-at-top
    shutil.rmtree(directory)
  os.makedirs(directory, exist_ok=True)

  act, observe, observe_learn, ready = _programs(config, settings)
  truncate = jax.jit(pixel.truncate_episodes, static_argnums=3)
  # Jitted, so that no two leaves share a buffer (the steps donate them).
  state = pure.jit_init(agent.init)(jax.random.PRNGKey(seed))
  restarts, rows = 0, []
  store = None
  if checkpoint_every:
    # Everything but the horizon (a longer --frames continues the run).
    identity = dict(agent=agent_name, variant=variant, seed=seed,
                    num_envs=num_envs, overrides=sorted(overrides.items()),
                    settings={k: v for k, v in
                              dataclasses.asdict(settings).items()
                              if k != 'total_frames'},
                    target_update_frames=target_update_frames,
                    beta_decay_fraction=beta_decay_fraction)
    store = checkpoints_lib.ChunkCheckpoints(
        os.path.join(directory, 'checkpoints'), repr(identity))
    like = {'state': state, 'episodes_logged': np.zeros((), np.int32),
            'restarts': np.zeros((), np.int32)}
    restored = store.restore_latest(lambda step: like)
    if restored is not None:
      step, tree = restored
      state = tree['state']
      restarts = int(tree['restarts'])
      logged = int(tree['episodes_logged'])
      rows = run_tables.read_rows(csv_path, EPISODE_COLUMNS)[:logged]
      if len(rows) < logged:
        raise ValueError(f'{csv_path} has {len(rows)} episodes, fewer than '
                         f'the {logged} of checkpoint {step}; remove '
                         f'{directory} to start over.')
      # Episodes logged after the checkpoint are run again: drop them.
      run_tables.write_rows(csv_path, rows, EPISODE_COLUMNS)
      print(f'Resuming {directory} from frame {int(state.frames)} '
            f'(checkpoint {step}, {logged} episodes logged).', flush=True)
  if not rows and os.path.exists(csv_path):
    os.remove(csv_path)  # no checkpoint to continue from: start over

  progress = _Progress(progress_every, frames, int(state.frames))
  vector = my_way_home.VectorMyWayHome(variant, num_envs,
                                       env_seed(seed, restarts),
                                       **(env_kwargs or {}))
  try:
    timestep = _as_timestep(vector.reset())
    episode_return = np.zeros(num_envs)
    episode_length = np.zeros(num_envs, np.int64)
    current = int(state.frames)
    next_checkpoint = ((current // checkpoint_every + 1) * checkpoint_every
                       if checkpoint_every else None)
    learning = bool(ready(state))
    while current < frames:
      interrupts.raise_if_requested()
      state, actions = act(state, timestep.observation)
      actions = np.asarray(actions)
      next_timestep = _as_timestep(vector.step(actions))
      active = timestep.step_type != int(dm_env.StepType.LAST)
      step = (timestep.observation, actions, next_timestep, active)
      if learning:
        state, _ = observe_learn(state, *step)
      else:
        state = observe(state, *step)
        # From the first step with learning_starts frames and a replay
        # start on, every step also learns.
        learning = bool(ready(state))
      current += int(active.sum())
      episode_return += np.where(active, next_timestep.reward, 0.0)
      episode_length += active
      for e in np.flatnonzero(
          active & (next_timestep.step_type == int(dm_env.StepType.LAST))):
        row = {'frame': current, 'env': int(e),
               'return': float(episode_return[e]),
               'length': int(episode_length[e])}
        run_tables.append_row(csv_path, row, EPISODE_COLUMNS)
        rows.append(row)
        if verbose:
          print(f'episode {len(rows)}: {row}', flush=True)
      restart = next_timestep.step_type == int(dm_env.StepType.FIRST)
      episode_return[restart] = 0.0
      episode_length[restart] = 0
      timestep = next_timestep
      progress.maybe_print(current, rows, state)
      if store is not None and (current >= next_checkpoint or
                                current >= frames):
        # Cut the episodes in progress, save, restart the environments.
        state = truncate(state, timestep.observation, timestep.step_type,
                         settings.n_step)
        # A diverged state is never saved: the last good checkpoint stays.
        common.check_finite(state, f'{directory}, frame {current}')
        restarts += 1
        store.save(current, {'state': state,
                             'episodes_logged': np.array(len(rows), np.int32),
                             'restarts': np.array(restarts, np.int32)})
        next_checkpoint = (current // checkpoint_every + 1) * checkpoint_every
        if current >= frames:
          break
        vector.close()
        vector = my_way_home.VectorMyWayHome(variant, num_envs,
                                             env_seed(seed, restarts),
                                             **(env_kwargs or {}))
        timestep = _as_timestep(vector.reset())
        episode_return[:] = 0.0
        episode_length[:] = 0
    progress.maybe_print(current, rows, state, force=progress_every > 0)
    common.check_finite(state, f'{directory}, frame {current}')
  finally:
    vector.close()
  plot_learning_curve(rows, os.path.join(directory, 'learning_curve.png'),
                      f'{agent_name}, MyWayHome {variant}, seed {seed}')
  return rows


def main(argv: Sequence[str]) -> None:
  del argv
  results.quiet_checkpoint_logs()
  results.check_output_flag(FLAGS.save_path, '--save_path')
  overrides = hyperparameter_flags.user_overrides(FLAGS.agent)
  settings = dict(replay_frames=FLAGS.replay_frames, n_step=FLAGS.n_step,
                  learning_starts=FLAGS.learning_starts,
                  epsilon_decay_frames=FLAGS.epsilon_decay_frames,
                  per_alpha=FLAGS.per_alpha, per_beta0=FLAGS.per_beta0)
  try:
    rows = run(FLAGS.agent, FLAGS.variant, FLAGS.frames, FLAGS.num_envs,
               FLAGS.save_path, FLAGS.seed, FLAGS.checkpoint_every,
               FLAGS.overwrite, overrides, settings,
               FLAGS.target_update_frames, FLAGS.beta_decay_fraction,
               FLAGS.progress_every, FLAGS.verbose,
               {'max_steps': FLAGS.max_episode_steps})
  except ValueError as error:
    raise app.UsageError(str(error)) from error
  print(f'{len(rows)} episodes; results in '
        f'{run_directory(FLAGS.save_path, FLAGS.agent, FLAGS.variant, FLAGS.seed)}')


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
