"""The README's commands work together as written."""

import csv
import glob
import os
import re
import tempfile

from absl.testing import absltest

from tests import agent_testing


def python_blocks(section: str):
  """The ```python blocks of README's section `section` (its heading)."""
  with open(os.path.join(agent_testing.ROOT, 'README.md'),
            encoding='utf-8') as f:
    text = f.read()
  start = text.index(f'\n## {section}\n')
  end = text.find('\n## ', start + 1)
  return re.findall(r'```python\n(.*?)\n```', text[start:end], re.S)


class ReadmeCodeTest(absltest.TestCase):
  """README's Python snippets run as written (the bsuite loop for 20 of its
  300 episodes, into a temporary folder; the jitted training for 10 of its
  50) and print what they say."""

  def test_the_core_snippet(self):
    [block] = python_blocks('The core')
    result = agent_testing.run_code(block, timeout=300)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    lines = result.stdout.strip().splitlines()
    self.assertGreater(float(lines[0]), 0.0)  # W1 of two distributions
    self.assertIn('[', lines[1])  # the projected probabilities

  def test_the_jax_native_snippets_train_and_print(self):
    # Running the episodes, not compiling them, is most of their time.
    blocks = python_blocks('JAX-native training')
    self.assertLen(blocks, 2)
    code = '\n'.join(blocks).replace('episodes_per_call=50',
                                     'episodes_per_call=10')
    self.assertIn('episodes_per_call=10', code)
    result = agent_testing.run_code(code, timeout=600)
    self.assertEqual(result.returncode, 0, result.stderr[-3000:])
    printed = [line for line in result.stdout.splitlines()
               if line.startswith('[')]
    self.assertLen(printed, 2)  # each prints 8 agents' regret counts
    for line in printed:
      counts = [int(v) for v in line.strip('[]').split()]
      self.assertLen(counts, 8)
      self.assertTrue(all(0 <= c <= 10 for c in counts), counts)

  def test_the_bsuite_loop_snippet(self):
    [block] = python_blocks("An agent in bsuite's loop")
    with tempfile.TemporaryDirectory() as tmp:
      code = block.replace("save_path='results/bsuite_loop'",
                           f'save_path={tmp!r}')
      code = code.replace('num_episodes=300)', 'num_episodes=20)')
      self.assertNotEqual(code, block)
      result = agent_testing.run_code(code, timeout=600)
      self.assertEqual(result.returncode, 0, result.stderr[-3000:])
      [log] = glob.glob(os.path.join(tmp, '*.csv'))
      with open(log) as f:
        rows = list(csv.DictReader(f))
      self.assertEqual(int(rows[-1]['episode']), 20)


class ReadmeTest(absltest.TestCase):

  def test_bsuite_loop_snippet_writes_beside_the_quick_start(self):
    # The snippet must not write into the quick start's results/pe_dqn
    # with overwrite=True: the quick start's marker would then hide its log.
    with open(os.path.join(agent_testing.ROOT, 'README.md'),
              encoding='utf-8') as f:
      text = f.read()
    quick = re.search(r'run_bsuite --agent=(\w+) .*--save_path=(\S+)', text)
    self.assertIsNotNone(quick)
    quick_folder = os.path.join(quick.group(2), quick.group(1))
    loop = re.search(r"load_and_record\('[^']+', save_path='([^']+)'", text)
    self.assertIsNotNone(loop)
    self.assertNotEqual(os.path.normpath(loop.group(1)),
                        os.path.normpath(quick_folder))
    self.assertFalse(os.path.normpath(loop.group(1)).startswith(
        os.path.normpath(quick_folder) + os.sep))

  def test_ci_runs_the_readme_test_command(self):
    # CI must run what the README tells a user to run: the command of the
    # fenced block under "## Tests", word for word, is .ci/run's command.
    with open(os.path.join(agent_testing.ROOT, 'README.md'),
              encoding='utf-8') as f:
      text = f.read()
    section = text[text.index('\n## Tests\n'):]
    block = re.search(r'```[a-z]*\n(.*?)\n```', section, re.S)
    self.assertIsNotNone(block)
    readme_command = block.group(1).strip()
    self.assertIn('pytest', readme_command)
    with open(os.path.join(agent_testing.ROOT, '.ci', 'run'),
              encoding='utf-8') as f:
      commands = [line.strip() for line in f
                  if line.strip() and not line.startswith('#')]
    self.assertIn(readme_command, commands)
    self.assertEqual(commands[-1], readme_command)
    # The quick start gives the same command.
    quick = text[text.index('\n## Quick start\n'):]
    quick = quick[:quick.index('\n## ', 1)]
    self.assertIn(readme_command,
                  re.findall(r'```[a-z]*\n(.*?)\n```', quick, re.S))


if __name__ == '__main__':
  absltest.main()
