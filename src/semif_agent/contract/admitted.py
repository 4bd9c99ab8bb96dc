"""The admitted bodies' digests, and the check a body passes before each run.

``data/admitted.json`` (beside ``categories.json``, out of every write dir)
records, per skill, the sha256 of the body that passed::

    {"version": 1, "bodies": {"todos.count": {"sha256": "...", "how": "admitted", "at": "2026-01-31T10:00:00"}}}

``how`` is ``admitted`` for a body written by skill generation (after the
checker, the duplicate check and the behavioural gate) and ``checked`` for
one that passed the checker before a run. Before each run the body's bytes
are hashed: a body that matches its record runs; one that does not (changed
by hand since, or never recorded: the starter's and hand-written bodies) is
checked against the contract (:func:`.check_source`, the static criteria 1
to 4, not the gate). If it passes, its digest is recorded as ``checked`` and
it runs; if not, it does not run, and the run fails with the violations.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._files import replace_file
from ..errors import SkillContractError, SkillLoadError
from ..tree.bodies import load_body
from ..tree.manifests import SkillManifest
from ..workspace import Workspace
from .checker import check_source

try:
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]  # no such module here (Windows): None, looked at before each use

VERSION = 1


def digest(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()


def recorded(workspace: Workspace) -> dict[str, dict[str, Any]]:
    """Skill name -> its record (``sha256``, ``how``, ``at``); empty when there is none or it is unreadable."""
    try:
        data = json.loads(workspace.admitted_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    bodies = data.get("bodies") if isinstance(data, dict) else None
    return {k: v for k, v in bodies.items() if isinstance(v, dict)} if isinstance(bodies, dict) else {}


def record_body(workspace: Workspace, name: str, source: str | bytes, *, how: str = "admitted") -> None:
    """Record ``source`` as the body of ``name`` that passed (``admitted`` or ``checked``)."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    with locked(workspace.admitted_path):
        bodies = recorded(workspace)
        bodies[name] = {"sha256": digest(data), "how": how, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
        _write(workspace.admitted_path, {"version": VERSION, "bodies": dict(sorted(bodies.items()))})


def verify_body(workspace: Workspace, skill: SkillManifest) -> str:
    """``skill``'s body text, if it matches its record or passes the checker (then recorded); else SkillContractError.

    The text returned is exactly the one verified: run it, not the file (which may change meanwhile).
    """
    path = skill.body_path
    try:
        source = path.read_bytes() if path is not None else b""
    except OSError as exc:
        raise SkillLoadError(f"{path}: cannot read the body of {skill.name!r} ({exc.strerror})") from exc
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillLoadError(f"{path}: the body of {skill.name!r} is not UTF-8 text") from exc
    entry = recorded(workspace).get(skill.name, {})
    if entry.get("sha256") == digest(source):
        return text
    report = check_source(text, name=skill.name, category=skill.category)
    if not report.ok:
        since = "changed since it was admitted and " if entry else ""
        shown = "; ".join(v.render() for v in report.violations[:5])
        more = f"; and {len(report.violations) - 5} more" if len(report.violations) > 5 else ""
        raise SkillContractError(f"{path}: the body {since}fails the contract, so it was not run: {shown}{more}")
    record_body(workspace, skill.name, source, how="checked")
    return text


def load_checked_body(workspace: Workspace, skill: SkillManifest) -> types.ModuleType:
    """``skill``'s body module, once :func:`verify_body` passed."""
    verify_body(workspace, skill)
    return load_body(skill)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (a sibling ``.lock`` file), for records rewritten in place."""
    lock = path.with_name(path.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _write(path: Path, data: Mapping[str, object]) -> None:
    replace_file(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
