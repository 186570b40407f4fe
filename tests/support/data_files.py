"""Loading a bad data file in a test: the error must name the file and say why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gateway.errors import ConfigurationError
from gateway.validation import load_file


def assert_refused(path: Path, body: str, model: type, reason: str) -> None:
    """Write ``body`` to ``path``; loading it as ``model`` raises a ConfigurationError naming the file
    and containing ``reason``."""
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigurationError) as caught:
        load_file(path, model)
    assert str(path) in str(caught.value)
    assert reason in str(caught.value)


def broken_copy(source: Path, directory: Path, old: str, new: str) -> Path:
    """A copy of the bundled data file ``source`` in ``directory``, ``old`` (which it must contain)
    replaced by ``new``: for a test that points the gateway at it and expects start-up to stop."""
    copy = Path(shutil.copy(source, directory / source.name))
    text = copy.read_text(encoding="utf-8")
    assert old in text, f"{source} no longer contains {old!r}"
    copy.write_text(text.replace(old, new, 1), encoding="utf-8")
    return copy
