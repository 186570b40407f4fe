"""Audit the test suite for the hygiene rules of #34 item 6, reading the sources (no test is run).

Counts, each with its places:

* ``sleeps``: ``time.sleep`` / ``asyncio.sleep`` calls under tests/ (a test waits on the event or
  condition it needs; the one poll loop is ``tests.support.waiting``);
* ``polled``: calls of ``wait_until`` / ``until`` (a named condition with a deadline, for what gives no
  signal);
* ``private``: reads of another module's private names: ``obj._x`` where no class or module under
  tests/ defines ``_x``, ``from m import _x``, and ``setattr``/``getattr``/``monkeypatch.setattr`` of a
  ``"_x"`` name;
* ``fixtures``: fixture names defined more than once under tests/;
* ``unit_heavy``: unit test modules that name a model or store loader (MiniLM, Chroma, the services)
  without any ``slow`` mark in the module;
* ``free_ports``: ``free_port()`` calls under tests/ (a port free a moment ago: a server started on it
  later may lose it to another process);
* ``product_patches``: ``monkeypatch.setattr`` (or a ``monkeypatch.context()``'s) on the product's
  objects: an attribute of a running object (a target rooted at a fixture or local, not at an import:
  ``services.audit``), of a gateway module (``run_module``), or a ``"gateway.…"`` path (a test builds
  the services with the component it wants: ``tests.support.components``). A gateway class patched by
  the unit tests' guard against loading models (``Embedder.__init__``) is not a product object.

Whether a run writes into the repository is checked by running it (``--writes -- <pytest args>``):
files under the repository changed or created by the run, ``.git`` excluded.

    python bench/audit_tests.py [--show]
    python bench/audit_tests.py --writes -- -q -p no:cacheprovider tests/browser
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
SLEEPS = {("time", "sleep"), ("asyncio", "sleep")}
POLLS = {"wait_until", "until"}
HEAVY_NAMES = {
    "Embedder",
    "build_services",
    "open_store",
    "ChromaStore",
    "PersistentClient",
    "HttpClient",
    "SentenceTransformer",
    "embedder",
    "fixture_store",
    "make_services",
    "module_services",
}
"""Names whose use loads MiniLM, opens Chroma or builds the full services (calls or fixture arguments)."""
SKIP_DIRS = {".git", ".venv", "node_modules"}


def _sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_private_names(trees: dict[Path, ast.Module]) -> set[str]:
    """Private names a module under tests/ defines (its functions, classes, attributes and globals)."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                    names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {n for n in names if _private(n)}


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"


def _call_name(node: ast.Call) -> tuple[str, str]:
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        return owner, func.attr
    if isinstance(func, ast.Name):
        return "", func.id
    return "", ""


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "fixture") or (
        isinstance(target, ast.Name) and target.id == "fixture"
    )


def _imports(tree: ast.Module) -> dict[str, str]:
    """The module's imported names, each with the dotted path it names (``from a import b``: ``a.b``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _gateway_module(dotted: str) -> bool:
    """``dotted`` names a module or package of the gateway (not a class or function in one)."""
    if dotted != "gateway" and not dotted.startswith("gateway."):
        return False
    path = REPO.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _patches_product(node: ast.Call, imports: dict[str, str]) -> bool:
    """``node`` is ``<monkeypatch>.setattr(target, ...)`` whose target is a product object."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "setattr" and node.args):
        return False
    if isinstance(func.value, ast.Name) and func.value.id in imports:
        return False  # a module's own setattr, not a monkeypatch
    target = node.args[0]
    if isinstance(target, ast.Constant) and isinstance(target.value, str):
        return target.value.startswith("gateway.")
    root = target
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    if root.id not in imports:
        return True  # a fixture or a local: a running object
    return _gateway_module(imports[root.id] + "".join(f".{a}" for a in _attribute_path(target)))


def _attribute_path(node: ast.expr) -> list[str]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return parts


def _marks_slow(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "slow" for n in ast.walk(tree))


def audit() -> dict[str, list[str]]:
    trees = {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in _sources()}
    ours = _defined_private_names(trees)
    found: dict[str, list[str]] = defaultdict(list)
    fixtures: dict[str, list[str]] = defaultdict(list)
    for path, tree in trees.items():
        heavy: set[str] = set()
        imports = _imports(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                owner, name = _call_name(node)
                if _patches_product(node, imports):
                    found["product_patches"].append(_where(path, node))
                if (owner, name) in SLEEPS or (owner == "" and name == "sleep"):
                    found["sleeps"].append(_where(path, node))
                if name in POLLS and owner in {"", "waiting"}:
                    found["polled"].append(_where(path, node))
                if name == "free_port":
                    found["free_ports"].append(_where(path, node))
                if name in HEAVY_NAMES:
                    heavy.add(name)
                if name in {"setattr", "getattr"} and len(node.args) >= 2:
                    key = node.args[1]
                    private = (
                        isinstance(key, ast.Constant) and isinstance(key.value, str) and _private(key.value)
                    )
                    if private and key.value not in ours:  # type: ignore[attr-defined]
                        found["private"].append(f"{_where(path, node)} {name} {key.value}")  # type: ignore[attr-defined]
            elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in ours:
                if not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}):
                    found["private"].append(f"{_where(path, node)} .{node.attr}")
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if _private(alias.name):
                        found["private"].append(f"{_where(path, node)} import {alias.name}")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if any(_is_fixture(d) for d in node.decorator_list):
                    fixtures[node.name].append(_where(path, node))
                heavy |= {a.arg for a in node.args.args} & HEAVY_NAMES
        unit_test = path.parent.name == "unit" and path.name.startswith("test_")
        if unit_test and heavy and not _marks_slow(tree):
            found["unit_heavy"].append(f"{path.relative_to(REPO)} ({', '.join(sorted(heavy))})")
    for name, places in sorted(fixtures.items()):
        if len(places) > 1:
            found["fixtures"].append(f"{name}: {', '.join(places)}")
    return found


def _files_changed_since(start: float) -> list[str]:
    changed = []
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and d != "__pycache__"]
        for name in files:
            path = Path(root) / name
            try:
                if path.stat().st_mtime >= start:
                    changed.append(str(path.relative_to(REPO)))
            except FileNotFoundError:
                continue
    return sorted(changed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--show", action="store_true", help="list the places, not only the counts")
    parser.add_argument("--writes", action="store_true", help="run pytest with the arguments after --")
    args, rest = parser.parse_known_args()
    if args.writes:
        pytest_args = [a for a in rest if a != "--"]
        start = time.time() - 1
        done = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], cwd=REPO, check=False)
        changed = _files_changed_since(start)
        print(f"pytest exit {done.returncode}; files written under the repository: {len(changed)}")
        for name in changed:
            print(f"  {name}")
        return 1 if changed else done.returncode
    found = audit()
    for key in ("sleeps", "polled", "private", "fixtures", "unit_heavy", "free_ports", "product_patches"):
        print(f"{key}: {len(found[key])}")
        if args.show:
            for place in found[key]:
                print(f"  {place}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
