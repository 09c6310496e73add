"""Every agent as a value: pure functions under jit(vmap(...)) and lax.scan,
and the jitted training against the bsuite adapter in bsuite's own loop."""

import dataclasses
import os
from typing import NamedTuple

from absl.testing import absltest
from absl.testing import parameterized
from bsuite.environments import deep_sea
import dm_env
from dm_env import specs as dm_env_specs
import jax
import jax.numpy as jnp
import numpy as np
import optax

import agents
from agents import common
from agents import distributional
from agents import ids_c51
from agents import pe_dqn
from agents import pure
from agents import q_ensemble
from agents import training
from pe_jax import replay
from pe_jax.envs import deep_sea as jax_deep_sea
from pe_jax.envs import mountain_car
from tests import agent_testing

SIZE = 4
SMALL = dict(batch_size=8, min_replay_size=8, replay_capacity=64)


def overrides_for(name):
  return agent_testing.small(name, **SMALL)


def float_leaves(tree):
  """The floating-point leaves (parameters, optimiser moments) of a state."""
  return [x for x in jax.tree_util.tree_leaves(tree)
          if jnp.issubdtype(x.dtype, jnp.floating)]


def bsuite_specs(size=SIZE):
  env = deep_sea.DeepSea(size=size, mapping_seed=0)
  return env.observation_spec(), env.action_spec()


class CorridorState(NamedTuple):
  step: jnp.ndarray         # [] int32
  paid_episodes: jnp.ndarray  # [] float32
  episodes: jnp.ndarray     # [] int32


class Corridor:
  """`Corridor.length` steps; action 1 at the last one pays 1."""
  length = 3
  num_actions = 2
  episode_length = length

  def _timestep(self, step_type, reward, step):
    return dm_env.TimeStep(jnp.asarray(step_type, jnp.int32),
                           jnp.asarray(reward, jnp.float32),
                           jnp.where(step_type == 2, 0.0, 1.0),
                           jax.nn.one_hot(step, self.length))

  def reset(self, key, state=None, action_mapping=None):
    del key, action_mapping
    zero = jnp.zeros((), jnp.int32)
    if state is None:
      state = CorridorState(zero, jnp.zeros(()), zero)
    return state._replace(step=zero), self._timestep(0, 0.0, zero)

  def step(self, state, action, key=None):
    del key
    last = state.step == self.length - 1
    reward = jnp.where(last & (action == 1), 1.0, 0.0)
    state = CorridorState(state.step + 1, state.paid_episodes + reward,
                          state.episodes + last.astype(jnp.int32))
    return state, self._timestep(jnp.where(last, 2, 1), reward,
                                 jnp.minimum(state.step, self.length - 1))

  def episode_counters(self, state):
    return state.episodes - state.paid_episodes.astype(jnp.int32), \
        state.paid_episodes

  def state_action_index(self, state, action):
    return state.step * self.num_actions + action


