"""Noticing that the workspace's skills changed on disk: a SKILL.md added, edited or removed, a manifest edited, the
learned router switched by ``semif train``.

:func:`skills_signature` is cheap enough to take every second or two: a
SKILL.md is parsed again only when its size or time changed (the scan's
``known``), the rest is a ``stat`` per skill.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from ..routing.learned import ROUTER_FILE, WEIGHTS_FILE
from ..routing.tune import ROUTING_FILE
from ..tree.skill_md import SkillMdFolder, scan_skill_md
from ..workspace import Workspace

POLL_SECONDS = 1.0

Signature = frozenset[tuple[str, tuple[int, int]]]


@dataclass
class SkillWatch:
    """The skills' signature last seen, and the skills the last scan found, so an unchanged SKILL.md is not parsed
    again."""

    workspace: Workspace
    known: dict[str, SkillMdFolder] = field(default_factory=dict)
    last: Signature | None = None

    def signature(self) -> Signature:
        scan = scan_skill_md(self.workspace, self.known)
        self.known = {str(found.skill_md): found for found in scan.skills}
        seen = {(path, found.signature) for path, found in self.known.items()}
        data = self.workspace.data_dir
        for path in (self.workspace.categories_path, data / ROUTER_FILE, data / WEIGHTS_FILE, data / ROUTING_FILE):
            try:
                stat = path.stat()
            except OSError:
                continue
            seen.add((str(path), (stat.st_size, stat.st_mtime_ns)))
        return frozenset(seen)

    def changed(self) -> bool:
        """Whether the skills differ from the last look (the first look only remembers them)."""
        now = self.signature()
        before, self.last = self.last, now
        return before is not None and before != now


async def watch(workspace: Workspace, on_change: Callable[[], Awaitable[None]], *, every: float = POLL_SECONDS) -> None:
    """Call ``on_change()`` once the workspace's skills changed on disk and then held still for a look (a collection
    being copied in, or ``semif train`` writing its two files, is read once it is whole), until cancelled."""
    seen = SkillWatch(workspace)
    await anyio.to_thread.run_sync(seen.changed)
    moving = False
    while True:
        await anyio.sleep(every)
        if await anyio.to_thread.run_sync(seen.changed):
            moving = True
        elif moving:
            moving = False
            await on_change()
