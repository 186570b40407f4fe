"""Explicit checks that embedding similarity misses and that matter most in medicine.

A sentence embedding scores "take 500 mg" and "take 50 mg", or "do not take" and "take", as near
duplicates. Each check compares one aspect of a claim with a piece of evidence text and returns a typed
``CheckResult`` (``results``): ``PASS``, ``MISSING`` (the evidence does not state what the claim says:
not entailed) or ``CLASH`` (the evidence states something incompatible: a contradiction when the
evidence is about the same thing). All checks are pure and cheap; they run on every claim.

Evidence that says more than the claim never fails a check: a number, hedge or entity the claim drops
is fine. Only what the claim adds or changes fails.

One module per concern, imported directly (this package re-exports nothing):

- ``words``: tokens, stems, stopwords, synonyms, content words and coverage;
- ``quantities``: the numbers a text states; ``numbers``: the number check;
- ``polarity``: the negation and antonym checks; ``quantifiers``: the quantifier check;
- ``entities``: medicines, conditions, body parts, populations, names and the entity check;
- ``run``: every check, in the order their failures are reported;
- ``form``: is the claim a complete statement (``FormCheck``, built once with its word list by the
  verifier);
- ``analysis``: ``AnalysedText``, a text with its analyses (built once per request), which every
  check takes for the claim and for the evidence.
"""
