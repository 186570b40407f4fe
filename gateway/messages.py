"""Patient-facing messages (refusals, safety messages, declined questions), rendered from templates;
``ReplyNotes``, the notes that follow an in-scope reply, as a component built once at start-up."""

from __future__ import annotations

from pathlib import Path

import jinja2

from gateway.domain import RefusalReason, Scope, Triage
from gateway.triage.contexts import OperatingContext
from gateway.triage.outcome import named_signs, red_flag_notes

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


class ReplyNotes:
    """The notes step, built once at start-up with the messages it renders (``Services.notes``)."""

    def __init__(self, messages: Messages) -> None:
        self.messages = messages

    def run(self, triage: Triage) -> str:
        """After an in-scope reply: a note per declined question, and the safety note per red flag asked
        about; nothing after any other."""
        if triage.scope is not Scope.IN_SCOPE:
            return ""
        notes = [
            self.messages.render("declined_question", scope=q.scope.value, question=q.text)
            for q in triage.declined
        ]
        notes += [
            self.messages.render("red_flag_information", rule=rule, signs=named_signs(triage, rule))
            for rule in red_flag_notes(triage)
        ]
        return " ".join(notes)
