"""Evaluation harness: SourceCheckup and ASTRID metrics for a raw model and for the gateway.

``questions`` loads and generates question sets, ``systems`` asks each system under test (the raw
upstream, the gateway in-process or over HTTP, recorded answers), ``scoring`` checks every answer,
``records`` keeps the resumable per-question log, ``metrics`` turns records into figures with
bootstrap confidence intervals, ``report`` writes the JSON and HTML, ``runner`` ties them together.
"""
