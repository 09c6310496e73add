"""bsuite's settings of an agent for one experiment or id: the one place
that knows what bsuite's environments need of an agent.

  kwargs = for_bsuite_id('pe_dqn', 'deep_sea/10', overrides={})
  agents.make('pe_dqn', obs_spec, action_spec, **kwargs)

- the return range of a categorical support (`agents.return_ranges`, one
  table for all 468 ids), at the agent's discount;
- on deep sea above size 10, the quantile prior scaled with the size
  (`size_scaled_prior`);
- on the JAX deep sea, the one-hot torso (`for_jax_deep_sea`).
"""

import dataclasses
from typing import Any, Dict

import agents
from agents import paper_presets
from agents import return_ranges


# Deep sea's observations are one-hot over its N x N cells and every
# network, the randomized prior too, is He-initialised (first-layer variance
# 2 / N^2), so each untrained output, and the ensemble disagreement a prior
# leaves on untried actions, shrinks as 1 / N (docs/study/prior_and_scaling.md,
# "Why"). A quantile prior scale set at size 10 (PE-DQN's 0.5, from the
# study) is therefore multiplied by N / 10 on deep sea sizes above 10.
PRIOR_REFERENCE_SIZE = 10
SIZE_SCALED_PRIOR_EXPERIMENTS = ('deep_sea', 'deep_sea_stochastic')


def size_scaled_prior(scale: float, size: int) -> float:
  """A prior scale set at deep sea size 10, at size `size`: scale x N / 10
  above 10, `scale` itself at 10 and below (where nothing was measured)."""
  return scale * max(1.0, size / PRIOR_REFERENCE_SIZE)


def for_experiment(name: str, overrides: Dict[str, Any],
                   experiment_name: str, **settings) -> Dict[str, Any]:
  """`overrides` plus agent `name`'s settings for a bsuite experiment (name
  and settings, e.g. 'deep_sea', size=20):

  - the return range (v_min, v_max) for agents with a categorical support,
    at the discount the agent will use (the `discount` override, else its
    default);
  - on deep sea (both variants) above size 10, the quantile prior scale of
    agents with quantile members, scaled by `size_scaled_prior`.

  The user's own v_min / v_max / quantile_prior_scale win, and so do those
  of a `preset` in `overrides` (the paper preset's prior is not scaled).
  """
  kwargs = dict(overrides)
  preset_name = kwargs.get('preset', 'default')
  resolved = agents.defaults(name, preset_name)
  chosen = set(kwargs) | set(paper_presets.settings(name, preset_name))
  fields = {f.name: f for f in dataclasses.fields(agents.config_class(name))}
  if ({'v_min', 'v_max'} <= set(fields)
      and not {'v_min', 'v_max'} & chosen):
    discount = kwargs.get('discount', resolved['discount'])
    kwargs['v_min'], kwargs['v_max'] = (
        return_ranges.return_range_for_experiment(experiment_name, discount,
                                                  **settings))
  size = settings.get('size')
  if (experiment_name in SIZE_SCALED_PRIOR_EXPERIMENTS
      and size is not None and size > PRIOR_REFERENCE_SIZE
      and 'quantile_prior_scale' in fields
      and 'quantile_prior_scale' not in chosen
      and 'quantile' in kwargs.get('member_kinds',
                                   resolved.get('member_kinds', ()))):
    kwargs['quantile_prior_scale'] = size_scaled_prior(
        resolved['quantile_prior_scale'], size)
  return kwargs


def for_jax_deep_sea(name: str, overrides: Dict[str, Any],
                     experiment_name: str, size: int) -> Dict[str, Any]:
  """`for_experiment` for a JAX deep sea run, with the 'one_hot_mlp'
  torso: deep sea's observations are one-hot grids (all zeros at the end),
  so the first layer is a row lookup with the same parameters and outputs
  as the 'mlp' torso's product, at a fraction of its cost (at size 100 the
  product is 10,000 x width per sample). A `torso` in `overrides` wins."""
  kwargs = for_experiment(name, overrides, experiment_name, size=size)
  fields = {f.name for f in dataclasses.fields(agents.config_class(name))}
  if 'torso' in fields:
    kwargs.setdefault('torso', 'one_hot_mlp')
  return kwargs


def for_bsuite_id(name: str, bsuite_id: str,
                  overrides: Dict[str, Any]) -> Dict[str, Any]:
  """`for_experiment` for a bsuite id (its experiment and settings)."""
  experiment_name, settings = return_ranges.experiment_of(bsuite_id)
  return for_experiment(name, overrides, experiment_name, **settings)
