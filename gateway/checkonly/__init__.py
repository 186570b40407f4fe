"""The check-only use case: check an answer someone else produced against the sources it cites.

``check_answer(answer, sources, verifier, fetcher)`` splits the answer into statements (the
pipeline's own splitter, with ``[id]`` markers naming sources by id), fetches sources that come as a
URL only (SSRF-safe, see ``gateway.fetching``), verifies every claim through any ``Verifier`` and
reports SourceCheckup's and ASTRID's metrics:

- ``statement_support``: share of claims supported (None without claims);
- ``response_supported``: the answer has claims and every one is supported;
- URL validity: per fetched URL, HTTP 200 with non-empty text, and the share of valid URLs;
- ``conversational_faithfulness``: share of informative sentences (sentences with at least one claim)
  whose every claim is supported.

A claim cites the sources whose ids its markers name; a claim without markers is checked against
every source that has text. A claim whose cited sources have no text (the URL could not be fetched,
or the marker names no source) is unsupported without asking the verifier.

Nothing here knows about HTTP: ``/v1/verify`` (``gateway.web.verify_api``) and the ``verify`` CLI
both parse their input with ``parse_check_input`` and render with ``report_json``.

Modules by job: ``inputs`` (parse and validate a request body, raising ``RequestError`` naming the
field), ``report`` (the result types and their metrics), ``service`` (``check_answer`` and the counting
of its report), ``rendering`` (the JSON of ``/v1/verify``) and ``batch`` (``trust-gateway verify``
over a JSONL file).
"""
