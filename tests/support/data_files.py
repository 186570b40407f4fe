"""Loading a bad data file in a test: the error must name the file and say why."""

from __future__ import annotations

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
