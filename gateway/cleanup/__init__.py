"""SourceCleanup: rewriters that repair a failing claim from its source, then verify the repair."""

from gateway.cleanup.extractive import ExtractiveRewriter
from gateway.cleanup.upstream import UpstreamRewriter

__all__ = ["ExtractiveRewriter", "UpstreamRewriter"]
