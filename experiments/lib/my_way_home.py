"""VizDoom's MyWayHome as a dm_env environment, in the PE-DQN paper's three
sparsity variants (Sec. 6.4, Table 6), and a vector of them in subprocesses.

  env = MyWayHome('sparse', seed=0)
  timestep = env.reset()
  timestep = env.step(2)          # MOVE_FORWARD
  x, y, angle = env.player_position()

The map is the stock `my_way_home.wad` of the `vizdoom` package: the player
must find the green armour in a maze of rooms; picking it up gives reward 1
and ends the episode; every tic costs 0.0001; an episode lasts at most 2100
steps (then it is truncated: discount 1). Skill 5, one tic per step (no frame
skip), five actions, one button each: TURN_LEFT, TURN_RIGHT, MOVE_FORWARD,
MOVE_LEFT, MOVE_RIGHT.

Variants (Table 6):
- `dense`: the stock scenario, spawning at a random one of 17 map spots facing
  a random direction.
- `sparse`: always map spot 10 at (240, -176), facing east (angle uniform in
  [0, 3.6) degrees).
- `very_sparse`: always map spot 15 at (544, -672.1), facing west (180
  degrees; the paper's range is 180 +- 3.6).

The sparse variants are derived at run time from the stock wad's compiled ACS
(`variant_wad_bytes`), nothing downloaded: its BEHAVIOR lump holds the spawn
spot range as two map variables in its MINI chunk (start id 10, count 17) and
the facing as `random(0.0, 1.0)` in script 2, whose upper bound is one
`PUSHNUMBER 65536; RANDOM` (6 bytes). Same-length rewrites of those values
give the variants, so no offset in the wad moves.

Observations (Table 6): the 160x120 grayscale screen, area-averaged to 42x42,
the last 6 frames stacked on the last axis, uint8: shape [42, 42, 6].
"""

import hashlib
import multiprocessing
import os
import re
import struct
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

import dm_env
from dm_env import specs
import numpy as np

VARIANTS = ('dense', 'sparse', 'very_sparse')
BUTTONS = ('TURN_LEFT', 'TURN_RIGHT', 'MOVE_FORWARD', 'MOVE_LEFT',
           'MOVE_RIGHT')
MAX_STEPS = 2100
FRAME_SIZE = 42
FRAME_STACK = 6
LIVING_REWARD = -0.0001
# Where each sparse variant spawns: (map spot id, (x, y), facing in degrees).
SPAWNS = {
    'sparse': (10, (240.0, -176.0), (0.0, 3.6)),  # angle range, both ends included
    'very_sparse': (15, (544.0, -672.1), (180.0, 180.0)),
}
# The stock script 2's facing, random(0.0, 1.0): PUSHNUMBER 65536; RANDOM
# (compressed ACS p-codes: PUSHNUMBER = 3 with a 4-byte operand, RANDOM = 57).
_STOCK_ANGLE_CODE = bytes([3]) + struct.pack('<i', 65536) + bytes([57])
_ANGLE_CODES = {
    # random(0.0, 0.01 turn): east, 0 to 3.6 degrees.
    'sparse': bytes([3]) + struct.pack('<i', 655) + bytes([57]),
    # lower bound 0 + 0.5 turn (ADD = 14): west, 180 degrees.
    'very_sparse': bytes([3]) + struct.pack('<i', 32768) + bytes([14]),
}
_STOCK_MINI = (1312 << 16, 22, 10, 17)  # armour_x, armour_tid, start id, count


def _vizdoom():
  try:
    import vizdoom  # pylint: disable=g-import-not-at-top
  except ImportError as error:
    raise ImportError(
        'MyWayHome needs the `vizdoom` package: pip install -e ".[vizdoom]"'
    ) from error
  return vizdoom


def stock_scenario_path(name: str = 'my_way_home.wad') -> str:
  """Path of a file among the `vizdoom` package's stock scenarios."""
  return os.path.join(os.path.dirname(_vizdoom().__file__), 'scenarios', name)


def _lumps(wad: bytes) -> dict:
  """Lump name -> (offset, size) of a WAD file."""
  ident, count, directory = struct.unpack_from('<4sii', wad, 0)
  if ident not in (b'IWAD', b'PWAD'):
    raise ValueError(f'not a WAD file (identification {ident!r})')
  lumps = {}
  for i in range(count):
    offset, size, name = struct.unpack_from('<ii8s', wad, directory + 16 * i)
    lumps.setdefault(name.rstrip(b'\0').decode('ascii'), (offset, size))
  return lumps


