"""Where the bundled knowledge base, policies and templates live.

In a wheel they are package data under ``gateway/_bundled``; in a source checkout (editable install)
they are the top-level folders of the repository. Operators point settings at their own copies.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def bundled(name: str) -> Path:
    for candidate in (_PACKAGE / "_bundled" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"bundled folder {name!r} not found next to the gateway package")
