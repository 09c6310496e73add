"""Several seeds of one agent on their own Python environments, in lockstep.

  runner = lockstep.Lockstep(agents.make_pure('boot_dqn', obs_spec, spec),
                             seeds=[0, 1, 2, 3])
  results = lockstep.run_episodes(runner, envs, num_episodes=100)

Each seed has its own dm_env environment (bsuite's, stepped in Python); all
seeds' agents are one vmapped state, and each lockstep is one jitted call for
all of them: update on the transition just seen, then act on the next
timestep. Seed k starts from `init(PRNGKey(k))`, the state of
`agents.make(..., seed=k)`, and goes through the same sequence of updates
and actions as that agent in bsuite's loop. A seed that has run its episodes
stops stepping its environment; its agent is fed a no-op transition until
the others finish (its state is no longer used).
"""

import time
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple

import dm_env
import jax
import jax.numpy as jnp
import numpy as np

from agents import per_agent
from agents import pure


def stack_timesteps(timesteps: Sequence[dm_env.TimeStep]) -> dm_env.TimeStep:
  """bsuite timesteps -> one timestep of arrays with a leading seed axis."""
  arrays = [pure.as_arrays(t) for t in timesteps]
  return dm_env.TimeStep(*(np.stack(field) for field in zip(*arrays)))


class Lockstep:
  """The agents of several seeds as one vmapped state.

  Args:
    agent: a pure agent (`agents.make_pure`).
    seeds: one agent per seed; seed k's key is `jax.random.PRNGKey(k)`.
    hyperparameters: optional per-agent array hyperparameters, each of shape
      [len(seeds)] (see `agents.pure`).
  """

  def __init__(self, agent: pure.PureAgent, seeds: Sequence[int],
               hyperparameters=None):
    if not seeds:
      raise ValueError('`seeds` must name at least one seed.')
    self.seeds = [int(s) for s in seeds]
    keys = jnp.stack([jax.random.PRNGKey(s) for s in self.seeds])
    if hyperparameters:
      agent.check(hyperparameters, len(self.seeds))
    hyperparameters = per_agent.as_float32(hyperparameters, len(self.seeds))
    self.state = pure.jit_init(jax.vmap(agent.init))(keys, hyperparameters)

    def update_act(state, timestep, action, new_timestep, next_timestep):
      state = agent.update(state, timestep, action, new_timestep)
      return agent.act(state, next_timestep)

    self._act = jax.jit(jax.vmap(agent.act), donate_argnums=0)
    self._update_act = jax.jit(jax.vmap(update_act), donate_argnums=0)

  def first_actions(self, timesteps: Sequence[dm_env.TimeStep]) -> np.ndarray:
    """[S] actions on the first timesteps of the seeds' environments."""
    self.state, actions = self._act(self.state, stack_timesteps(timesteps))
    return np.asarray(actions)

  def step(self, timestep: dm_env.TimeStep, actions, new_timesteps,
           next_timesteps) -> Tuple[np.ndarray, dm_env.TimeStep]:
    """Updates every seed on (timestep, action, new_timestep), then acts.

    Args:
      timestep: the seeds' current timesteps, stacked (`stack_timesteps`; the
        previous `step` returns them), so each is converted once.
      actions: [S] actions taken on them.
      new_timesteps: the seeds' environments' answers.
      next_timesteps: `new_timesteps[k]`, or after a last timestep the first
        timestep of seed k's next episode.

    Returns:
      ([S] next actions, `next_timesteps` stacked).
    """
    stacked_next = stack_timesteps(next_timesteps)
    self.state, next_actions = self._update_act(
        self.state, timestep, jnp.asarray(actions, jnp.int32),
        stack_timesteps(new_timesteps), stacked_next)
    return np.asarray(next_actions), stacked_next


class SeedResult(NamedTuple):
  episode_returns: List[float]
  steps: int
  actions: Optional[List[int]]  # every action, with `record_actions`


def run_episodes(runner: Lockstep, envs: Sequence[dm_env.Environment],
                 num_episodes: int, record_actions: bool = False,
                 on_episode: Optional[Callable[[int, int, float], Any]] = None
                 ) -> List[SeedResult]:
  """bsuite's agent-environment loop for every seed at once.

  Args:
    runner: the seeds' agents.
    envs: one environment per seed (their loggers see exactly the episodes of
      bsuite's loop).
    num_episodes: episodes per seed.
    record_actions: keep every action (tests compare them).
    on_episode: called as `on_episode(seed_index, episodes_done, return)`
      when an episode ends (progress output).

  Returns:
    One `SeedResult` per seed, in the order of `runner.seeds`.
  """
  if len(envs) != len(runner.seeds):
    raise ValueError(f'{len(envs)} environments for {len(runner.seeds)} '
                     'seeds; give one environment per seed.')
  if not isinstance(num_episodes, int) or num_episodes < 1:
    raise ValueError(f'`num_episodes` must be an int >= 1, got '
                     f'{num_episodes!r}.')
  count = len(envs)
  timesteps = [env.reset() for env in envs]
  actions = runner.first_actions(timesteps)
  stacked = stack_timesteps(timesteps)
  episodes = [0] * count
  current = [0.0] * count
  returns = [[] for _ in range(count)]
  steps = [0] * count
  taken = [[] for _ in range(count)] if record_actions else None
  while min(episodes) < num_episodes:
    new_timesteps, next_timesteps = [], []
    for k, env in enumerate(envs):
      if episodes[k] >= num_episodes:
        # Finished: a no-op transition keeps the batch shape.
        new_timesteps.append(timesteps[k])
        next_timesteps.append(timesteps[k])
        continue
      if record_actions:
        taken[k].append(int(actions[k]))
      new = env.step(int(actions[k]))
      steps[k] += 1
      current[k] += new.reward
      following = new
      if new.last():
        episodes[k] += 1
        returns[k].append(current[k])
        current[k] = 0.0
        if on_episode is not None:
          on_episode(k, episodes[k], returns[k][-1])
        if episodes[k] < num_episodes:
          following = env.reset()
      new_timesteps.append(new)
      next_timesteps.append(following)
    actions, stacked = runner.step(stacked, actions, new_timesteps,
                                   next_timesteps)
    timesteps = next_timesteps
  return [SeedResult(returns[k], steps[k], taken[k] if record_actions else None)
          for k in range(count)]


class Progress:
  """Prints a line at most every `every` seconds while seeds run."""

  def __init__(self, label: str, num_seeds: int, num_episodes: int,
               every: float, verbose: bool = False):
    self._label, self._seeds, self._episodes = label, num_seeds, num_episodes
    self._every, self._verbose = every, verbose
    self._start = self._last = time.time()
    self._done = [0] * num_seeds
    self._returns: List[float] = []

  def __call__(self, seed_index: int, episodes_done: int,
               episode_return: float) -> None:
    self._done[seed_index] = episodes_done
    self._returns.append(episode_return)
    now = time.time()
    if self._verbose or (self._every and now - self._last >= self._every):
      self._last = now
      print(f'  {self._label} episodes {sum(self._done)}/'
            f'{self._seeds * self._episodes} ({self._seeds} seeds)  '
            f'{now - self._start:.0f} s  mean return (last 20) '
            f'{np.mean(self._returns[-20:]):.3f}', flush=True)
