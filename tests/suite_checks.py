"""Checks of the exact bsuite ports, run at XLA's default settings.

The test process compiles at optimisation level 0 (tests/conftest.py), where
XLA neither fuses multiply-adds nor turns divisions by constants into
multiplications: the rewrites `pe_jax.envs.exact` exists for. The tests
run these functions in a child process (`agent_testing.run_code`), which
compiles as experiments do; each raises AssertionError naming the first
difference.
"""

import collections
import contextlib
import tempfile

from bsuite import sweep
import jax
import jax.numpy as jnp
import numpy as np

from experiments.lib import results
from pe_jax import envs
from pe_jax.envs import exact
from pe_jax.envs import numpy_random
from pe_jax.envs import suite
from pe_jax.envs.suite import mnist
from tests import bsuite_offline

# Steps of each random action sequence: several episodes of each experiment.
STEPS = collections.defaultdict(lambda: 600, {
    'cartpole': 1500, 'cartpole_noise': 1500, 'cartpole_scale': 1500,
    'cartpole_swingup': 2500, 'mountain_car': 3100,
    'mountain_car_noise': 3100, 'mountain_car_scale': 3100,
    'memory_len': 1500, 'umbrella_length': 1500, 'deep_sea': 1200,
    'deep_sea_stochastic': 1200})


@contextlib.contextmanager
def generated_mnist():
  """bsuite's loader and the port both read generated MNIST files."""
  with tempfile.TemporaryDirectory() as directory:
    bsuite_offline.write_fake_mnist(directory)
    bsuite_offline.datasets_load_mnist_from(directory)
    default, mnist.DEFAULT_DIRECTORY = mnist.DEFAULT_DIRECTORY, directory
    try:
      yield directory
    finally:
      mnist.DEFAULT_DIRECTORY = default
      bsuite_offline.restore_datasets_load_mnist()


def chosen_ids(experiment: str, count: int = 3):
  """`count` ids spread over the experiment, its first and last included."""
  ids = [i for i in sweep.SWEEP if i.split('/')[0] == experiment]
  return [ids[round(k * (len(ids) - 1) / (count - 1))] for k in range(count)]


def bsuite_rollout(bsuite_id: str, seed: int, actions):
  env = results.load_seeded(bsuite_id, seed)
  first = env.reset()
  steps = [(env.step(int(action)), env.bsuite_info()) for action in actions]
  return first, steps


def port_rollouts(env, states, actions):
  """Jitted, vmapped rollouts: (first timesteps, timesteps [B, T], infos)."""
  def rollout(state, actions):
    state, first = env.reset(state)

    def body(state, action):
      state, step = env.step(state, action)
      return state, (step, env.info(state))

    _, (steps, infos) = jax.lax.scan(body, state, actions)
    return first, steps, infos

  return jax.tree_util.tree_map(np.asarray, jax.jit(jax.vmap(rollout))(
      states, jnp.asarray(actions, jnp.int32)))


def assert_equal_rollouts(bsuite_id, seed, first, steps, infos, actions,
                          row):
  """Row `row` of the port's rollouts equals bsuite's, step by step."""
  theirs_first, theirs = bsuite_rollout(bsuite_id, seed, actions)
  label = f'{bsuite_id} seed {seed}'
  np.testing.assert_array_equal(first.observation[row],
                                theirs_first.observation, label)
  step_types = np.array([int(step.step_type) for step, _ in theirs])
  first_steps = step_types == 0
  columns = {
      'step type': (steps.step_type[row], step_types),
      # FIRST timesteps: bsuite's None, the port's 0 and 1.
      'reward': (np.where(first_steps, 0., steps.reward[row]),
                 np.array([step.reward or 0. for step, _ in theirs])),
      'discount': (np.where(first_steps, 1., steps.discount[row]),
                   np.array([1. if step.discount is None else step.discount
                             for step, _ in theirs])),
      'observation': (steps.observation[row],
                      np.stack([step.observation for step, _ in theirs])),
  }
  for name in theirs[0][1]:
    columns[name] = (infos[name][row].astype(np.float64),
                     np.array([float(info[name]) for _, info in theirs]))
  assert steps.observation.dtype == np.float32, steps.observation.dtype
  for name, (ours, expected) in columns.items():
    assert ours.shape == expected.shape, (label, name, ours.shape,
                                          expected.shape)
    differ = np.flatnonzero((ours != expected).reshape(len(actions), -1)
                            .any(axis=1))
    if differ.size:
      t = differ[0]
      raise AssertionError(f'{label}: {name} differs first at step {t + 1}: '
                           f'{ours[t]!r} vs bsuite {expected[t]!r}')
  episodes = int(np.sum(step_types == 2))
  assert episodes >= 3, f'{label}: {episodes} episodes, too few tested'


