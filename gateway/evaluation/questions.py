"""Question sets: read them (JSONL), find the bundled one, and generate one from a knowledge base.

A question set is JSONL, one object per line::

    {"id": "q01", "question": "How much paracetamol can an adult take?", "scope": "in_scope",
     "document_id": "paracetamol-adults", "topic": "paracetamol"}

Only ``question`` is required. ``scope`` is one of in_scope, out_of_scope, non_clinical, emergency;
``id`` defaults to a hash of the question text so that resumed runs key the same question the same
way. Generation follows SourceCheckup: one self-contained question per source document, written by a
model that sees only that document.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.errors import UpstreamError
from gateway.evaluation.records import ExpectedScope, Question
from gateway.evaluation.rows import QuestionRow, read_row
from gateway.knowledge.corpus import SourceDocument
from gateway.models.chat_model import ChatModel
from gateway.validation import refuse

BUNDLED_QUESTIONS = Path(__file__).resolve().parent / "questions" / "bundled.jsonl"
"""The question set written for the bundled knowledge base (shipped inside the package)."""


def load_questions(path: Path) -> list[Question]:
    """Read a JSONL question set (``rows.QuestionRow``). Errors name the file, the line and the field."""
    if not path.is_file():
        refuse(str(path), "-", "question set not found")
    questions: list[Question] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            refuse(str(path), f"line {number}", f"not JSON: {err.msg}")
        question = read_row(QuestionRow, data, str(path), number).to_question()
        if question.id in seen:
            refuse(str(path), f"line {number}.id", f"duplicate id {question.id!r}")
        seen.add(question.id)
        questions.append(question)
    if not questions:
        refuse(str(path), "-", "the question set is empty")
    return questions


def questions_digest(questions: Sequence[Question]) -> str:
    """A fingerprint of a question set, stored with a run so a resume cannot mix two sets."""
    digest = hashlib.sha256()
    for q in questions:
        digest.update(json.dumps([q.id, q.question, q.scope], default=str).encode("utf-8"))
    return digest.hexdigest()[:16]


# ---- generation -----------------------------------------------------------------------------------


GENERATION_PROMPT = """\
You write evaluation questions for a patient-information service. You are given one document from \
its vetted knowledge base. Write ONE question that a patient or carer might type into a chat box \
and that this document answers.

Rules:
- The question must be self-contained: it names the condition, medicine or procedure, and makes \
sense to someone who has never seen the document. Never write "according to the document", \
"the text", "the passage", "this leaflet" or similar.
- Ask about one specific fact the document states (a dose, a symptom, a warning, when to get help, \
how to take something), not about the document itself.
- One sentence, ending with a question mark, at most 30 words.
- Reply with JSON only: {"question": "..."}
"""

GENERATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["question"],
    "properties": {"question": {"type": "string"}},
}

_NOT_SELF_CONTAINED = re.compile(
    r"\b(the|this) (document|text|passage|leaflet|article|source|label summary)\b|\baccording to\b",
    re.IGNORECASE,
)
_DOCUMENT_CHARS = 6000
"""Longest document text sent to the model when generating (the bundled documents are shorter)."""


@dataclass(frozen=True)
class GenerationFailure:
    document_id: str
    reason: str


def parse_generated(raw: str) -> str:
    """The question in the model's strict-JSON reply; ValueError naming what is wrong otherwise."""
    body = raw.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.DOTALL)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as err:
        raise ValueError(f"reply is not JSON: {err.msg}") from None
    if not isinstance(data, dict) or set(data) != {"question"}:
        raise ValueError('reply must be exactly {"question": "..."}')
    question = data["question"]
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question is empty")
    question = " ".join(question.split())
    if not question.endswith("?"):
        raise ValueError("question does not end with a question mark")
    if _NOT_SELF_CONTAINED.search(question):
        raise ValueError("question refers to the document instead of standing alone")
    if len(question.split()) > 40:
        raise ValueError("question is longer than 40 words")
    return question


async def generate_questions(
    documents: Iterable[SourceDocument], model: ChatModel
) -> tuple[list[Question], list[GenerationFailure]]:
    """One question per document; documents whose reply breaks the rules are reported, not guessed."""
    questions: list[Question] = []
    failures: list[GenerationFailure] = []
    for document in documents:
        messages = [
            {"role": "system", "content": GENERATION_PROMPT},
            {
                "role": "user",
                "content": f"Document title: {document.title}\n\n{document.text[:_DOCUMENT_CHARS]}",
            },
        ]
        try:
            raw = await model.complete(
                messages, temperature=0.0, schema=GENERATION_SCHEMA, schema_name="eval_question"
            )
            text = parse_generated(raw)
        except UpstreamError as err:
            failures.append(GenerationFailure(document.id, f"{type(err).__name__}: {err}"))
            continue
        except ValueError as err:
            failures.append(GenerationFailure(document.id, str(err)))
            continue
        questions.append(
            Question(
                id=f"gen-{document.id}",
                question=text,
                scope=ExpectedScope.IN_SCOPE,
                document_id=document.id,
                topic=document.title,
            )
        )
    return questions, failures


def write_questions(questions: Iterable[Question], path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for q in questions:
        row: dict[str, Any] = {"id": q.id, "question": q.question}
        if q.scope is not None:
            row["scope"] = q.scope.value
        if q.document_id:
            row["document_id"] = q.document_id
        if q.topic:
            row["topic"] = q.topic
        lines.append(json.dumps(row, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)
