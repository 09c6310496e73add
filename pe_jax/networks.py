"""Flax Linen networks, randomized prior functions and vmapped ensembles.

Networks act on one unbatched observation; batches and ensemble members are
added with `jax.vmap`. An ensemble is one parameter pytree whose leaves carry
a leading member axis [M, ...], created and applied by vmapping `init` and
`apply`, so M members cost one XLA program, not M.
"""

from typing import Any, Optional, Sequence

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp

Array = chex.Array
Params = Any

# He et al. (2015) initialisation with a truncated normal (PE-DQN Table 4).
he_truncated_normal = nn.initializers.variance_scaling(2.0, 'fan_in',
                                                       'truncated_normal')


class MLP(nn.Module):
  """Flatten, ReLU hidden layers, linear output: [*obs_shape] -> [output_size]."""
  hidden_sizes: Sequence[int]
  output_size: int

  @nn.compact
  def __call__(self, observation: Array) -> Array:
    x = jnp.reshape(observation, (-1,)).astype(jnp.float32)
    for size in self.hidden_sizes:
      x = nn.relu(nn.Dense(size, kernel_init=he_truncated_normal)(x))
    return nn.Dense(self.output_size, kernel_init=he_truncated_normal)(x)


class DistributionalMLP(nn.Module):
  """MLP with num_atoms outputs per action: [*obs_shape] -> [A, K].

  The K outputs of an action are quantile locations for a quantile model and
  logits for a categorical model; K = 1 gives a plain Q-network.
  """
  hidden_sizes: Sequence[int]
  num_actions: int
  num_atoms: int

  @nn.compact
  def __call__(self, observation: Array) -> Array:
    outputs = MLP(self.hidden_sizes, self.num_actions * self.num_atoms)(
        observation)
    return outputs.reshape(self.num_actions, self.num_atoms)


def apply_with_prior(network: nn.Module, params: Params,
                     prior_params: Optional[Params], prior_scale: Array,
                     observation: Array) -> Array:
  """Network output plus a scaled, fixed randomized prior (Osband et al., 2018).

  The prior is a second, never-trained set of parameters of the same
  architecture; its output is added before any softmax, so for a categorical
  model it shifts the logits. No gradient reaches `prior_params`.

  Args:
    network: the Flax module.
    params: trainable parameters.
    prior_params: fixed prior parameters, or None for no prior.
    prior_scale: scalar scale of the prior.
    observation: one observation.

  Returns:
    The network's output with the prior added.
  """
  output = network.apply(params, observation)
  if prior_params is None:
    return output
  prior = jax.lax.stop_gradient(network.apply(prior_params, observation))
  return output + prior_scale * prior


def init_ensemble(network: nn.Module, key: chex.PRNGKey, num_members: int,
                  observation: Array) -> Params:
  """Independently initialised parameters of M members, stacked: leaves [M, ...]."""
  keys = jax.random.split(key, num_members)
  return jax.vmap(network.init, in_axes=(0, None))(keys, observation)


def apply_ensemble(network: nn.Module, params: Params,
                   prior_params: Optional[Params], prior_scales: Array,
                   observation: Array) -> Array:
  """Outputs of all members on one observation: [M, *output_shape].

  Args:
    network: the Flax module shared by the members.
    params: stacked trainable parameters, leaves [M, ...].
    prior_params: stacked prior parameters, or None for no priors.
    prior_scales: [M] prior scale of each member.
    observation: one observation.
  """
  return jax.vmap(apply_with_prior, in_axes=(None, 0, 0, 0, None))(
      network, params, prior_params, prior_scales, observation)


def num_members(params: Params) -> int:
  """Ensemble size M of stacked parameters."""
  return jax.tree_util.tree_leaves(params)[0].shape[0]