def map_spots(wad: Optional[bytes] = None) -> Dict[int, Tuple[float, float]]:
  """{thing id: (x, y)} of the map spots (UDMF type 9001) in the wad's map."""
  if wad is None:
    with open(stock_scenario_path(), 'rb') as f:
      wad = f.read()
  offset, size = _lumps(wad)['TEXTMAP']
  spots = {}
  for thing in re.findall(r'thing[^{]*\{([^}]*)\}',
                          wad[offset:offset + size].decode('latin-1')):
    fields = dict(re.findall(r'(\w+)\s*=\s*([^;]+);', thing))
    if fields.get('type') == '9001' and 'id' in fields:
      spots[int(fields['id'])] = (float(fields['x']), float(fields['y']))
  return spots


def _mini_offset(behavior: bytes) -> int:
  """Offset in a BEHAVIOR lump of the MINI chunk's map variable values."""
  if behavior[:3] != b'ACS':
    raise ValueError(f'BEHAVIOR lump is not ACS, starts {behavior[:4]!r}')
  if behavior.count(b'MINI') != 1:
    raise ValueError('no single MINI chunk in the BEHAVIOR lump')
  # The chunk header (tag, size), then the index of its first variable.
  return behavior.index(b'MINI') + 8 + 4


def variant_wad_bytes(variant: str, stock: bytes) -> bytes:
  """The stock MyWayHome wad rewritten for `variant` (same length).

  Args:
    variant: one of VARIANTS.
    stock: the bytes of the stock `my_way_home.wad`.
  Returns:
    The wad's bytes; `stock` itself for `dense`.
  """
  if variant not in VARIANTS:
    raise ValueError(f'`variant` must be one of {VARIANTS}, got {variant!r}')
  if variant == 'dense':
    return stock
  offset, size = _lumps(stock)['BEHAVIOR']
  behavior = bytearray(stock[offset:offset + size])
  mini = _mini_offset(bytes(behavior))
  values = struct.unpack_from('<4i', behavior, mini)
  if values != _STOCK_MINI:
    raise ValueError(f'unexpected MINI values {values} in my_way_home.wad '
                     f'(expected {_STOCK_MINI}); is it the stock wad?')
  spot, _, _ = SPAWNS[variant]
  struct.pack_into('<2i', behavior, mini + 8, spot, 1)
  if behavior.count(_STOCK_ANGLE_CODE) != 1:
    raise ValueError('the facing code random(0.0, 1.0) was not found once in '
                     'the BEHAVIOR lump; is it the stock wad?')
  at = behavior.index(_STOCK_ANGLE_CODE)
  behavior[at:at + len(_STOCK_ANGLE_CODE)] = _ANGLE_CODES[variant]
  return stock[:offset] + bytes(behavior) + stock[offset + size:]


def variant_wad_path(variant: str, directory: Optional[str] = None) -> str:
  """Path of the wad of `variant`, written once (atomically) if needed."""
  stock_path = stock_scenario_path()
  if variant == 'dense':
    return stock_path
  with open(stock_path, 'rb') as f:
    wad = variant_wad_bytes(variant, f.read())
  directory = directory or os.path.join(tempfile.gettempdir(), 'pe_jax_vizdoom')
  os.makedirs(directory, exist_ok=True)
  path = os.path.join(
      directory,
      f'my_way_home_{variant}_{hashlib.sha1(wad).hexdigest()[:10]}.wad')
  if not os.path.exists(path):
    handle, temporary = tempfile.mkstemp(dir=directory, suffix='.wad')
    with os.fdopen(handle, 'wb') as f:
      f.write(wad)
    os.replace(temporary, path)
  return path


