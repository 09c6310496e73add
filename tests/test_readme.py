"""The README's commands work together as written."""

import os
import re

from absl.testing import absltest

from tests import agent_testing


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


if __name__ == '__main__':
  absltest.main()
