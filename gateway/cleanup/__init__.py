"""SourceCleanup: rewriters that repair a failing claim from its source, then verify the repair."""

from gateway.cleanup.model_rewriter import UpstreamRewriter
from gateway.cleanup.source_rewriter import SourceRewriter

__all__ = ["SourceRewriter", "UpstreamRewriter"]
