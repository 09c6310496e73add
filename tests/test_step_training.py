"""agents.training.make_train_steps: episodes of any length, one program."""

from absl.testing import absltest
import jax
import jax.numpy as jnp
import numpy as np

import agents
from agents import training
from pe_jax.envs import mountain_car


class StepTrainingTest(absltest.TestCase):

  def test_vmapped_trainings_equal_python_loops_and_stop_at_their_episodes(self):
    env = mountain_car.MountainCar(max_steps=25)
    spec_env = __import__('bsuite').load_from_id('mountain_car/0')
    agent = agents.make_pure('dqn', spec_env.observation_spec(),
                             spec_env.action_spec(), batch_size=8,
                             min_replay_size=8, hidden_sizes=(16,))
    episodes = 3
    train = training.make_train_steps(agent, env, episodes, steps_per_call=20)
    rates = jnp.array([1e-3, 5e-2])
    keys = jnp.stack([jax.random.PRNGKey(0), jax.random.PRNGKey(1)])
    carry = jax.jit(jax.vmap(train.init))(keys, {'learning_rate': rates})
    # Agent 1 counts one episode as done already, so it finishes 25 steps
    # before agent 0 and must then stand still while agent 0 goes on.
    carry = carry._replace(episodes=jnp.array([0, 1], jnp.int32))
    run = jax.jit(jax.vmap(train.run))
    calls = 0
    while int(jnp.min(carry.episodes)) < episodes:
      carry = run(carry)
      calls += 1
    self.assertLess(calls, 10)

    act, update = jax.jit(agent.act), jax.jit(agent.update)
    for i in range(2):
      # bsuite's loop, written out, with the runner's keys.
      key = keys[i]
      state = agent.init(key, {'learning_rate': rates[i]})
      env_key, rollout = jax.random.split(jax.random.fold_in(key, 2))
      env_state, timestep = env.reset(env_key)
      ends, steps = [0] * i, 0
      while len(ends) < episodes:
        rollout, step_key, reset_key = jax.random.split(rollout, 3)
        state, action = act(state, timestep)
        env_state, new = env.step(env_state, action, step_key)
        state = update(state, timestep, action, new)
        steps += 1
        timestep = new
        if int(new.step_type) == 2:
          ends.append(steps)
          env_state, timestep = env.reset(reset_key, env_state)
      self.assertEqual(int(carry.episodes[i]), episodes)
      self.assertEqual(int(carry.steps[i]), steps)
      np.testing.assert_array_equal(carry.steps_at_episode[i], ends)
      for got, want in zip(jax.tree_util.tree_leaves(carry.agent.learner),
                           jax.tree_util.tree_leaves(state.learner)):
        np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-6)
    # The goal is out of reach in 25 steps: every episode hits the limit.
    self.assertEqual([int(s) for s in carry.steps], [75, 50])

  def test_bad_arguments_are_named(self):
    env = mountain_car.MountainCar()
    with self.assertRaisesRegex(ValueError, '`max_episodes` must be an int'):
      training.make_train_steps(None, env, 0, 10)
    with self.assertRaisesRegex(ValueError, '`steps_per_call` must be an int'):
      training.make_train_steps(None, env, 5, 0)


if __name__ == '__main__':
  absltest.main()
