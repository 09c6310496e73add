"""experiments/ in layers: the user commands at the top, `paper/`,
`benchmarks/` and `diagnostics/` beside them, and `lib/` for what they
share. No command imports another command, and the library imports no
command, so a command can change without breaking another."""

import ast
import os

from absl.testing import absltest

from tests import agent_testing

EXPERIMENTS = os.path.join(agent_testing.ROOT, 'experiments')
COMMAND_PACKAGES = ('', 'paper', 'benchmarks', 'diagnostics')


def modules(package: str):
  """experiments.<package> module names -> their source paths."""
  folder = os.path.join(EXPERIMENTS, package)
  prefix = 'experiments.' + (package + '.' if package else '')
  return {prefix + name[:-3]: os.path.join(folder, name)
          for name in sorted(os.listdir(folder))
          if name.endswith('.py') and name != '__init__.py'}


def imported_modules(path: str):
  """The experiments.* modules a source file imports (anywhere in it)."""
  with open(path) as f:
    tree = ast.parse(f.read(), path)
  found = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      found.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      found.update(f'{node.module}.{alias.name}' for alias in node.names)
      found.add(node.module)
  return {name for name in found if name.startswith('experiments.')}


class LayoutTest(absltest.TestCase):

  def test_commands_import_only_the_library(self):
    commands = {}
    for package in COMMAND_PACKAGES:
      commands.update(modules(package))
    self.assertGreater(len(commands), 10)
    for name, path in commands.items():
      with self.subTest(command=name):
        self.assertEmpty(sorted(imported_modules(path) & set(commands)))

  def test_the_library_imports_no_command(self):
    library = modules('lib')
    self.assertIn('experiments.lib.results', library)
    commands = set()
    for package in COMMAND_PACKAGES:
      commands.update(modules(package))
    for name, path in library.items():
      with self.subTest(module=name):
        self.assertEmpty(sorted(imported_modules(path) & commands))

  def test_every_module_is_in_a_layer(self):
    loose = [name for name in os.listdir(EXPERIMENTS)
             if os.path.isdir(os.path.join(EXPERIMENTS, name))
             and not name.startswith(('_', '.'))
             and name not in COMMAND_PACKAGES + ('lib',)]
    self.assertEmpty(loose)


if __name__ == '__main__':
  absltest.main()
