"""MyWayHome: the variants' wads, spawns and facings, preprocessing, episode
ends and the subprocess vector."""

import struct

import dm_env
import numpy as np
import pytest

vizdoom = pytest.importorskip(
    'vizdoom', reason='vizdoom not installed: pip install -e ".[vizdoom]"')

# pylint: disable=g-import-not-at-top,wrong-import-position
from experiments.lib import my_way_home

NUM_RESETS = 30


def _stock_wad() -> bytes:
  with open(my_way_home.stock_scenario_path(), 'rb') as f:
    return f.read()


def _positions(variant, seed=3, resets=NUM_RESETS):
  env = my_way_home.MyWayHome(variant, seed=seed)
  try:
    positions = []
    for _ in range(resets):
      env.reset()
      positions.append(env.player_position())
    return np.array(positions)
  finally:
    env.close()


def test_variant_wads_differ_from_stock_only_in_behavior():
  stock = _stock_wad()
  assert my_way_home.variant_wad_bytes('dense', stock) == stock
  offset, size = my_way_home._lumps(stock)['BEHAVIOR']
  for variant in ('sparse', 'very_sparse'):
    wad = my_way_home.variant_wad_bytes(variant, stock)
    assert len(wad) == len(stock)
    changed = np.flatnonzero(np.frombuffer(wad, np.uint8)
                             != np.frombuffer(stock, np.uint8))
    assert changed.size > 0
    assert changed.min() >= offset and changed.max() < offset + size
    # The MINI chunk's spawn spot range now holds one spot.
    behavior = wad[offset:offset + size]
    mini = behavior.index(b'MINI') + 12
    spot = my_way_home.SPAWNS[variant][0]
    assert struct.unpack_from('<4i', behavior, mini)[2:] == (spot, 1)


def test_variant_wad_rejects_other_inputs():
  with pytest.raises(ValueError, match='`variant` must be one of'):
    my_way_home.variant_wad_bytes('hard', _stock_wad())
  with pytest.raises(ValueError, match='not a WAD'):
    my_way_home.variant_wad_bytes('sparse', b'ZWAD' + bytes(100))


@pytest.mark.parametrize('variant', ['sparse', 'very_sparse'])
def test_sparse_variants_spawn_at_their_spot_facing_their_way(variant):
  positions = _positions(variant)
  spot, (x, y), (low, high) = my_way_home.SPAWNS[variant]
  np.testing.assert_allclose(my_way_home.map_spots()[spot], (x, y), atol=0.1)
  np.testing.assert_allclose(positions[:, 0], x, atol=0.1)
  np.testing.assert_allclose(positions[:, 1], y, atol=0.1)
  assert np.all(positions[:, 2] >= low - 1e-3)
  assert np.all(positions[:, 2] <= high + 1e-3)
  if variant == 'sparse':  # random within the range, not one angle
    assert np.ptp(positions[:, 2]) > 1.0


