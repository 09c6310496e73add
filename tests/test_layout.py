"""The layers: the pure core `pe_jax/` imports neither `agents/` nor
`experiments/`, and `agents/` does not import `experiments/`. In
experiments/, the user commands are at the top, `paper/`, `benchmarks/`
and `diagnostics/` beside them, and `lib/` for what they share. No command
imports another command, and the library imports no command, so a command
can change without breaking another."""

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


def imported_modules(path: str, prefixes=('experiments',)):
  """The modules of the `prefixes` packages a source file imports
  (anywhere in it)."""
  with open(path) as f:
    tree = ast.parse(f.read(), path)
  found = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      found.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      found.update(f'{node.module}.{alias.name}' for alias in node.names)
      found.add(node.module)
  return {name for name in found
          if any(name == p or name.startswith(p + '.') for p in prefixes)}


def package_sources(package: str):
  """Every .py file under the top-level folder `package`."""
  return sorted(os.path.join(root, name)
                for root, _, names in os.walk(os.path.join(agent_testing.ROOT,
                                                           package))
                for name in names if name.endswith('.py'))


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

  def test_the_core_and_the_agents_import_no_layer_above(self):
    for package, above in (('pe_jax', ('agents', 'experiments')),
                           ('agents', ('experiments',))):
      paths = package_sources(package)
      self.assertGreater(len(paths), 5, package)
      for path in paths:
        with self.subTest(path=os.path.relpath(path, agent_testing.ROOT)):
          self.assertEmpty(sorted(imported_modules(path, above)))

  def test_every_module_is_in_a_layer(self):
    loose = [name for name in os.listdir(EXPERIMENTS)
             if os.path.isdir(os.path.join(EXPERIMENTS, name))
             and not name.startswith(('_', '.'))
             and name not in COMMAND_PACKAGES + ('lib',)]
    self.assertEmpty(loose)


if __name__ == '__main__':
  absltest.main()