def _area_average_rows(image: np.ndarray, size_out: int) -> np.ndarray:
  """Area average of the rows of [N, ...] into [size_out, ...].

  Output row i averages the input over [i, i + 1) * N / size_out, partial
  pixels weighted by their overlap: differences of the running sum at the
  edges (elementwise; a BLAS matmul here spins threads for tiny arrays).
  """
  size_in = image.shape[0]
  edges = np.arange(size_out + 1) * (size_in / size_out)
  whole = np.minimum(np.floor(edges).astype(np.int64), size_in - 1)
  fraction = (edges - whole)[:, None]
  running = np.concatenate([np.zeros_like(image[:1]), np.cumsum(image, 0)])
  at_edges = running[whole] + fraction * image[whole]
  return (at_edges[1:] - at_edges[:-1]) * (size_out / size_in)


def resize_area(image: np.ndarray, height: int, width: int) -> np.ndarray:
  """Area-averaged resize of a [H, W] uint8 image to [height, width] uint8."""
  if image.ndim != 2:
    raise ValueError(f'`image` must be [H, W], got shape {image.shape}')
  rows = _area_average_rows(image.astype(np.float64), height)
  resized = _area_average_rows(rows.T, width).T
  return np.clip(np.rint(resized), 0, 255).astype(np.uint8)


class MyWayHome(dm_env.Environment):
  """MyWayHome with stacked 42x42 grayscale frames (one tic per step)."""

  def __init__(self, variant: str = 'dense', seed: int = 0,
               max_steps: int = MAX_STEPS, frame_size: int = FRAME_SIZE,
               frame_stack: int = FRAME_STACK,
               wad_directory: Optional[str] = None):
    if variant not in VARIANTS:
      raise ValueError(f'`variant` must be one of {VARIANTS}, got {variant!r}')
    for name, value in (('max_steps', max_steps), ('frame_size', frame_size),
                        ('frame_stack', frame_stack)):
      if not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f'`{name}` must be an int >= 1, got {value!r}')
    if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
      raise ValueError(f'`seed` must be an int in [0, 2**32), got {seed!r}')
    vizdoom = _vizdoom()
    self.variant = variant
    self._max_steps = int(max_steps)
    self._frame_size = int(frame_size)
    game = vizdoom.DoomGame()
    game.load_config(stock_scenario_path('my_way_home.cfg'))
    game.set_doom_scenario_path(variant_wad_path(variant, wad_directory))
    game.set_window_visible(False)
    game.set_sound_enabled(False)
    game.set_screen_format(vizdoom.ScreenFormat.GRAY8)
    game.set_screen_resolution(vizdoom.ScreenResolution.RES_160X120)
    game.set_doom_skill(5)
    game.set_living_reward(LIVING_REWARD)
    # Our step counter truncates episodes; the game's own limit is later.
    game.set_episode_timeout(self._max_steps + game.get_episode_start_time()
                             + 10)
    game.set_available_buttons([getattr(vizdoom.Button, b) for b in BUTTONS])
    game.set_seed(int(seed))
    game.init()
    self._game = game
    self._variables = (vizdoom.GameVariable.POSITION_X,
                       vizdoom.GameVariable.POSITION_Y,
                       vizdoom.GameVariable.ANGLE)
    self._buttons = np.eye(len(BUTTONS), dtype=np.int32).tolist()
    self._frames = np.zeros((frame_size, frame_size, frame_stack), np.uint8)
    self._steps = 0
    self._reset_next = True

  def _push_frame(self, fill: bool = False):
    screen = self._game.get_state().screen_buffer
    frame = resize_area(screen, self._frame_size, self._frame_size)
    if fill:
      self._frames[...] = frame[..., None]
    else:
      self._frames = np.concatenate([self._frames[..., 1:], frame[..., None]],
                                    axis=-1)

  def reset(self) -> dm_env.TimeStep:
    self._game.new_episode()
    self._steps = 0
    self._reset_next = False
    self._push_frame(fill=True)
    return dm_env.restart(self._frames.copy())

  def step(self, action) -> dm_env.TimeStep:
    if self._reset_next:
      return self.reset()
    action = int(action)
    if not 0 <= action < len(BUTTONS):
      raise ValueError(f'`action` must be in [0, {len(BUTTONS)}), got '
                       f'{action}')
    reward = self._game.make_action(self._buttons[action], 1)
    self._steps += 1
    if self._game.is_episode_finished():
      self._reset_next = True
      if reward > 0.5:  # the armour: +1 and the episode's end
        return dm_env.termination(reward, self._frames.copy())
      return dm_env.truncation(reward, self._frames.copy())
    self._push_frame()
    if self._steps >= self._max_steps:
      self._reset_next = True
      return dm_env.truncation(reward, self._frames.copy())
    return dm_env.transition(reward, self._frames.copy())

  def player_position(self) -> Tuple[float, float, float]:
    """(x, y, angle in degrees) of the player, from the game's variables."""
    return tuple(float(self._game.get_game_variable(v))
                 for v in self._variables)

  def observation_spec(self):
    return specs.BoundedArray(self._frames.shape, np.uint8, 0, 255,
                              name='observation')

  def action_spec(self):
    return specs.DiscreteArray(len(BUTTONS), name='action')

  def close(self):
    self._game.close()


