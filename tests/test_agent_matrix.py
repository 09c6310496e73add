"""Every registered agent through one matrix: bsuite smoke runs and seeding.

Agent-specific rules, targets and learning tests live in test_q_ensemble,
test_distributional and test_pe_dqn; the pure-function form of every
agent (jit, vmap, scan) in test_pure_agents.
"""

from absl.testing import absltest
from absl.testing import parameterized
import bsuite
from bsuite import sweep
from bsuite.baselines import experiment
import jax.numpy as jnp
import numpy as np

import agents
from agents import common
from agents import hyperparameters
from tests import agent_testing
from tests import bsuite_offline

# One agent of each learner module (Q ensembles, the distributional agents,
# IDS, PE-DQN) runs every id of bsuite's TESTING sweep...
EVERY_ID_AGENTS = ('pe_dqn', 'boot_dqn', 'c51', 'ids_c51')
# ...every other agent three ids that differ in observation shape (1x1,
# 10x5, 1x6), number of actions (11, 3, 3) and episode length (1, 9, up to
# 1000): the observation and replay code is shared, so these catch what an
# agent does differently.
FEW_IDS = ('bandit/0', 'catch/0', 'cartpole/0')
SMOKE_CASES = tuple(
    dict(name=name, bsuite_id=bsuite_id) for name in agents.AGENT_NAMES
    for bsuite_id in (sweep.TESTING if name in EVERY_ID_AGENTS else FEW_IDS))
EPISODES = 3
SMOKE_REPLAY = dict(batch_size=2, min_replay_size=2, replay_capacity=1000)


class SmokeTest(parameterized.TestCase):
  """A few episodes in bsuite's own loop, learning in every case: learning
  starts after 2 transitions, so even bandit's one-step episodes reach it."""

  def test_every_agent_is_covered(self):
    covered = {case['name'] for case in SMOKE_CASES}
    self.assertEqual(covered, set(agents.AGENT_NAMES))
    self.assertTrue(set(FEW_IDS) <= set(sweep.TESTING))

  @parameterized.parameters(*SMOKE_CASES)
  def test_runs_and_learns(self, name, bsuite_id):
    overrides = agent_testing.small(name, **SMOKE_REPLAY)
    with bsuite_offline.offline_mnist():
      env = bsuite.load_from_id(bsuite_id)
      agent = agents.make(name, env.observation_spec(), env.action_spec(),
                          seed=0, num_episodes=EPISODES, **overrides)
      self.assertEqual(float(agent.metrics['loss']), 0.0)
      experiment.run(agent, env, num_episodes=EPISODES)
    self.assertEqual(agent.episode, EPISODES)
    self.assertGreater(agent.total_steps, SMOKE_REPLAY['min_replay_size'])
    # Metrics are zeros until the first learning step.
    loss = float(agent.metrics['loss'])
    self.assertTrue(np.isfinite(loss))
    self.assertGreater(loss, 0.0)


class SeedTest(parameterized.TestCase):

  # The smoke runs' settings on catch: the same compiled programs as the
  # smoke case on catch/0 (loaded from the tests' compilation cache where
  # another worker built them), and learning from the second step on, so
  # the actions also depend on what each seed learned.
  @parameterized.parameters(*agents.AGENT_NAMES)
  def test_same_seed_same_actions_other_seed_other_actions(self, name):
    overrides = dict(agent_testing.small(name, **SMOKE_REPLAY),
                     num_episodes=EPISODES)
    actions = lambda seed: agent_testing.actions_of(
        name, seed=seed, episodes=EPISODES, **overrides)
    first = actions(5)
    self.assertLen(first, EPISODES * 9)  # catch's episodes are 9 steps
    self.assertEqual(first, actions(5))
    self.assertNotEqual(first, actions(6))



# Bad input to `agents.make`: (agent, keyword arguments, error, what the
# message names). Every agent's config checks its own fields eagerly.
BAD_INPUT = (
    ('dqn', dict(epsilon=1.5), ValueError, 'epsilon'),
    ('boot_dqn', dict(action_rule='sometimes'), ValueError, 'action_rule'),
    ('tdu', dict(num_exploiters=25), ValueError, 'num_exploiters'),
    ('boot_dqn', dict(mask_probability=0.0), ValueError, 'mask_probability'),
    ('ucb_infogain', dict(infogain_temperature=0.0), ValueError,
     'infogain_temperature'),
    ('c51', dict(v_min=2.0, v_max=1.0), ValueError, 'v_min'),
    ('c51', dict(action_rule='dltv'), ValueError, 'action_rule'),
    ('ids_c51', dict(eps1=0.0), ValueError, 'eps1'),
    ('qr_dqn', dict(num_atoms=1), ValueError, 'num_atoms'),
    ('pe_dqn', dict(v_min=1.0, v_max=0.0), ValueError, 'v_min'),
    ('pe_dqn', dict(learning_rate=-1.0), ValueError, 'learning_rate'),
    ('pe_dqn', dict(num_atoms=1), ValueError, 'num_atoms'),
    ('pe_dqn', dict(no_such_parameter=3), TypeError, 'no_such_parameter'),
    ('pe_dqn', dict(num_episodes=0), ValueError, 'num_episodes'),
    ('pe_dqn', dict(disagreement='cramer'), ValueError,
     '`disagreement` must be one of'),
    ('pe_dqn', dict(warmup_policy='random'), ValueError,
     '`warmup_policy` must be one of'),
    ('pe_dqn', dict(bonus_v_min=5.0, bonus_v_max=1.0), ValueError,
     '`bonus_v_min` must be'),
)


