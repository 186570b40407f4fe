"""The upstream client (``OpenAIChatModel``) against the scripted upstream over loopback HTTP.

What it sends (the Authorization header, the body, ``response_format``), what it reads back, and every
way a reply can fail, each as its UpstreamError; the configured retries; the judge's endpoint going
through the same client.
"""

from __future__ import annotations

import json

import pytest

from gateway.errors import (
    MalformedDraft,
    UpstreamHTTPError,
    UpstreamRateLimited,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from gateway.models import Endpoint, ModelPool, OpenAIChatModel
from gateway.settings import ResponseFormat, Secret, Settings
from gateway.testing import Reply, refused_port

KEY = "sk-test-upstream"
ASK = [{"role": "user", "content": "How much paracetamol can an adult take?"}]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
FAST_RETRY = {"retry-after-ms": "1"}
"""The SDK honours a server's ``Retry-After``: the retry tests need not wait out its backoff."""


def completion(**choice: object) -> str:
    """A raw chat-completion body whose first choice is ``choice``."""
    return json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [choice]})


@pytest.fixture
def scripted(upstream):  # type: ignore[no-untyped-def]
    scripted, _ = upstream
    scripted.reset()
    return scripted


def client_of(
    upstream,  # type: ignore[no-untyped-def]
    *,
    retries: int = 0,
    timeout: float = 5.0,
    response_format: ResponseFormat = "json_schema",
) -> OpenAIChatModel:
    _, base_url = upstream
    return OpenAIChatModel(
        base_url=base_url,
        api_key=KEY,
        model="draft-model",
        timeout=timeout,
        retries=retries,
        response_format=response_format,
    )


# ---- what is sent and read ------------------------------------------------------------------------


async def test_the_reply_text_is_returned_and_the_request_is_what_was_asked(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    scripted.queue("The answer [1].")
    client = client_of(upstream)
    text = await client.complete(
        ASK, temperature=0.2, max_tokens=300, user="u1", schema=SCHEMA, schema_name="x"
    )
    await client.aclose()
    assert text == "The answer [1]."
    [sent] = scripted.requests
    assert sent == {
        "model": "draft-model",
        "messages": ASK,
        "temperature": 0.2,
        "max_tokens": 300,
        "user": "u1",
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "x", "strict": True, "schema": SCHEMA},
        },
    }
    [headers] = scripted.headers
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [("json_object", {"type": "json_object"}), ("text", None)],
)
async def test_response_format_follows_the_endpoint_setting(
    upstream, scripted, response_format, expected
) -> None:  # type: ignore[no-untyped-def]
    scripted.queue("ok", "ok")
    client = client_of(upstream, response_format=response_format)
    assert await client.complete(ASK, schema=SCHEMA) == "ok"
    assert await client.complete(ASK) == "ok"  # no schema: no response_format whatever the setting
    await client.aclose()
    first, second = scripted.requests
    assert first.get("response_format") == expected
    assert "response_format" not in second
    assert {"temperature", "max_tokens", "user"}.isdisjoint(second)


async def test_null_content_is_an_empty_reply(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    scripted.queue(Reply(raw_body=completion(index=0, message={"role": "assistant", "content": None})))
    client = client_of(upstream)
    assert await client.complete(ASK) == ""
    await client.aclose()


# ---- a body that is not a usable chat completion --------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            Reply(raw_body=json.dumps({"id": "c", "object": "chat.completion"})),
            "missing required field `choices`",
        ),
        (Reply(raw_body=json.dumps({"choices": "none"})), r"Expected `array`, got `str` - at `\$.choices`"),
        (Reply(raw_body=json.dumps({"choices": []})), "no choices"),
        (Reply(raw_body=json.dumps([1, 2])), "Expected `object`, got `array`"),
        (Reply(raw_body=completion(index=0, finish_reason="stop")), "missing required field `message`"),
        (
            Reply(raw_body=completion(message={"content": 3})),
            r"got `int` - at `\$.choices\[0\].message.content`",
        ),
        (Reply(raw_body="this is not json"), "not valid JSON"),
        (
            Reply(raw_body='data: {"choices": []}\n\n', media_type="text/event-stream"),
            "not a chat completion .content type 'text/event-stream'",
        ),
        (Reply(content="The answer was cut", finish_reason="length"), "cut off by the token limit"),
    ],
    ids=[
        "no-choices-field",
        "choices-not-a-list",
        "empty-choices",
        "not-an-object",
        "no-message",
        "content-not-text",
        "not-json",
        "event-stream",
        "finish-length",
    ],
)
async def test_a_body_that_is_no_usable_completion_is_a_malformed_draft(
    upstream, scripted, reply, message
) -> None:  # type: ignore[no-untyped-def]
    scripted.queue(reply)
    client = client_of(upstream, retries=2)
    with pytest.raises(MalformedDraft, match=message):
        await client.complete(ASK)
    await client.aclose()
    assert len(scripted.requests) == 1  # a 200 is never retried, whatever its body


