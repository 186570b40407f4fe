"""Tool policy (``policies/tools.yaml``): what a request that offers tools may do, and which tools'
results are vetted sources.

A tool's result (a ``tool`` message the client sends back) is conversation context, never a vetted
source, unless ``trusted`` names the tool: then each of its results is offered to the model as a
numbered passage after the knowledge base's, of the tier given here, and a claim citing it is verified
against it like any passage. A claim that rests only on an untrusted result cites no passage that
supports it, so it fails verification and is removed with its reason (docs/integrator.md, "Tools").
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import with_config

from gateway.tool_calls import TOOL_NAME
from gateway.validation import FILE_CONFIG, field_error


@dataclass(frozen=True)
class TrustedTool:
    name: str
    """The function name the client offers (``tools[i].function.name``)."""
    tier: str
    """The tier its results have as sources: an id declared in ``tiers.yaml``."""
    org: str
    """Who runs the tool, shown on the claim's badge (e.g. the clinic)."""
    title: str = ""
    """The badge's title for its results; empty: ``Result of <name>``."""

    def __post_init__(self) -> None:
        if not TOOL_NAME.fullmatch(self.name):
            raise field_error(self, "name", "must be 1 to 64 letters, digits, underscores or dashes")


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class ToolPolicy:
    non_clinical_to_model: bool = True
    """When the client offers tools, a request that is not a health question is not refused as
    ``non_clinical``: it reaches the model, which may call a tool (any text it writes is verified).
    Emergencies are decided first and never reach the model."""
    without_passages_to_model: bool = True
    """When the client offers tools, a request with no relevant vetted passage still reaches the model
    (with no passage: any claim it writes is removed) instead of being refused as ``no_relevant_context``;
    without a tool call, it is refused as before."""
    trusted: tuple[TrustedTool, ...] = ()
    """Tools whose results are vetted sources of a tier (none by default)."""

    def __post_init__(self) -> None:
        names = [tool.name for tool in self.trusted]
        if len(set(names)) != len(names):
            raise field_error(self, "trusted", "names a tool twice")

    def trusted_tool(self, name: str) -> TrustedTool | None:
        return next((tool for tool in self.trusted if tool.name == name), None)
