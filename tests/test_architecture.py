"""ARCHITECTURE.md names only what exists: every backticked path is a file or folder of the
checkout, and every `path/to/module.py::name` (or `::Class.method`) is defined in that module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "ARCHITECTURE.md"

# A backticked repository path: a file (`leaderboards/closing.py`) or a folder
# (`leaderboards/live/`), optionally naming something in a module
# (`matches/outbox.py::standings_committed`), the one notation the document uses.
PATH = re.compile(r"`((?:[\w.-]+/)+(?:[\w.-]+\.\w+)?)(?:::([\w.]+))?`")


def references() -> list[tuple[str, str | None]]:
    return sorted(set(PATH.findall(ARCHITECTURE.read_text())), key=lambda ref: (ref[0], ref[1]))


# A backticked dotted name (`store.read_rank`): the other notation, which the document must not use,
# since nothing says which file it means.
DOTTED = re.compile(r"`([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+)`")
PRODUCT = ("audit", "config", "leaderboards", "matches", "pages", "seasons", "server", "webhooks")


def module_names() -> set[str]:
    """The names a dotted reference could start with: every product module and package."""
    names = set()
    for app in PRODUCT:
        for path in (ROOT / app).rglob("*.py"):
            names.add(path.stem)
            names.update(part for part in path.relative_to(ROOT).parent.parts)
    return names - {"__init__"}


def defined_names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """What a module (or class) body defines at its top: functions, classes, assignments and
    names it imports (a package's `__init__.py` re-exports its modules' names that way)."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.ImportFrom | ast.Import):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node
    return names


def test_architecture_names_some_modules_and_functions():
    refs = references()

    assert len(refs) >= 20
    assert any(name for _, name in refs)


def test_the_architecture_names_modules_by_path_not_by_dotted_name():
    modules = module_names()
    dotted = [
        name
        for name in DOTTED.findall(ARCHITECTURE.read_text())
        if name.split(".")[0] in modules
        and not (ROOT / name.replace(".", "/")).with_suffix(".py").exists()
        and not (ROOT / name.replace(".", "/")).is_dir()
    ]

    assert dotted == [], "write `path/to/module.py::name` instead"


@pytest.mark.parametrize(("path", "name"), references(), ids=lambda part: part or "-")
def test_each_path_and_name_the_architecture_gives_exists(path, name):
    target = ROOT / path

    assert target.exists(), f"ARCHITECTURE.md names {path}, which does not exist"
    if not name:
        return
    assert target.suffix == ".py", f"{path}::{name}: only a Python module defines names"
    scope: dict[str, ast.AST] = defined_names(ast.parse(target.read_text()).body)
    for part in name.split("."):
        assert part in scope, f"ARCHITECTURE.md names {path}::{name}; {part} is not defined there"
        node = scope[part]
        scope = defined_names(node.body) if isinstance(node, ast.ClassDef) else {}