class BadInputTest(parameterized.TestCase):

  @parameterized.parameters(*BAD_INPUT)
  def test_is_refused_naming_the_parameter(self, name, kwargs, error,
                                           message):
    env = bsuite.load_from_id('bandit/0')
    with self.assertRaisesRegex(error, message):
      agents.make(name, env.observation_spec(), env.action_spec(), **kwargs)


class PresetTest(parameterized.TestCase):
  """An agent is its learner's config defaults under its preset."""

  @parameterized.parameters(*agents.AGENT_NAMES)
  def test_config_is_defaults_under_preset(self, name):
    env = bsuite.load_from_id('deep_sea/0')
    config = agents.make(name, env.observation_spec(), env.action_spec(),
                         seed=0)._config
    expected = agents.defaults(name)
    for field, value in expected.items():
      self.assertEqual(getattr(config, field), value, field)
    # The agent's settings are applied, not only the class defaults.
    for field, value in agents.agent_settings(name).items():
      self.assertEqual(getattr(config, field), value, field)

  def test_settings_differ_between_agents_of_a_learner(self):
    seen = {}
    for name in agents.AGENT_NAMES:
      key = (agents.config_class(name),
             tuple(sorted(agents.agent_settings(name).items())))
      self.assertNotIn(key, seen, f'{name} repeats {seen.get(key)}')
      seen[key] = name

  def test_every_hyperparameter_has_a_meaning(self):
    names = {n for a in agents.AGENT_NAMES
             for n in agents.hyperparameter_names(a)}
    self.assertEqual(set(hyperparameters.MEANINGS), names)
    # Every agent on the Q-ensemble learner accepts TDU's fields.
    self.assertEqual(hyperparameters.agents_with('tdu_beta'),
                     ('dqn', 'boot_dqn', 'ensemble_voting', 'ucb',
                      'ucb_infogain', 'tdu'))
    self.assertIn('Agents: all agents.',
                  hyperparameters.describe('learning_rate'))
    self.assertIn('Agents: pe_dqn, pe_dqn_qr_qr, pe_dqn_c51_c51, '
                  'pe_dqn_ind.', hyperparameters.describe('bonus_v_max'))
    # --help gives each agent's default, not "the agent's default".
    self.assertIn('Defaults: 0.001 (all agents).',
                  hyperparameters.describe('learning_rate'))
    prior = hyperparameters.describe('prior_scale')
    self.assertIn('3 (tdu)', prior)
    self.assertIn('20 (dltv_qr, ids_c51)', prior)

  def test_vizdoom_settings(self):
    self.assertEqual(agents.vizdoom_agent_names(),
                     ('pe_dqn', 'boot_dqn', 'dltv_qr', 'ids_c51'))
    for name in agents.vizdoom_agent_names():
      values = agents.vizdoom_settings(name)
      self.assertEqual(values['torso'], 'impala')
      self.assertEqual(values['batch_size'], 512)
    with self.assertRaisesRegex(ValueError, "No VizDoom settings for 'ucb'"):
      agents.vizdoom_settings('ucb')
    with self.assertRaisesRegex(ValueError, 'valid names'):
      agents.agent_settings('nope')


class CheckFiniteTest(absltest.TestCase):

  def test_names_each_non_finite_leaf_and_ignores_integers(self):
    tree = {'params': {'w': jnp.ones(3), 'b': jnp.array([0.0, jnp.nan])},
            'opt': (jnp.array([jnp.inf]), jnp.zeros(2)),
            'count': jnp.array(7, jnp.int32)}
    self.assertEqual(common.non_finite_leaves(tree),
                     ["['opt'][0]", "['params']['b']"])
    with self.assertRaisesRegex(FloatingPointError,
                                r"run 1, episode 5: non-finite .*\['b'\]"):
      common.check_finite(tree, 'run 1, episode 5')
    common.check_finite({'w': jnp.ones(2), 'n': jnp.array(3)}, 'fine')


if __name__ == '__main__':
  absltest.main()
