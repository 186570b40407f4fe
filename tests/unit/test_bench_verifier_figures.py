"""The verifier bench's per-set figures (``bench_verifier.figures``) on hand-made verdicts, each figure
computed by hand: leak, supported recall, contradiction precision and coverage, undecided share. No
model is loaded: the verdicts are built here."""

from __future__ import annotations

import math

import numpy as np

from bench import bench_verifier as bv
from gateway.domain import Conflict, ConflictKind, Verdict, VerdictLabel
from gateway.vocabulary import VerdictCheck, VerifierFailure, VerifierMethod

CONFLICT = Conflict(ConflictKind.NUMBER, "two vs one", "two", "one")


def passed() -> Verdict:
    return Verdict(VerdictLabel.SUPPORTED, 0.9, VerifierMethod.LOCAL, VerdictCheck.RESTATEMENT)


def contradicted() -> Verdict:
    return Verdict(
        VerdictLabel.CONTRADICTED, 0.0, VerifierMethod.LOCAL, VerdictCheck.NUMBER_MISMATCH, conflict=CONFLICT
    )


def undecided() -> Verdict:
    """The local checker could not decide: ``not_verified``."""
    return Verdict(VerdictLabel.UNSUPPORTED, 0.3, VerifierMethod.LOCAL, VerdictCheck.SIMILARITY)


def decided_no() -> Verdict:
    """Something able to decide said no (a judge): ``unsupported``, not undecided."""
    return Verdict(VerdictLabel.UNSUPPORTED, 0.1, VerifierMethod.JUDGE, VerdictCheck.SIMILARITY, decided=True)


def failed() -> Verdict:
    """A judge that timed out: a closed failure, ``not_verified`` although ``decided`` is set."""
    return Verdict(
        VerdictLabel.UNSUPPORTED,
        0.0,
        VerifierMethod.JUDGE,
        VerdictCheck.SIMILARITY,
        failure=VerifierFailure.TIMEOUT,
        decided=True,
    )


def test_figures_of_a_set_with_contradictions() -> None:
    # 4 truly supported: 2 passed, 1 undecided, 1 wrongly marked contradicted;
    # 5 not supported: 2 marked contradicted, 1 passed (the leak), 1 undecided, 1 decided no.
    verdicts = [passed(), passed(), undecided(), contradicted()]
    verdicts += [contradicted(), contradicted(), passed(), undecided(), decided_no()]
    truth = np.array([True] * 4 + [False] * 5)
    f = bv.figures(verdicts, truth)
    assert f.n == 9
    assert f.leak == 1 / 5  # 1 of 5 not-supported claims passed
    assert f.recall == 2 / 4  # 2 of 4 supported claims passed
    assert f.contradicted == 3
    assert f.contradiction_precision == 2 / 3  # 2 of the 3 marked contradicted are truly not supported
    assert f.contradiction_coverage == 2 / 5  # 2 of the 5 not supported are marked contradicted
    assert f.undecided == 2 / 9  # the decided no is not undecided


def test_figures_of_a_set_with_none_marked_contradicted() -> None:
    # 2 supported: 1 passed, 1 undecided; 2 not supported: 1 undecided, 1 failed judge (undecided).
    verdicts = [passed(), undecided(), undecided(), failed()]
    truth = np.array([True, True, False, False])
    f = bv.figures(verdicts, truth)
    assert (f.n, f.leak, f.recall) == (4, 0.0, 0.5)
    assert f.contradicted == 0
    assert math.isnan(f.contradiction_precision)  # none marked: no precision, not 100%
    assert f.contradiction_coverage == 0.0
    assert f.undecided == 3 / 4
