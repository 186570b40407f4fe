"""The draft, read as it streams and checked one sentence at a time.

The draft streams in (``Upstream.stream``: the model's urgency read, then one complete sentence at a
time) and each sentence is split, verified, judged and, when it fails, rewritten to its source at
once, while the model writes the next. A sentence is released as soon as it is final and the answer,
were it to end there, would not be refused; the streaming and the non-streaming client get the same
released text for the same draft.
"""

from __future__ import annotations

from contextlib import aclosing

from gateway.claims.splitter import DraftBounds
from gateway.cleanup.cleaner import Release
from gateway.domain import ChatRequest, Outcome, RefusalReason
from gateway.drafting.contract import DraftEnd, DraftSentence, UrgencyRead, assemble
from gateway.errors import AuditError
from gateway.pipeline.stages import Stage, StageRunner
from gateway.pipeline.state import RequestState
from gateway.pipeline.streamed import next_part
from gateway.services import DraftParts
from gateway.tool_calls import ToolCallDelta
from gateway.triage import model_read as model_triage
from gateway.vocabulary import StageName

DRAFT = Stage(StageName.DRAFT, next_part)
"""The draft stage, run by the pipeline itself: one part of the stream per run (split, verify and
cleanup are components of the services, built at start-up)."""


async def draft_and_check(
    request: ChatRequest, state: RequestState, stage: StageRunner, parts: DraftParts, release: Release
) -> Outcome | None:
    """Read the draft of ``request`` as it streams and check each sentence the moment it is complete.

    Per sentence: split (bounded), verify, judge, and a failing claim rewritten at once (to its
    source: no model call; a model rewrite, where the policy asks for one, runs alongside and holds
    only the sentences after it); then ``release`` what is final. At the draft's end the cleanup's
    last step (``SentenceCleaner.finish``, run as the cleanup stage too) waits for the model rewrites
    still running and releases the rest. Stops the model early on a refusal no later sentence can undo
    (``CleanupStep.stop``, an instruction-like sentence). Fills in
    ``state``; returns the outcome, or None when the model's urgency read raised the request to an
    emergency. A failing stage raises StageError (named, counted); what was released stays released
    (``Ending.finish``).
    """
    cleaner = parts.cleaner
    split = Stage(StageName.SPLIT, parts.splitter.run)  # the components: built at start-up
    verify = Stage(StageName.VERIFY, parts.checker.run)
    clean = Stage(StageName.CLEANUP, cleaner.run)
    finish = Stage(StageName.CLEANUP, cleaner.finish, passes=(AuditError,))  # it releases: write-ahead
    bounds = DraftBounds()
    cleanup = cleaner.start(
        state.request, state.request_id, state.passages, release, state.tools.attributed, state.model_started
    )
    cleaning = state.cleaning = cleanup.cleaning
    sentences: list[DraftSentence] = []
    answer = ""
    try:
        async with aclosing(parts.drafter.stream(request, state.passages)) as stream:
            while (part := await stage(DRAFT, stream, request)) is not None:
                if isinstance(part, UrgencyRead):
                    state.urgency = part
                    state.draft = assemble(sentences, "", 0.0, part)
                    if model_triage.raises_emergency(part, state.triage):
                        state.triage = model_triage.model_emergency(part, state.triage)
                        return None
                    continue
                if isinstance(part, ToolCallDelta):  # outside the contract: released after the text
                    state.tools.add(part)
                    continue
                if isinstance(part, DraftEnd):
                    state.draft = assemble(sentences, part.raw, part.seconds, state.urgency)
                    break
                sentences.append(part)
                state.draft = assemble(sentences, "", 0.0, state.urgency)
                offset = len(answer) + 1 if answer else 0
                answer = f"{answer} {part.cited}" if answer else part.cited
                first_index = state.statements[-1].sentence_index + 1 if state.statements else 0
                reply = await stage(split, part, offset, first_index, bounds)
                state.statements += reply.statements
                if reply.instruction:  # a sentence shown unverified reads like an instruction
                    detail = "the draft contains a sentence that reads like an instruction to a model"
                    return _stopped(state, RefusalReason.SAFETY_CRITICAL_FAILED, detail)
                claims = [st for st in reply.statements if st.is_claim]
                verdicts = await stage(verify, claims, state.passages)
                state.verdicts += tuple(verdicts)
                step = await stage(clean, cleanup, answer, reply.statements, verdicts)
                await release(*step.ready)  # outside the stage: its write-ahead is no check
                if step.stop is not None:
                    return _stopped(state, *step.stop)
        # a reply that calls tools: failing claims are removed, and removals do not refuse it
        step = await stage(finish, cleanup, removals_refuse=not state.tools)
        await release(*step.ready)
        return _stopped(state, *step.stop) if step.stop is not None else cleaning.outcome()
    finally:
        cleaner.cancel(cleanup)


def _stopped(state: RequestState, reason: RefusalReason, detail: str) -> Outcome:
    """The answer refused from here on (``Ending.finish`` ends it with a note when sentences were
    released)."""
    claims = tuple(state.cleaning.results) if state.cleaning is not None else ()
    return Outcome("", state.statements, claims, True, reason, detail)