def random_actions(experiment: str) -> None:
  """Three ids of `experiment`, seeds 0 and 3, random actions: equal to
  bsuite; the rollouts of ids that share a program in one vmapped call."""
  with generated_mnist():
    pairs = [(i, s) for i in chosen_ids(experiment) for s in (0, 3)]
    programs = collections.defaultdict(list)
    for bsuite_id, seed in pairs:
      env = envs.load(bsuite_id, seed=seed)
      programs[env.program_key].append((bsuite_id, seed, env))
    rng = np.random.RandomState(len(experiment))
    for group in programs.values():
      env = group[0][2]
      actions = rng.randint(env.num_actions,
                            size=(len(group), STEPS[experiment]))
      first, steps, infos = port_rollouts(
          env, suite.stack([e.init() for _, _, e in group]), actions)
      for row, (bsuite_id, seed, _) in enumerate(group):
        assert_equal_rollouts(bsuite_id, seed, first, steps, infos,
                              actions[row], row)
  print(f'{experiment}: {len(pairs)} rollouts equal in {len(programs)} '
        'programs')


def scripted_action(experiment: str, observation) -> int:
  """Closed-loop policies that reach what random actions do not: cartpole
  balanced to its time limit, mountain car at the goal."""
  if experiment.startswith('cartpole_swingup'):
    return 2 if observation[0, 4] * observation[0, 3] < 0 else 0
  if experiment.startswith('cartpole'):
    return 2 if observation[0, 2] + 0.3 * observation[0, 4] > 0 else 0
  return 2 if observation[0, 1] >= 0 else 0  # mountain car: pump energy


def lockstep(bsuite_id: str, steps: int = 3500):
  """The port through `as_dm_env` and bsuite's environment, in lockstep
  under a scripted policy; returns the episode lengths."""
  experiment = bsuite_id.split('/')[0]
  ours = envs.as_dm_env(envs.load(bsuite_id, seed=2))
  theirs = results.load_seeded(bsuite_id, 2)
  mine, step = ours.reset(), theirs.reset()
  lengths, count = [], 0
  for t in range(steps):
    np.testing.assert_array_equal(mine.observation, step.observation,
                                  f'{bsuite_id} step {t}')
    action = scripted_action(experiment, step.observation)
    mine, step = ours.step(action), theirs.step(action)
    assert ((mine.step_type, mine.reward, mine.discount) ==
            (step.step_type, step.reward, step.discount)), (bsuite_id, t + 1,
                                                            mine, step)
    assert ours.bsuite_info() == theirs.bsuite_info(), (
        bsuite_id, t + 1, ours.bsuite_info(), theirs.bsuite_info())
    count += 1
    if step.last():
      lengths.append(count)
      count = 0
  print(lengths)
  return lengths


def arithmetic() -> None:
  """XLA's rewrites are present at the defaults, and `exact` undoes them."""
  a, b, c = np.random.RandomState(1).randn(3, 20_000)
  with jax.enable_x64(True):
    fused = np.asarray(jax.jit(lambda a, b, c: c + a * b)(a, b, c))
    divided = np.asarray(jax.jit(lambda a: a / 3.0)(a))
    assert np.mean(fused != c + a * b) > 0.01, 'no fused multiply-adds'
    assert np.mean(divided != a / 3.0) > 0.01, 'no reciprocal divisions'
    ours = np.asarray(jax.jit(lambda a, b, c: c + exact.mul(a, b))(a, b, c))
    np.testing.assert_array_equal(ours, c + a * b)
    for constant in (3.0, 1.1, 100.0, 1000.0):
      np.testing.assert_array_equal(
          jax.jit(lambda a: exact.div(a, constant))(a), a / constant)
  stream, numpy_stream = numpy_random.from_seed(4), np.random.RandomState(4)
  _, normals = jax.jit(lambda s: jax.lax.scan(
      lambda s, _: numpy_random.standard_normal(s), s, None, length=5000))(
          stream)
  np.testing.assert_array_equal(normals, numpy_stream.randn(5000))
  _, uniforms = jax.jit(lambda s: jax.lax.scan(
      lambda s, _: numpy_random.uniform(s, -0.6, -0.4), s, None,
      length=5000))(numpy_random.from_seed(4))
  np.testing.assert_array_equal(
      uniforms, np.random.RandomState(4).uniform(-0.6, -0.4, 5000))
  print('arithmetic equal')
