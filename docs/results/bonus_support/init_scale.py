"""How large PE-DQN's untrained outputs are at deep sea's one-hot inputs.

  python docs/results/bonus_support/init_scale.py

He initialisation draws first-layer weights with variance 2 / fan_in, and
deep sea's observation is one-hot over N^2 cells, so a state's first-layer
activations, and everything after them, scale as 1 / N: the randomized
prior (a fixed network of the same kind, times `quantile_prior_scale`)
shrinks fourfold from size 10 to 40 at the same scale. Prints, per size,
the standard deviation of each network's raw outputs (value members, then
bonus members; the first includes its prior) over one-hot inputs, and the
untrained w_avg.
"""

import jax
import jax.numpy as jnp
import numpy as np

from agents import pe_dqn


def main():
  print('size | raw output std per network | times size / 10 | w_avg mean')
  for size in (10, 20, 30, 40, 50):
    config = pe_dqn.PEDQNConfig(num_actions=2)
    cells = size * size
    state = pe_dqn.init(config, jax.random.PRNGKey(0),
                        jnp.zeros((cells,), jnp.float32))
    # Every cell at size 10, an evenly spaced 200 of them above.
    onehots = jnp.eye(cells, dtype=jnp.float32)[::max(1, cells // 200)]
    raw = jax.vmap(lambda o: pe_dqn._forward(  # pylint: disable=protected-access
        config, state.params, state.prior_params, o))(onehots)
    std = np.asarray(raw.std(axis=(0, 2, 3)))
    w_avg = jax.vmap(lambda o: pe_dqn.evaluate(
        config, state.params, state.prior_params, o).disagreement)(onehots)
    print(f'{size} | {np.round(std, 4)} | {np.round(std * size / 10, 4)} | '
          f'{float(jnp.mean(w_avg)):.3f}')


if __name__ == '__main__':
  main()
