"""SourceCleanup: rewriters that repair a failing claim from its source, then verify the repair."""

from gateway.cleanup.source import SourceRewriter
from gateway.cleanup.upstream import UpstreamRewriter

__all__ = ["SourceRewriter", "UpstreamRewriter"]
