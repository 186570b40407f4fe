"""The tree tells the architecture: guards that keep ``gateway`` layered, small and free of offline tooling.

- No import cycle between modules of ``gateway`` (every import counts: module level, inside functions
  and under ``TYPE_CHECKING``), so each module can be read knowing only what is below it.
- No module over ``MAX_LINES`` lines, except the ones listed in ``LONG_MODULES`` with the reason.
- The runtime package never imports offline tooling: ``bench`` (benchmarks, trainers, data builders),
  ``tests``, or a library only those use.

The import graph is read from the source with ``ast`` (nothing is imported), so the guard is fast and
sees imports that a run would not reach.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gateway"

MAX_LINES = 500
"""A module longer than this is doing more than one job: split it by job."""

LONG_MODULES: dict[str, str] = {}
"""Justified exceptions to ``MAX_LINES``: path relative to the repository -> why."""

OFFLINE_ONLY = ("bench", "tests", "sklearn")
"""Top-level packages the runtime package must never import (offline tooling and what only it needs)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_names(name: str, path: Path) -> set[str]:
    """Every dotted name ``path`` imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of the package it imports."""
    return {
        name: {target for target in imported_names(name, path) if target in modules and target != name}
        for name, path in modules.items()
    }


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                child = pending.pop()
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_loop_and_only_the_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_function_level_and_type_checking_imports() -> None:
    graph = import_graph(package_modules())
    assert "gateway.pipeline.record" in graph["gateway.pipeline.run"]
    assert "gateway.services" in graph["gateway.pipeline.record"]  # under TYPE_CHECKING


def test_no_import_cycles_in_the_gateway_package() -> None:
    assert cycles(import_graph(package_modules())) == []


def test_no_module_is_over_the_line_limit() -> None:
    lengths = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in package_modules().values()
    }
    too_long = {path: n for path, n in lengths.items() if n > MAX_LINES and path not in LONG_MODULES}
    assert too_long == {}, f"split these modules by job (or justify them in LONG_MODULES): {too_long}"


@pytest.mark.parametrize("path", sorted(LONG_MODULES))
def test_every_listed_exception_is_still_needed(path: str) -> None:
    module = ROOT / path
    assert module.is_file(), f"{path} no longer exists: remove it from LONG_MODULES"
    assert len(module.read_text(encoding="utf-8").splitlines()) > MAX_LINES, (
        f"{path} is within the limit now: remove it from LONG_MODULES"
    )


def test_the_runtime_package_never_imports_offline_tooling() -> None:
    offending = {
        name: sorted(n for n in imported_names(name, path) if n.split(".")[0] in OFFLINE_ONLY)
        for name, path in package_modules().items()
    }
    assert {name: names for name, names in offending.items() if names} == {}