async def test_a_json_body_under_another_content_type_is_still_read(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    """As the SDK did: the content type only names the failure when the body is not JSON."""
    body = completion(index=0, message={"role": "assistant", "content": "ok"}, finish_reason="stop")
    scripted.queue(Reply(raw_body=body, media_type="text/plain"))
    client = client_of(upstream)
    assert await client.complete(ASK) == "ok"
    await client.aclose()


# ---- failures of the call -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, UpstreamRateLimited),
        (500, UpstreamHTTPError),
        (503, UpstreamHTTPError),
        (400, UpstreamHTTPError),
    ],
)
async def test_an_error_status_is_its_upstream_error(upstream, scripted, status, error) -> None:  # type: ignore[no-untyped-def]
    scripted.queue(Reply(status=status))
    client = client_of(upstream)
    with pytest.raises(error) as raised:
        await client.complete(ASK)
    await client.aclose()
    if isinstance(raised.value, UpstreamHTTPError):
        assert raised.value.status_code == status


async def test_a_slow_upstream_is_a_timeout(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    scripted.queue(Reply(content="late", delay=1.0))
    client = client_of(upstream, timeout=0.2)
    with pytest.raises(UpstreamTimeout):
        await client.complete(ASK)
    await client.aclose()


async def test_a_refused_connection_is_unavailable() -> None:
    with refused_port() as port:
        client = OpenAIChatModel(
            base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, model="m", timeout=1.0, retries=0
        )
        with pytest.raises(UpstreamUnavailable):
            await client.complete(ASK)
    await client.aclose()


# ---- retries --------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [503, 429])
async def test_a_retried_failure_then_success_is_a_success(upstream, scripted, status) -> None:  # type: ignore[no-untyped-def]
    scripted.queue(Reply(status=status, headers=FAST_RETRY), "after the retry")
    client = client_of(upstream, retries=1)
    assert await client.complete(ASK) == "after the retry"
    await client.aclose()
    assert len(scripted.requests) == 2
    assert scripted.requests[0] == scripted.requests[1]


async def test_retries_are_bounded_and_not_made_when_none_are_configured(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    scripted.default = Reply(status=503, headers=FAST_RETRY)
    client = client_of(upstream, retries=2)
    with pytest.raises(UpstreamHTTPError):
        await client.complete(ASK)
    await client.aclose()
    assert len(scripted.requests) == 3  # the call and two retries
    scripted.reset()
    scripted.default = Reply(status=503, headers=FAST_RETRY)
    client = client_of(upstream, retries=0)
    with pytest.raises(UpstreamHTTPError):
        await client.complete(ASK)
    await client.aclose()
    assert len(scripted.requests) == 1


async def test_a_client_error_is_not_retried(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    scripted.default = Reply(status=400, headers=FAST_RETRY)
    client = client_of(upstream, retries=2)
    with pytest.raises(UpstreamHTTPError):
        await client.complete(ASK)
    await client.aclose()
    assert len(scripted.requests) == 1


# ---- the judge's endpoint -------------------------------------------------------------------------


async def test_the_judge_endpoint_uses_the_same_client_never_retried(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    _, base_url = upstream
    settings = Settings(judge_base_url=base_url, judge_api_key=Secret("sk-judge"), judge_model="judge-model")
    pool = ModelPool(settings)  # the default connection: OpenAIChatModel.from_endpoint
    judge = pool.model(Endpoint.judge(settings), "judge")
    scripted.queue('{"verdict": "supported"}', Reply(status=503, headers=FAST_RETRY))
    assert await judge.complete(ASK, temperature=0, schema=SCHEMA) == '{"verdict": "supported"}'
    with pytest.raises(UpstreamHTTPError):
        await judge.complete(ASK)
    await pool.aclose()
    assert len(scripted.requests) == 2  # the 503 was not retried
    assert scripted.requests[0]["model"] == "judge-model"
    assert scripted.requests[0]["response_format"]["type"] == "json_schema"
    assert scripted.headers[0]["authorization"] == "Bearer sk-judge"


# ---- streaming (``stream: true``) ---------------------------------------------------------------------

STREAMED = '{"urgency": "routine", "why": "x"}\n["Adults can take 1 g.", [1]]\n'


async def collect(client: OpenAIChatModel) -> str:
    return "".join([piece async for piece in client.stream(ASK, temperature=0.1, user="u1")])


async def test_a_streamed_reply_arrives_in_pieces_that_make_the_text(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    scripted.queue(Reply(content=STREAMED, tokens_per_second=10_000))
    client = client_of(upstream, response_format="json_schema")
    pieces = [piece async for piece in client.stream(ASK, temperature=0.1, user="u1")]
    await client.aclose()
    assert len(pieces) > 3
    assert "".join(pieces) == STREAMED
    [sent] = scripted.requests
    assert sent["stream"] is True
    assert sent["temperature"] == 0.1
    assert "response_format" not in sent  # JSON Lines is not one JSON document


async def test_an_upstream_that_ignores_stream_is_read_as_one_piece(upstream, scripted) -> None:  # type: ignore[no-untyped-def]
    scripted.queue(Reply(content=STREAMED, ignore_stream=True))
    client = client_of(upstream)
    pieces = [piece async for piece in client.stream(ASK)]
    await client.aclose()
    assert pieces == [STREAMED]


@pytest.mark.parametrize(
    ("reply", "error", "message"),
    [
        (Reply(content=STREAMED, stream_cut_after=4), UpstreamUnavailable, "ended before it finished"),
        (Reply(content=STREAMED, finish_reason="length"), MalformedDraft, "cut off by the token limit"),
        (
            Reply(raw_body='data: {"error": {"message": "overloaded"}}\n\n', media_type="text/event-stream"),
            UpstreamUnavailable,
            "error event",
        ),
        (
            Reply(raw_body="data: not json\n\n", media_type="text/event-stream"),
            MalformedDraft,
            "not a completion chunk",
        ),
        (Reply(raw_body="<html>busy</html>", media_type="text/html"), MalformedDraft, "text/html"),
        (Reply(status=503), UpstreamHTTPError, "HTTP 503"),
    ],
    ids=["cut", "finish-length", "error-event", "not-json", "not-a-stream", "http-503"],
)
async def test_a_stream_that_fails_raises_its_upstream_error(
    upstream, scripted, reply, error, message
) -> None:  # type: ignore[no-untyped-def]
    scripted.queue(reply)
    client = client_of(upstream)
    with pytest.raises(error, match=message):
        await collect(client)
    await client.aclose()


@pytest.mark.parametrize("ignore_stream", [False, True])
async def test_tools_are_offered_and_tool_call_fragments_are_read_streamed_or_whole(
    upstream, scripted, ignore_stream: bool
) -> None:  # type: ignore[no-untyped-def]
    from gateway.models.chat_model import ToolOffer
    from gateway.tool_calls import ToolCall, ToolCallDelta

    call = ToolCall("call_1", "book_appointment", '{"day": "Tuesday"}')
    scripted.queue(Reply(content="", tool_calls=(call,), ignore_stream=ignore_stream))
    offer = ToolOffer(({"type": "function", "function": {"name": "book_appointment"}},), "auto", False)
    pieces = [piece async for piece in client_of(upstream).stream(ASK, tools=offer)]
    deltas = [p for p in pieces if isinstance(p, ToolCallDelta)]
    assert [p for p in pieces if isinstance(p, str)] == []
    assert (deltas[0].id, deltas[0].name) == (call.id, call.name)
    assert "".join(d.arguments for d in deltas) == call.arguments
    assert {d.index for d in deltas} == {0}
    sent = scripted.requests[0]
    assert (sent["tools"], sent["tool_choice"], sent["parallel_tool_calls"]) == (
        list(offer.tools),
        "auto",
        False,
    )