class PureAgentsTest(parameterized.TestCase):

  @parameterized.parameters(*agents.AGENT_NAMES)
  def test_jit_vmap_scan_trains_every_agent(self, name):
    agent = agents.make_pure(name, *bsuite_specs(), num_episodes=20,
                             **overrides_for(name))
    env = jax_deep_sea.DeepSea(SIZE)
    train = training.make_train(agent, env, episodes_per_call=5)
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    mappings = jnp.stack([jax_deep_sea.bsuite_action_mapping(SIZE, s)
                          for s in range(2)])
    carry = jax.jit(jax.vmap(train.init))(keys, mappings)
    start = float_leaves(carry.agent.learner)
    carry, stats = jax.jit(jax.vmap(train.run))(carry)
    np.testing.assert_array_equal(carry.agent.episode, [5, 5])
    np.testing.assert_array_equal(carry.agent.total_steps, [20, 20])
    self.assertEqual(stats.total_bad_episodes.shape, (2, 5))
    # 20 transitions >= min_replay_size: learning ran for both seeds ...
    end = float_leaves(carry.agent.learner)
    change = np.max(np.stack([
        jnp.max(jnp.abs(a - b), axis=tuple(range(1, a.ndim)))
        for a, b in zip(end, start)]), axis=0)
    self.assertTrue(np.all(change > 0), change)
    # ... and the seeds are different trainings.
    self.assertGreater(float(jnp.max(jnp.abs(end[0][0] - end[0][1]))), 0.0)
    for value in jax.tree_util.tree_leaves(carry.agent.metrics):
      self.assertTrue(np.all(np.isfinite(value)))

  @parameterized.parameters('boot_dqn', 'pe_dqn', 'dqn')
  def test_jitted_training_takes_the_adapters_actions(self, name):
    # bsuite's DeepSea and the bsuite adapter, stepped in Python, against the
    # JAX deep sea and the same agent inside one lax.scan. Both run the same
    # float32 programs; they are compiled apart (fused differently), which
    # could flip an argmax between two values within rounding of each other.
    # No such tie occurs in these 30 episodes.
    size, seed, episodes = 5, 3, 30
    overrides = overrides_for(name)
    env = deep_sea.DeepSea(size=size, mapping_seed=seed)
    expected = agent_testing.actions_of(
        name, seed=seed, episodes=episodes, make_env=lambda: env,
        num_episodes=episodes, **overrides)
    agent = agents.make_pure(name, env.observation_spec(), env.action_spec(),
                             num_episodes=episodes, **overrides)
    train = training.make_train(agent, jax_deep_sea.DeepSea(
        size, mapping_seed=seed), episodes_per_call=episodes,
                                record_actions=True)
    carry, stats = jax.jit(train.run)(train.init(jax.random.PRNGKey(seed)))
    np.testing.assert_array_equal(np.asarray(stats.actions).ravel(), expected)
    self.assertEqual(int(stats.total_bad_episodes[-1]),
                     env.bsuite_info()['total_bad_episodes'])
    self.assertEqual(int(carry.agent.total_steps), len(expected))

  def test_map_and_vmap_batching_train_the_same_agents(self):
    agent = agents.make_pure('boot_dqn', *bsuite_specs(), num_episodes=10,
                             **overrides_for('boot_dqn'))
    train = training.make_train(agent, jax_deep_sea.DeepSea(SIZE), 10,
                                record_actions=True)
    keys = jax.random.split(jax.random.PRNGKey(4), 3)
    actions = {}
    for batching in training.BATCHINGS:
      carry = jax.jit(jax.vmap(train.init))(keys)
      _, stats = jax.jit(training.over_agents(train.run, batching))(carry)
      actions[batching] = np.asarray(stats.actions)
    self.assertEqual(actions['map'].shape, (3, 10, SIZE))
    np.testing.assert_array_equal(actions['map'], actions['vmap'])
    with self.assertRaisesRegex(ValueError, "`batching` must be one of"):
      training.over_agents(train.run, 'pmap')

  def test_auto_batching_is_map_on_cpu_and_vmap_on_accelerators(self):
    want = 'map' if jax.default_backend() == 'cpu' else 'vmap'
    self.assertEqual(training.resolve_batching('auto'), want)
    self.assertEqual(training.resolve_batching('vmap'), 'vmap')
    with self.assertRaisesRegex(ValueError, "one of \\('auto', 'vmap'"):
      training.resolve_batching('pmap')

  def test_make_train_runs_any_fixed_length_environment(self):
    # The runner reads an environment only through its interface: a
    # three-step corridor that pays 1 for action 1 at the last step.
    agent = agents.make_pure('dqn', dm_env_specs.BoundedArray(
        (Corridor.length,), np.float32, 0.0, 1.0), dm_env_specs.DiscreteArray(
            2), num_episodes=12, **overrides_for('dqn'))
    train = training.make_train(agent, Corridor(), episodes_per_call=12,
                                record_actions=True, record_visits=True)
    _, stats = jax.jit(train.run)(train.init(jax.random.PRNGKey(0)))
    actions = np.asarray(stats.actions)
    self.assertEqual(actions.shape, (12, Corridor.length))
    paid = actions[:, -1] == 1
    np.testing.assert_array_equal(stats.episode_return, paid.astype(float))
    np.testing.assert_array_equal(stats.total_bad_episodes,
                                  np.cumsum(~paid))
    np.testing.assert_array_equal(stats.denoised_return, np.cumsum(paid))
    np.testing.assert_array_equal(
        stats.state_actions,
        np.arange(Corridor.length) * 2 + actions)

  def test_make_train_refuses_variable_length_environments(self):
    agent = agents.make_pure('dqn', *bsuite_specs())
    with self.assertRaisesRegex(TypeError, 'episode_length.*make_train_steps'):
      training.make_train(agent, mountain_car.MountainCar(), 5)

  def test_unknown_agent(self):
    with self.assertRaisesRegex(ValueError, 'nope'):
      agents.make_pure('nope', *bsuite_specs())

  def test_bad_episodes_per_call(self):
    agent = agents.make_pure('dqn', *bsuite_specs())
    with self.assertRaisesRegex(ValueError, 'episodes_per_call'):
      training.make_train(agent, jax_deep_sea.DeepSea(SIZE), 0)

  def test_make_pure_compiles_nothing(self):
    compiles = []

    def count(event, duration_secs, **kwargs):
      del duration_secs, kwargs
      if event == '/jax/core/compile/backend_compile_duration':
        compiles.append(event)

    jax.monitoring.register_event_duration_secs_listener(count)
    try:
      agent = agents.make_pure('boot_dqn', *bsuite_specs(),
                               **overrides_for('boot_dqn'))
      self.assertEqual(compiles, [])  # The adapter it comes from starts lazily.
      pure.jit_init(agent.init)(jax.random.PRNGKey(0))
      self.assertNotEmpty(compiles)  # The listener sees compilations.
    finally:
      jax.monitoring.unregister_event_duration_listener(count)

  def test_adapter_and_runners_start_from_the_same_bits(self):
    # At the default optimisation level (the suite compiles at level 0, see
    # conftest): the adapter's `init`, `jit_init(vmap(init))` of the runners
    # and the lockstep give every seed bit-identical states.
    script = """
import jax, numpy as np
from bsuite.environments import deep_sea
import dm_env
from dm_env import specs as dm_env_specs
import agents
from agents import lockstep, pure
env = deep_sea.DeepSea(size=4, mapping_seed=0)
specs = env.observation_spec(), env.action_spec()
agent = agents.make_pure('pe_dqn', *specs, hidden_sizes=(16,))
keys = jax.numpy.stack([jax.random.PRNGKey(s) for s in (3, 5)])
runner = pure.jit_init(jax.vmap(agent.init))(keys)
stepper = lockstep.Lockstep(agent, [3, 5]).state
for i, seed in enumerate((3, 5)):
  adapter = agents.make('pe_dqn', *specs, seed=seed, hidden_sizes=(16,))
  for other in (runner, stepper):
    for a, b in zip(jax.tree_util.tree_leaves(adapter._full_state),
                    jax.tree_util.tree_leaves(other)):
      np.testing.assert_array_equal(np.asarray(a), np.asarray(b)[i])
print('same bits')
"""
    env = {k: v for k, v in os.environ.items() if k != 'XLA_FLAGS'}
    result = agent_testing.run_code(script, env=env, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    self.assertIn('same bits', result.stdout)

  @parameterized.parameters(('pe_dqn', pe_dqn), ('boot_dqn', q_ensemble),
                            ('c51', distributional), ('ids_c51', ids_c51))
  def test_start_metrics_are_zeros_shaped_as_learn_returns_them(self, name,
                                                                 module):
    # One agent per learner module: `init` names the metrics
    # (`LearnerFns.metrics`) instead of tracing `learn` for them.
    agent = agents.make_pure(name, *bsuite_specs(), **overrides_for(name))

    def start_and_learned(key):
      state = agent.init(key)
      batch = replay.replay_sample_at(
          state.replay, jnp.zeros(agent.config.batch_size, jnp.int32),
          agent.config.discount)
      return state.metrics, module.LEARNER.learn(
          agent.config, state.learner, batch, state.episode)[1]

    start, learned = jax.eval_shape(start_and_learned, jax.random.PRNGKey(0))
    self.assertEqual(start, learned)

  def test_tdu_bandit_is_not_pure(self):
    with self.assertRaisesRegex(ValueError, 'use_bandit'):
      agents.make_pure('tdu', *bsuite_specs(), use_bandit=True)


class ArrayHyperparametersTest(parameterized.TestCase):
  """Per-agent values of shape-free hyperparameters in one program."""

  @parameterized.named_parameters(
      ('boot_dqn_lr_prior', 'boot_dqn',
       {'learning_rate': (1e-3, 1e-2), 'prior_scale': (5.0, 1.0)}),
      ('pe_dqn_beta_prior', 'pe_dqn',
       {'beta_init': (5.0, 0.5), 'quantile_prior_scale': (20.0, 3.0),
        'learning_rate': (5e-4, 3e-3)}),
      ('dqn_epsilon_discount', 'dqn',
       {'epsilon': (0.05, 0.5), 'discount': (0.99, 0.9)}))
  def test_each_agent_trains_as_if_built_with_its_values(self, name, values):
    # Agent i of the vmapped program against an agent built with agent i's
    # numbers as config constants, same key: the same actions throughout.
    size, episodes, seed = 4, 25, 1
    overrides = overrides_for(name)
    specs = bsuite_specs(size)
    env = jax_deep_sea.DeepSea(size, mapping_seed=0)
    agent = agents.make_pure(name, *specs, num_episodes=episodes, **overrides)
    arrays = {k: jnp.asarray(v, jnp.float32) for k, v in values.items()}
    agent.check(arrays)
    train = training.make_train(agent, env, episodes, record_actions=True)
    keys = jnp.stack([jax.random.PRNGKey(seed)] * 2)
    carry = jax.jit(jax.vmap(train.init, in_axes=(0, None, 0)))(
        keys, None, arrays)
    carry, stats = jax.jit(jax.vmap(train.run))(carry)
    for i in range(2):
      built = agents.make_pure(name, *specs, num_episodes=episodes,
                               **{**overrides,
                                  **{k: v[i] for k, v in values.items()}})
      single = training.make_train(built, env, episodes, record_actions=True)
      _, expected = jax.jit(single.run)(single.init(jax.random.PRNGKey(seed)))
      np.testing.assert_array_equal(stats.actions[i], expected.actions)
    # The two agents are different trainings.
    self.assertFalse(np.array_equal(stats.actions[0], stats.actions[1]))

  def test_unknown_name_lists_the_array_hyperparameters(self):
    agent = agents.make_pure('boot_dqn', *bsuite_specs())
    with self.assertRaisesRegex(ValueError, r"\['hidden_sizes'\].*"
                                r"learning_rate"):
      agent.init(jax.random.PRNGKey(0), {'hidden_sizes': 3.0})

  def test_out_of_range_value_names_the_parameter(self):
    agent = agents.make_pure('pe_dqn', *bsuite_specs())
    with self.assertRaisesRegex(ValueError, '`learning_rate` must be > 0'):
      agent.check({'learning_rate': np.array([1e-3, -1.0])})
    with self.assertRaisesRegex(ValueError, '`discount` must be in'):
      agent.check({'discount': 1.5})

  def test_values_for_another_number_of_agents_are_refused(self):
    agent = agents.make_pure('dqn', *bsuite_specs())
    three = {'learning_rate': np.array([1e-3, 2e-3, 3e-3])}
    agent.check(three)  # without a count: any stack of valid values
    agent.check(three, num_agents=3)
    agent.check({'learning_rate': 1e-3}, num_agents=8)  # one for all
    with self.assertRaisesRegex(ValueError, r'`learning_rate`: \(3,\) '
                                'values for 8 agents'):
      agent.check(three, num_agents=8)
    from agents import lockstep  # pylint: disable=g-import-not-at-top
    with self.assertRaisesRegex(ValueError, 'values for 2 agents'):
      lockstep.Lockstep(agent, [0, 1], three)

  def test_init_of_one_agent_refuses_a_stack_of_values(self):
    agent = agents.make_pure('dqn', *bsuite_specs())
    three = {'learning_rate': np.array([1e-3, 2e-3, 3e-3])}
    with self.assertRaisesRegex(ValueError, r'`learning_rate`: init starts '
                                r'one agent .* shape \(3,\).*jax.vmap'):
      agent.init(jax.random.PRNGKey(0), three)
    states = jax.vmap(agent.init)(jax.random.split(jax.random.PRNGKey(0), 3),
                                  three)
    np.testing.assert_allclose(states.hyperparameters['learning_rate'],
                               three['learning_rate'], rtol=1e-6)

  @parameterized.parameters(*agents.AGENT_NAMES)
  def test_building_with_an_array_names_the_parameter(self, name):
    for value, said in ((np.array([1e-3, 1e-3, 1e-3]), r'array of shape '
                         r'\(3,\)'), ([1e-3, 1e-3], r'array of shape \(2,\)')):
      with self.assertRaisesRegex(ValueError, '^`learning_rate` must be one '
                                  'number, got an ' + said):
        agents.make(name, *bsuite_specs(), learning_rate=value)
    with self.assertRaisesRegex(ValueError, '^`discount` must be one number'):
      agents.make(name, *bsuite_specs(), discount=np.full((2, 2), 0.9))
    # A NumPy scalar is one number.
    agents.make(name, *bsuite_specs(), learning_rate=np.float32(1e-3))

  def test_a_feature_built_off_cannot_be_switched_on(self):
    # boot_dqn is built with epsilon 0: no epsilon-greedy draws compiled.
    agent = agents.make_pure('boot_dqn', *bsuite_specs())
    with self.assertRaisesRegex(ValueError, '`epsilon` was built as 0.0'):
      agent.check({'epsilon': [0.0, 0.1]})
    agent.check({'epsilon': [0.0, 0.0]})  # Off stays allowed.


  def test_configured_is_a_pytree_whose_leaves_are_the_given_arrays(self):
    from agents import per_agent  # pylint: disable=g-import-not-at-top
    config = agents.make_pure('pe_dqn', *bsuite_specs()).config
    view = per_agent.configured(config, {'beta_init': 2.0,
                                         'learning_rate': 1e-3})
    leaves, treedef = jax.tree_util.tree_flatten(view)
    self.assertLen(leaves, 2)
    # The static part is the config: equal configs give one treedef.
    self.assertEqual(treedef, jax.tree_util.tree_flatten(
        per_agent.configured(config, {'beta_init': 5.0,
                                      'learning_rate': 1.0}))[1])
    # Through jit and vmap as an argument; fields not given read the config.
    read = jax.jit(jax.vmap(lambda c: (c.beta_init * 1.0, c.discount)))
    batch = jax.tree_util.tree_map(lambda x: jnp.stack([x, 2 * x]), view)
    beta, discount = read(batch)
    np.testing.assert_allclose(beta, [2.0, 4.0])
    np.testing.assert_allclose(discount, [config.discount] * 2)
    # Static reads and properties: the number built, and derived settings
    # computed from the view.
    self.assertEqual(per_agent.static_value(view, 'beta_init'),
                     config.beta_init)
    self.assertEqual(view.bonus_top, config.bonus_top)

    @dataclasses.dataclass(frozen=True)
    class Toy:
      rate: float = 1.0

      @property
      def doubled(self):
        return 2 * self.rate

    toy = per_agent.configured(Toy(), {'rate': 3.0})
    self.assertEqual(float(toy.doubled), 6.0)  # the array, not the 1.0 built
    self.assertIs(per_agent.configured(config, None), config)
    with self.assertRaises(AttributeError):
      view.beta_init = 3.0  # frozen like the config


class AdamEpsilonTest(parameterized.TestCase):

  @parameterized.parameters(('boot_dqn', 32), ('pe_dqn', 32), ('c51', 64),
                            ('dltv_qr', 128), ('ucb', 16))
  def test_derived_from_the_batch_size(self, name, batch_size):
    agent = agents.make_pure(name, *bsuite_specs(), batch_size=batch_size)
    self.assertEqual(common.adam_epsilon(agent.config), 1e-3 / batch_size)
    # The optimiser every learner builds uses it: on gradients of the size
    # of eps the first Adam step is lr * g / (|g| + eps), so eps shows.
    grads = {'w': jnp.array([1e-5, -3e-4, 2e-2])}
    optimizer = common.optimizer(agent.config)
    update, _ = optimizer.update(grads, optimizer.init(grads))
    reference = optax.adam(agent.config.learning_rate, eps=1e-3 / batch_size)
    expected, _ = reference.update(grads, reference.init(grads))
    np.testing.assert_allclose(update['w'], expected['w'], rtol=1e-6)
    other = optax.adam(agent.config.learning_rate, eps=1e-3 / 128 if
                       batch_size != 128 else 1e-8)
    wrong, _ = other.update(grads, other.init(grads))
    self.assertGreater(np.max(np.abs(update['w'] - wrong['w'])), 1e-6)

  def test_explicit_value_wins(self):
    agent = agents.make_pure('pe_dqn', *bsuite_specs(), batch_size=32,
                             adam_eps=1e-6)
    self.assertEqual(common.adam_epsilon(agent.config), 1e-6)
    # bsuite's DQN keeps its own epsilon.
    dqn = agents.make_pure('dqn', *bsuite_specs())
    self.assertEqual(common.adam_epsilon(dqn.config), 1e-8)


if __name__ == '__main__':
  absltest.main()
