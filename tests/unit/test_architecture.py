"""The tree tells the architecture: guards that keep ``gateway`` layered, small and free of offline tooling.

- No import cycle between modules of ``gateway`` (every import counts: module level, inside functions
  and under ``TYPE_CHECKING``), so each module can be read knowing only what is below it.
- The packages are layered (``LAYERS``, lowest first): a package imports only packages of its own
  layer or below, and no two packages import each other (no package-level cycle). The known upward
  imports are listed in ``UPWARD_IMPORTS`` with the reason and the work that removes them; the list
  may only shrink.
- No module name repeats where one name would do (``REPEATED_NAMES`` lists the justified ones).
- No module over ``MAX_LINES`` lines, except the ones listed in ``LONG_MODULES`` with the reason.
- Only ``gateway.validation`` builds a ``ConfigurationError`` or its ``InvalidValue``
  (``configuration_error``, ``field_error``, ``refuse``).
- No web handler module sees the whole ``Services``: each handler is handed its part (``gateway.web.parts``).
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

SERVICES_IN_WEB = {"gateway.web.app", "gateway.web.parts"}
"""The web modules that see the whole ``Services``: the app holds them, the parts builder picks each
handler's part of them."""

OFFLINE_ONLY = ("bench", "tests", "sklearn")
"""Top-level packages the runtime package must never import (offline tooling and what only it needs)."""

LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer.split())
    for layer in (
        # values, rules
        "vocabulary tool_calls domain errors validation settings text stemming resources body_errors",
        "metric_labels metrics",  # every Prometheus metric and its bounded label values
        "models",  # the model boundary: chat models and the embedder
        "verification",  # the verifiers and their checks
        "fetching",  # SSRF-safe fetching of a URL-only source
        "knowledge",  # corpus, ingestion, the store and its hybrid search
        "drafting",  # the citation contract, the model and extractive drafters
        "claims",  # splitting a draft into statements; the reply's bounds
        "triage retrieval",  # the request's first two steps
        "cleanup",  # rewrite or remove what failed verification; refusal
        "trust tools",  # tiers, badges and the report; tool calls
        "policies messages audit",  # the whole policy of a directory; patient messages; the audit trail
        "services bootstrap telemetry logs",  # what a request is given, built once; traces and logs
        "pipeline",  # the stage runner and answer
        "health checkonly evaluation web cli testing",  # the ways in: HTTP, CLI, evaluation, test doubles
    )
)
"""The packages (and top-level modules) of ``gateway`` from the bottom up; a package may import its
own layer and the layers below it. A new package must be placed here."""

UPWARD_IMPORTS: dict[tuple[str, str], str] = {
    (
        "gateway.knowledge.command",
        "gateway.policies",
    ): "the ingest command: an entry point kept in its feature",
}
"""Known imports of a package above the importer: (module, imported module) -> why, and what removes it."""

REPEATED_NAMES: dict[str, str] = {
    "command.py": "each feature's trust-gateway subcommand (ingest, audit, eval); cli.py dispatches",
    "policy.py": "each feature's pydantic policy model (#34: a feature owns its policy)",
    "errors.py": "the error tree, and web's one map of it to HTTP responses",
    "metrics.py": "the Prometheus metrics, and the evaluation's scores",
    "records.py": "the knowledge store's passage records, and the evaluation's result records",
    "rendering.py": "check-only JSON rendering, and the web pages' template rendering",
    "report.py": "the check-only report, and the evaluation report",
    "store.py": "the audit store contract, and the knowledge store",
}
"""Module file names kept in more than one package, each with the reason."""


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
    assert "gateway.pipeline.recording" in graph["gateway.pipeline.run"]
    assert "gateway.services" in graph["gateway.pipeline.delivery"]  # under TYPE_CHECKING


def test_no_import_cycles_in_the_gateway_package() -> None:
    assert cycles(import_graph(package_modules())) == []


def package_of(module: str) -> str:
    """``gateway.triage.decision`` -> ``triage``; a top-level module is its own package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(package: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if package in layer)


def package_graph() -> dict[str, set[str]]:
    """package -> the packages it imports (allowed upward imports left out)."""
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph(package_modules()).items():
        if module == "gateway":
            continue
        graph.setdefault(package_of(module), set()).update(
            package_of(t) for t in targets if t != "gateway" and (module, t) not in UPWARD_IMPORTS
        )
    return {package: targets - {package} for package, targets in graph.items()}


def test_every_package_has_a_layer() -> None:
    placed = set().union(*LAYERS)
    packages = {package_of(m) for m in package_modules() if m != "gateway"}
    assert packages - placed == set(), "place these packages in LAYERS"
    assert placed - packages == set(), "these LAYERS entries are no package any more"


def test_no_package_imports_a_layer_above_it() -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph(package_modules()).items()
        if module != "gateway"
        for target in targets
        if target != "gateway"
        and layer_of(package_of(target)) > layer_of(package_of(module))
        and (module, target) not in UPWARD_IMPORTS
    )
    assert upward == [], "an import reaches up a layer: move the function to where it belongs"


@pytest.mark.parametrize(("module", "target"), sorted(UPWARD_IMPORTS))
def test_every_listed_upward_import_is_still_there(module: str, target: str) -> None:
    graph = import_graph(package_modules())
    assert target in graph.get(module, set()), (
        f"{module} no longer imports {target}: remove it from UPWARD_IMPORTS"
    )
    assert layer_of(package_of(target)) > layer_of(package_of(module)), (
        "not upward: remove it from UPWARD_IMPORTS"
    )


def test_no_package_level_cycles() -> None:
    assert cycles(package_graph()) == []


def test_no_module_name_repeats_unless_justified() -> None:
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    repeated = {name: sorted(paths) for name, paths in names.items() if len(paths) > 1}
    assert {n: p for n, p in repeated.items() if n not in REPEATED_NAMES} == {}, (
        "name the module by what it holds (or justify the name in REPEATED_NAMES)"
    )
    assert set(REPEATED_NAMES) - set(repeated) == set(), "no longer repeated: remove from REPEATED_NAMES"


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


def test_only_validation_builds_a_configuration_error() -> None:
    builders = {
        name
        for name, path in package_modules().items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and (node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", ""))
        in {"ConfigurationError", "InvalidValue"}
    }
    assert builders == {"gateway.validation"}, (
        "raise it through gateway.validation: refuse, or field_error in a dataclass's own check"
    )


def test_no_web_handler_module_sees_the_whole_services() -> None:
    seeing = {
        name
        for name, path in package_modules().items()
        if name.startswith("gateway.web.") and "gateway.services.Services" in imported_names(name, path)
    }
    assert seeing == SERVICES_IN_WEB, "hand the handler its part (gateway.web.parts), not Services"
