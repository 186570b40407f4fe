"""Helpers for the cleanup and streaming tests: policy copies with overrides, and a pinned verifier.

The exact-text tests pin the verifier to the chat path's quote-bound cascade without a judge (quote
anchoring and binding, local checks), so that what reaches the client does not depend on whether a
judge or entailment model is configured. (Anchoring alone is no verifier: it would pass a wrong dose
that quotes the right sentence.)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from gateway.bootstrap import build_cleaner, build_rewriter
from gateway.services import Services
from gateway.verification.anchoring import QuoteAnchoringVerifier
from gateway.verification.cascade import CascadeVerifier
from gateway.verification.local import LocalEntailmentVerifier
from gateway.verification.verify import ClaimChecker
from tests.support.components import with_components

POLICIES = Path(__file__).resolve().parents[2] / "policies"


def policy_copy(directory: Path, verification: dict[str, Any] | None = None, **cleanup: Any) -> Path:
    """A copy of the bundled policies with ``cleanup`` (and ``verification``) keys of thresholds.yaml
    overridden."""
    target = directory / "policies"
    shutil.copytree(POLICIES, target, dirs_exist_ok=True)
    path = target / "thresholds.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["cleanup"].update(cleanup)
    data["verification"].update(verification or {})
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return target


def keyed_policy_copy(base: Path, verification: dict[str, Any] | None = None, **cleanup: Any) -> Path:
    """``policy_copy`` under ``base`` in a directory named after the overrides: equal overrides give the
    same path, so a module's tests can share one gateway per policy (``start_module_gateway``)."""
    key = json.dumps([verification, cleanup], sort_keys=True, default=str)
    name = "policy-" + hashlib.sha256(key.encode()).hexdigest()[:12]
    return policy_copy(base / name, verification, **cleanup)


def pin_chat_verifier(services: Services) -> Services:
    """Use the quote-bound cascade without judge (and a rewriter verifying with it) in ``services``."""
    verification = services.policy.thresholds.verification
    anchoring = QuoteAnchoringVerifier(verification.quote_fuzzy_threshold, verification.quote_min_chars)
    local = LocalEntailmentVerifier(services.embedder, verification)
    verifier = CascadeVerifier(anchoring, local, None, verification)
    settings, policy = services.settings, services.policy
    rewriter = build_rewriter(settings, policy, services.embedder, verifier, services.models)
    return with_components(
        services,
        verifier=verifier,
        checker=ClaimChecker(verifier),
        cleaner=build_cleaner(settings, policy, rewriter, services.metrics),
        trail=dataclasses.replace(services.trail, verifier=verifier.name),
    )
