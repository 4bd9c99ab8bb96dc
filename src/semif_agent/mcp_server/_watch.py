"""Noticing that the workspace's skills changed on disk: a SKILL.md added, edited or removed, a manifest edited, the
learned router switched by ``semif train``.

:func:`skills_signature` is cheap enough to take every second or two: a
SKILL.md is parsed again only when its size or time changed (the scan's
``known``), the rest is a ``stat`` per skill. Among many thousands of skills a
look still takes a while (about half a second of a core at 10,000), so the
watch waits longer between looks as they get slower (:func:`pause_after`):
it never spends more than :data:`BUSY_SHARE` of its time looking.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from ..routing.learned import ROUTER_FILE, WEIGHTS_FILE
from ..routing.tune import ROUTING_FILE
from ..tree.skill_md import SkillMdFolder, scan_skill_md
from ..tree.workspace_tree import stored_skill_md
from ..workspace import Workspace

POLL_SECONDS = 1.0
BUSY_SHARE = 0.1
"""The most of its time the watch spends looking at the skills."""

Signature = frozenset[tuple[str, tuple[int, int]]]


@dataclass
class SkillWatch:
    """The skills' signature last seen, and the skills the last scan found (at first, the stored tree's), so an
    unchanged SKILL.md is not parsed again."""

    workspace: Workspace
    known: dict[str, SkillMdFolder] = field(default_factory=dict)
    last: Signature | None = None

    def __post_init__(self) -> None:
        if not self.known:  # the first look parses only what changed since the tree was stored, not every SKILL.md
            self.known = stored_skill_md(self.workspace)

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


def pause_after(took: float, every: float = POLL_SECONDS) -> float:
    """Seconds to wait after a look that took ``took``: ``every``, or longer when looks are slow enough that waiting
    ``every`` would spend more than :data:`BUSY_SHARE` of the time looking."""
    return max(every, took * (1 / BUSY_SHARE - 1))


async def watch(workspace: Workspace, on_change: Callable[[], Awaitable[None]], *, every: float = POLL_SECONDS) -> None:
    """Call ``on_change()`` once the workspace's skills changed on disk and then held still for a look (a collection
    being copied in, or ``semif train`` writing its two files, is read once it is whole), until cancelled."""
    seen = SkillWatch(workspace)
    began = time.monotonic()
    await anyio.to_thread.run_sync(seen.changed)
    moving = False
    while True:
        await anyio.sleep(pause_after(time.monotonic() - began, every))
        began = time.monotonic()
        if await anyio.to_thread.run_sync(seen.changed):
            moving = True
        elif moving:
            moving = False
            await on_change()
