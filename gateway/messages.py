"""Patient-facing messages (refusals, safety messages, declined questions), rendered from templates."""

from __future__ import annotations

from pathlib import Path

import jinja2

from gateway.domain import RefusalReason
from gateway.triage.contexts import OperatingContext

NOTES = ("ended_early", "model_urgent")
"""Notes a streamed answer may end with (docs/safety.md), checked at start-up like the refusals."""


class Messages:
    """Renders ``templates/messages/<name>.txt.j2`` with the operating context."""

    def __init__(self, templates_dir: Path, context: OperatingContext) -> None:
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates_dir)),
            autoescape=False,  # noqa: S701 - plain text for the chat API; HTML pages escape it themselves
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
        )
        self._context = context
        for name in (*(reason.value for reason in RefusalReason), *NOTES):
            self._env.get_template(self._name(name))

    @staticmethod
    def _name(name: str) -> str:
        return f"messages/{name}.txt.j2"

    def render(self, name: str, **values: object) -> str:
        template = self._env.get_template(self._name(name))
        return template.render(context=self._context, **values).strip()

    def refusal(self, reason: RefusalReason, **values: object) -> str:
        return self.render(reason.value, **values)
