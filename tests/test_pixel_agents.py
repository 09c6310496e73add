"""Pixel agents over E environments: PE-DQN, BDQN+P, DLTV-QR and IDS-C51 on
IMPALA torsos,
prioritized frame replay, per-environment acting heads."""

import dm_env
import jax
import numpy as np
import pytest

from agents import distributional
from agents import pixel
from agents import q_ensemble
from experiments.lib import vizdoom_runs

TINY = dict(batch_size=4, impala_channels=(4,), impala_hidden=8)
SETTINGS = dict(num_envs=2, frame_shape=(12, 12), stack=2, replay_frames=80,
                n_step=2, learning_starts=6, total_frames=1000)


def _agent(name):
  overrides = dict(TINY)
  if name in ('boot_dqn', 'ids_c51'):
    overrides['num_ensemble'] = 3
  if name != 'boot_dqn':
    overrides['num_atoms'] = 5
  config = vizdoom_runs.make_config(overrides, 1000, 2, 40, 0.33, name)
  return pixel.make_pixel_agent(config, pixel.PixelSettings(**SETTINGS))


def _steps(num_steps, seed=0):
  """Random observations; environment 0 ends an episode every 3 steps."""
  rng = np.random.default_rng(seed)
  observation = rng.integers(0, 256, (2, 12, 12, 2)).astype(np.uint8)
  step_type = np.ones(2, np.int32)
  for t in range(num_steps):
    new_observation = rng.integers(0, 256, (2, 12, 12, 2)).astype(np.uint8)
    new_type = np.array([2 if t % 3 == 2 else 1, 1], np.int32)
    if step_type[0] == 2:
      new_type[0] = 0
    yield observation, step_type, dm_env.TimeStep(
        new_type, rng.normal(size=2).astype(np.float32),
        np.ones(2, np.float32), new_observation)
    observation, step_type = new_observation, new_type


@pytest.mark.parametrize('name',
                         ['pe_dqn', 'boot_dqn', 'dltv_qr', 'ids_c51'])
def test_pixel_agent_acts_stores_and_learns(name):
  agent = _agent(name)
  state = jax.jit(agent.init)(jax.random.PRNGKey(0))
  act, observe = jax.jit(agent.act), jax.jit(agent.observe)
  learn, update = jax.jit(agent.learn), jax.jit(agent.update)
  heads = []
  for observation, step_type, next_timestep in _steps(12):
    state, actions = act(state, observation)
    assert actions.shape == (2,) and np.all((0 <= actions) & (actions < 5))
    active = step_type != 2
    step = (observation, actions, next_timestep, active)
    if bool(agent.ready(observe(state, *step))):
      # The in-program update is the runner's observe-then-learn.
      by_update, _ = update(state, *step)
      state, metrics = learn(observe(state, *step))
      for a, b in zip(jax.tree_util.tree_leaves(by_update.learner),
                      jax.tree_util.tree_leaves(state.learner)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
      assert float(metrics['loss']) > 0
    else:
      state = observe(state, *step)
    heads.append(np.asarray(state.heads))
  assert int(state.frames) == 12 * 2 - 3  # the restart steps are no frames
  learner = getattr(state.learner, 'ensemble', state.learner)  # IDS: two
  assert int(learner.steps) >= 3
  heads = np.array(heads)
  assert len(set(heads[:, 1])) == 1  # environment 1 never ended an episode
  if name == 'boot_dqn':
    assert len(set(heads[:, 0])) >= 2  # a new head after each of 4 ends
  else:
    assert np.all(heads == 0)


def test_dltv_scores_by_hand():
  config = vizdoom_runs.make_config({'num_atoms': 4}, 1000, 2, 40, 0.33,
                                   'dltv_qr')
  assert config.dltv_time_scale == pytest.approx(1.0)  # 10^3 / 1000 frames
  outputs = np.array([[3.0, 0.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
  scores = distributional.dltv_scores(config, outputs, 500.0)
  # sigma_+^2 = 1/(2K) sum over the upper half of (theta - theta_{K/2})^2:
  # sorted 0, 1, 2, 3, theta_2 = 2, upper (2, 3): (0 + 1) / 8.
  coefficient = 0.5 * np.sqrt(np.log(500.0) / 500.0)
  np.testing.assert_allclose(
      scores, [1.5 + coefficient * np.sqrt(1 / 8), 1.0], rtol=1e-5)


def test_q_ensemble_double_dqn_and_huber_by_hand():
  config = q_ensemble.QEnsembleConfig(num_actions=2, num_ensemble=1,
                                      prior_scale=0.0, double_dqn=True,
                                      huber_param=1.0, hidden_sizes=(4,))
  state = q_ensemble.init(config, jax.random.PRNGKey(0), np.zeros(3))
  observation, next_observation = np.ones(3), np.array([0.5, -1.0, 2.0])
  q = q_ensemble.member_q_values(config, state.params, None, observation)[0]
  online_next = q_ensemble.member_q_values(config, state.params, None,
                                     next_observation)[0]
  target_params = jax.tree_util.tree_map(lambda x: 2.0 * x, state.params)
  target_next = q_ensemble.member_q_values(config, target_params, None,
                                     next_observation)[0]
  losses, _ = q_ensemble._sample_losses(
      config, state.params, target_params, None, None, np.ones(1),
      observation, 1, 3.0, 0.9, next_observation)
  td = 3.0 + 0.9 * float(target_next[int(np.argmax(online_next))]) - float(
      q[1])
  huber = 0.5 * td**2 if abs(td) <= 1 else abs(td) - 0.5
  np.testing.assert_allclose(float(losses[0]), huber, rtol=1e-5)


def test_settings_refuse_an_array_naming_the_field():
  with pytest.raises(ValueError, match=r'^`epsilon_start` must be one number, '
                     r'got an array of shape \(2,\)'):
    pixel.PixelSettings(epsilon_start=np.ones(2))
  with pytest.raises(ValueError, match=r'^`num_envs` must be one number'):
    pixel.PixelSettings(num_envs=np.ones(3, int))
