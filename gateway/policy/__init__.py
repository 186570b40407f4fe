"""Policies: the YAML an operator edits, loaded into typed, validated dataclasses.

Layout of a policy directory::

    thresholds.yaml           retrieval, verification, cleanup and refusal thresholds
    tiers.yaml                source tiers, their base trust scores, age decay and matching rules
    contexts/<name>.yaml      an operating context: scope and triage rules
    triage/                   semantic triage: exemplar banks, classifier, thresholds (``triage.py``)

Any unknown key, wrong type or out-of-range value stops start-up with a ConfigurationError naming the
file, the dotted key and the reason.

Each file is validated by pydantic over these frozen dataclasses (``gateway.validation``: the loading,
the range and pattern checks, and the one conversion of its errors); one module per concern:
``retrieval``, ``verification``, ``cleanup`` and ``tiers`` (the sections of thresholds.yaml and
tiers.yaml), ``contexts`` (operating contexts and their triage rules), ``triage`` (semantic triage)
and ``loader`` (the whole ``Policy`` of a directory).
"""