def test_dense_spawns_at_many_spots_facing_every_way():
  positions = _positions('dense')
  map_spots = np.array(list(my_way_home.map_spots().values()))
  assert len(map_spots) == 17
  # Every spawn is at a map spot, and many spots are used.
  distances = np.linalg.norm(positions[:, None, :2] - map_spots[None], axis=-1)
  assert distances.min(axis=1).max() < 0.1
  assert len(set(distances.argmin(axis=1))) >= 8  # of 17, over 30 resets
  # Facings cover the circle: every quadrant seen.
  assert len(set((positions[:, 2] // 90).astype(int))) == 4


def test_resize_area_equals_supersampled_block_mean():
  image = np.random.default_rng(0).integers(0, 256, (120, 160)).astype(
      np.uint8)
  # 21x supersampling makes 42 | 120*21 and 42 | 160*21: exact area means.
  supersampled = np.repeat(np.repeat(image.astype(np.float64), 21, 0), 21, 1)
  reference = supersampled.reshape(42, 60, 42, 80).mean((1, 3))
  resized = my_way_home.resize_area(image, 42, 42)
  assert resized.dtype == np.uint8
  assert np.abs(resized - reference).max() <= 0.5 + 1e-9
  with pytest.raises(ValueError, match=r'\[H, W\]'):
    my_way_home.resize_area(image[None], 42, 42)


def test_observations_stack_frames_and_episodes_truncate():
  env = my_way_home.MyWayHome('sparse', seed=0, max_steps=8)
  try:
    spec = env.observation_spec()
    assert spec.shape == (42, 42, 6) and spec.dtype == np.uint8
    assert env.action_spec().num_values == 5
    first = env.reset()
    assert first.first() and first.observation.shape == (42, 42, 6)
    assert first.observation.dtype == np.uint8
    # The first observation repeats the first frame.
    assert all(np.array_equal(first.observation[..., i],
                              first.observation[..., 0]) for i in range(6))
    previous = first
    for t in range(1, 9):
      timestep = env.step(1)  # turning changes the view every tic
      np.testing.assert_array_equal(timestep.observation[..., :-1],
                                    previous.observation[..., 1:])
      assert timestep.reward == pytest.approx(my_way_home.LIVING_REWARD)
      if t < 8:
        assert timestep.mid() and timestep.discount == 1.0
      previous = timestep
    assert timestep.last() and timestep.discount == 1.0  # truncation
    assert not np.array_equal(timestep.observation[..., -1],
                              first.observation[..., -1])
    assert env.step(0).first()  # the step after LAST restarts
    with pytest.raises(ValueError, match='`action` must be in'):
      env.step(5)
  finally:
    env.close()


def test_constructor_errors_name_the_parameter():
  with pytest.raises(ValueError, match='`variant`'):
    my_way_home.MyWayHome('easy')
  with pytest.raises(ValueError, match='`max_steps`'):
    my_way_home.MyWayHome('dense', max_steps=0)
  with pytest.raises(ValueError, match='`seed`'):
    my_way_home.MyWayHome('dense', seed=-1)


def test_same_seed_same_game_other_seed_other_game():
  def run(seed):
    env = my_way_home.MyWayHome('dense', seed=seed)
    try:
      env.reset()
      observations = [env.step(a).observation[..., -1]
                      for a in [2, 2, 0, 2, 4, 2]]
      return env.player_position(), np.stack(observations)
    finally:
      env.close()
  (position_a, frames_a), (position_b, frames_b) = run(5), run(5)
  assert position_a == position_b
  np.testing.assert_array_equal(frames_a, frames_b)
  others = [run(seed)[0] for seed in (6, 7)]
  assert any(position != position_a for position in others)


def test_vector_steps_environments_together_and_restarts_each():
  actions = [[2, 1], [2, 1], [1, 2], [2, 2], [0, 0], [2, 1]]
  with my_way_home.VectorMyWayHome('dense', num_envs=2, seed=4,
                                   max_steps=3) as vector:
    assert len(set(vector.seeds)) == 2
    first = vector.reset()
    assert first.observation.shape == (2, 42, 42, 6)
    assert first.step_type.tolist() == [dm_env.StepType.FIRST] * 2
    timesteps = [vector.step(np.array(a)) for a in actions]
    positions = vector.player_positions()
    assert positions.shape == (2, 3)
    with pytest.raises(ValueError, match=r'`actions` must have shape \(2,\)'):
      vector.step(np.array([0]))
  step_types = np.array([t.step_type for t in timesteps])
  # max_steps=3: LAST at the 3rd step, FIRST at the 4th, for both.
  np.testing.assert_array_equal(step_types[:, 0], [1, 1, 2, 0, 1, 1])
  np.testing.assert_array_equal(step_types[:, 1], [1, 1, 2, 0, 1, 1])
  # Environment 1 of the vector is the single environment with its seed.
  single = my_way_home.MyWayHome('dense', seed=vector.seeds[1], max_steps=3)
  try:
    single.reset()
    for a, timestep in zip(actions, timesteps):
      expected = single.step(a[1])
      np.testing.assert_array_equal(timestep.observation[1],
                                    expected.observation)
    np.testing.assert_allclose(positions[1], single.player_position())
  finally:
    single.close()
