"""The package layout, over every module of ``src/ranklearn`` (the root package included), counting
imports inside functions too (an import under ``if TYPE_CHECKING:`` never runs and is not counted):

* no import cycle between modules;
* no private name imported across packages: a private module (``ranklearn.models._neural``) is
  imported only inside its package (``ranklearn.models`` and its subpackages; the root's
  ``ranklearn._files`` by the whole library), a private attribute (``ranklearn.models.base._x``)
  only by the modules of its module's own package (``ranklearn.models``);
* the command line (``ranklearn.cli``) reads no private attribute of an object (a model, its
  class, anything it is handed): ``x._name`` is allowed only on a method's own ``self``/``cls``
  and on a module (``C._helper`` with ``from ranklearn.cli import _common as C``).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ranklearn"


def _modules(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package at ``src`` (a package is its ``__init__``)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src.parent).with_suffix("")
        out[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = path
    return out


def _package(module: str, modules: dict[str, Path]) -> str:
    """The package a module is in (a package's ``__init__`` is in that package)."""
    return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]


def _type_checking_only(tree: ast.AST) -> set[int]:
    """Ids of the import nodes under ``if TYPE_CHECKING:``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def imports(modules: dict[str, Path]) -> list[tuple[str, str, str | None]]:
    """(importer, imported module, imported attribute or None) of every ranklearn import that runs."""
    out = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                out += [(module, a.name, None) for a in node.names if a.name.split(".")[0] == "ranklearn"]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = _package(module, modules).split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                if base.split(".")[0] != "ranklearn":
                    continue
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    out.append((module, sub, None) if sub in modules else (module, base, a.name))
    return out


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for importer, target, _ in imports(modules):
        if target in modules and target != importer:
            graph.setdefault(importer, set()).add(target)
    return graph


def private_imports(modules: dict[str, Path]) -> list[str]:
    """``importer: name`` of every private name imported from outside where it may be."""
    bad = []
    for importer, target, attribute in imports(modules):
        parts = target.split(".")
        for i, part in enumerate(parts):
            if part.startswith("_") and not part.startswith("__"):  # a private module: inside its parent
                owner = ".".join(parts[:i])
                if not (importer == owner or importer.startswith(owner + ".")):
                    bad.append(f"{importer}: {target}" + (f".{attribute}" if attribute else ""))
                break
        else:
            if attribute is not None and attribute.startswith("_") and not attribute.startswith("__"):
                if _package(importer, modules) != _package(target, modules):  # a private attribute: its package
                    bad.append(f"{importer}: {target}.{attribute}")
    return bad


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):  # a parent that is not a package, or not importable
        return False


def _module_names(tree: ast.AST, module: str, modules: dict[str, Path]) -> dict[str, str]:
    """Local name -> dotted module of every import in ``tree`` that binds a module."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = _package(module, modules).split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                if _is_module(f"{base}.{a.name}"):
                    names[a.asname or a.name] = f"{base}.{a.name}"
    return names


def private_attribute_reads(modules: dict[str, Path], package: str) -> list[str]:
    """``module:line: expression`` of every ``x._name`` (not a dunder) in the modules of ``package``
    where ``x`` is neither the ``self``/``cls`` of the method it is in nor a module."""
    bad = []
    for module, path in modules.items():
        if not (module == package or module.startswith(package + ".")):
            continue
        tree = ast.parse(path.read_text())
        imported = _module_names(tree, module, modules)

        def dotted(node: ast.expr) -> str | None:
            """The module a ``a.b.c`` chain names, through the imports, or None."""
            if isinstance(node, ast.Name):
                return imported.get(node.id)
            if isinstance(node, ast.Attribute) and (head := dotted(node.value)) is not None:
                return f"{head}.{node.attr}"
            return None

        def visit(node: ast.AST, own: frozenset[str], in_class: bool) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.posonlyargs + node.args.args
                own = frozenset({args[0].arg}) if in_class and args and args[0].arg in ("self", "cls") else frozenset()
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.endswith("__"):
                base = node.value
                is_own = isinstance(base, ast.Name) and base.id in own
                module_of = dotted(base)
                if not is_own and not (module_of is not None and _is_module(module_of)):
                    bad.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
            for child in ast.iter_child_nodes(node):
                visit(child, own, isinstance(node, ast.ClassDef))

        visit(tree, frozenset(), False)
    return bad


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_no_import_cycles_between_modules():
    modules = _modules()
    graph = import_graph(modules)
    assert "ranklearn" in modules and "ranklearn.cli._train" in graph  # the scan saw the whole package
    assert "ranklearn.registry" in graph["ranklearn.models"]
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_no_private_name_is_imported_across_packages():
    assert private_imports(_modules()) == []


def test_the_command_line_reads_no_private_attribute_of_a_model():
    modules = _modules()
    assert "ranklearn.cli._train" in modules
    assert private_attribute_reads(modules, "ranklearn.cli") == []


def test_the_private_attribute_check_finds_what_it_looks_for(tmp_path):
    root = tmp_path / "ranklearn"
    (root / "cli").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "cli" / "__init__.py").write_text("")
    (root / "cli" / "reads.py").write_text(
        "import os.path\n"
        "import ranklearn._files\n"
        "from ranklearn.cli import _common as C\n"
        "from ranklearn.models.base import BaseRanker\n"
        "def f(model, cls, spec):\n"
        "    C._own_helper(model._allow_nan, cls._parameter_constraints)\n"  # the module's is allowed
        "    ranklearn._files.write, os.path._get_sep, model.__class__\n"  # modules, a dunder: allowed
        "    return spec.load_class()._get_param_names(), BaseRanker._unit\n"
        "class Mine:\n"
        "    def g(self):\n"
        "        return self._x\n"
        "    @classmethod\n"
        "    def h(cls):\n"
        "        def inner(self):\n"
        "            return self._z\n"  # not a method: another object called self
        "        return cls._y\n"
    )
    assert sorted(private_attribute_reads(_modules(root), "ranklearn.cli")) == [
        "ranklearn.cli.reads:15: self._z",
        "ranklearn.cli.reads:6: cls._parameter_constraints",
        "ranklearn.cli.reads:6: model._allow_nan",
        "ranklearn.cli.reads:8: BaseRanker._unit",
        "ranklearn.cli.reads:8: spec.load_class()._get_param_names",
    ]


def test_the_checks_find_what_they_look_for(tmp_path):
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    root = tmp_path / "ranklearn"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "_files.py").write_text("def write(): ...\n")
    (root / "top.py").write_text("from ranklearn.sub.mod import _hidden\nfrom ranklearn.sub import _impl\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "_impl.py").write_text("from ranklearn._files import write\nfrom . import mod\n")
    (root / "sub" / "mod.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ranklearn import top\n"
        "def f():\n    from ranklearn.sub._impl import write\n_hidden = 1\n"
    )
    modules = _modules(root)
    assert sorted(private_imports(modules)) == ["ranklearn.top: ranklearn.sub._impl", "ranklearn.top: ranklearn.sub.mod._hidden"]
    # the root's private module from a subpackage, a private module from its own package: allowed
    assert private_imports({k: v for k, v in modules.items() if k != "ranklearn.top"}) == []
    graph = import_graph(modules)
    assert graph["ranklearn.sub._impl"] == {"ranklearn._files", "ranklearn.sub.mod"}
    assert graph["ranklearn.sub.mod"] == {"ranklearn.sub._impl"}  # the TYPE_CHECKING import is not counted
    assert _cycle(graph) == ["ranklearn.sub._impl", "ranklearn.sub.mod", "ranklearn.sub._impl"]
