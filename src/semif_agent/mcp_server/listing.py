"""What a client sees on connecting (``semif mcp --check``): the tools, the resources, the listing's size."""

from __future__ import annotations

import json
from dataclasses import dataclass

from .server import SkillServer


@dataclass(frozen=True)
class ToolListing:
    """The tools a client lists (name and description), how many resources, and the tool listing in characters."""

    tools: list[tuple[str, str]]
    resources: int
    listing_chars: int

    def to_dict(self) -> dict[str, object]:
        return {
            "tools": [{"name": n, "description": d} for n, d in self.tools],
            "resources": self.resources,
            "listing_chars": self.listing_chars,
        }


async def client_view(server: SkillServer) -> ToolListing:
    """What ``tools/list`` and ``resources/list`` give a client of ``server``."""
    tools = await server.list_tools()
    listing = json.dumps([t.model_dump(by_alias=True, exclude_none=True) for t in tools], ensure_ascii=False)
    resources = await server.list_resources()
    return ToolListing([(t.name, t.description or "") for t in tools], len(resources), len(listing))