def env_seeds(seed: int, num_envs: int) -> List[int]:
  """Distinct 32-bit game seeds of the environments of a vector."""
  children = np.random.SeedSequence(seed).spawn(num_envs)
  return [int(c.generate_state(1)[0]) for c in children]


def _worker(connection, variant, seed, kwargs):
  env = MyWayHome(variant, seed, **kwargs)
  try:
    while True:
      command, argument = connection.recv()
      if command == 'reset':
        connection.send(env.reset())
      elif command == 'step':
        connection.send(env.step(argument))
      elif command == 'position':
        connection.send(env.player_position())
      elif command == 'close':
        break
  finally:
    env.close()
    connection.close()


def _stack(timesteps: Sequence[dm_env.TimeStep]) -> dm_env.TimeStep:
  return dm_env.TimeStep(
      step_type=np.array([t.step_type for t in timesteps], np.int32),
      reward=np.array([0.0 if t.reward is None else t.reward
                       for t in timesteps], np.float32),
      discount=np.array([1.0 if t.discount is None else t.discount
                         for t in timesteps], np.float32),
      observation=np.stack([t.observation for t in timesteps]))


class VectorMyWayHome:
  """`num_envs` MyWayHome environments in subprocesses, stepped together.

  `reset()` and `step(actions)` return one dm_env.TimeStep whose fields have
  a leading axis of size num_envs (step_type int32, reward and discount
  float32, FIRST steps with reward 0 and discount 1). Each environment
  restarts on its own: the step after its LAST is its FIRST (its action is
  ignored), as a dm_env environment does.
  """

  def __init__(self, variant: str = 'dense', num_envs: int = 1, seed: int = 0,
               **kwargs):
    if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
      raise ValueError(f'`num_envs` must be an int >= 1, got {num_envs!r}')
    if variant not in VARIANTS:
      raise ValueError(f'`variant` must be one of {VARIANTS}, got {variant!r}')
    _vizdoom()
    variant_wad_path(variant, kwargs.get('wad_directory'))  # write it once
    context = multiprocessing.get_context('spawn')
    self.num_envs = int(num_envs)
    self.seeds = env_seeds(seed, num_envs)
    self._connections = []
    self._processes = []
    for env_seed in self.seeds:
      parent, child = context.Pipe()
      process = context.Process(target=_worker,
                                args=(child, variant, env_seed, kwargs),
                                daemon=True)
      process.start()
      child.close()
      self._connections.append(parent)
      self._processes.append(process)

  def _call(self, command, arguments) -> list:
    for connection, argument in zip(self._connections, arguments):
      connection.send((command, argument))
    return [connection.recv() for connection in self._connections]

  def reset(self) -> dm_env.TimeStep:
    return _stack(self._call('reset', [None] * self.num_envs))

  def step(self, actions) -> dm_env.TimeStep:
    actions = np.asarray(actions)
    if actions.shape != (self.num_envs,):
      raise ValueError(f'`actions` must have shape ({self.num_envs},), got '
                       f'{actions.shape}')
    return _stack(self._call('step', [int(a) for a in actions]))

  def player_positions(self) -> np.ndarray:
    """[num_envs, 3]: (x, y, angle in degrees) of each player."""
    return np.array(self._call('position', [None] * self.num_envs))

  def close(self):
    for connection in self._connections:
      try:
        connection.send(('close', None))
      except (BrokenPipeError, OSError):
        continue  # that worker has already exited: nothing to tell it
    for process in self._processes:
      process.join(timeout=10)
      if process.is_alive():
        process.terminate()
    for connection in self._connections:
      connection.close()

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()
