"""Admit a skill into a workspace: its manifest into data/categories.json and its body, atomically.

Both files are written to temporary siblings first and moved into place only
when both are ready, under a lock on ``categories.json``; the manifest moves
last, so until it does the tree does not know the skill. If anything fails,
the previous body (if any) is put back and ``categories.json`` is unchanged.
The admitted body's sha256 is then recorded in ``data/admitted.json``, so a
later change to it is checked again before it runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..contract.admitted import locked, record_body
from ..errors import ManifestError
from ..tree.manifests import body_path_for
from ..workspace import Workspace


def admit(
    workspace: Workspace, manifest: dict[str, Any], source: str, *, category: dict[str, Any] | None = None
) -> Path:
    """Write ``source`` as the body of ``manifest`` and add or replace the manifest; returns the body path.

    ``category`` (name, description) is added first when the category is new,
    or its description refreshed when given for an existing one.
    """
    path = workspace.categories_path
    body = body_path_for(workspace.bodies_dir, manifest["category"], manifest["name"])
    with locked(path):
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"version": 1}
        except json.JSONDecodeError as exc:
            raise ManifestError(
                f"invalid JSON at line {exc.lineno}; fix it before adding skills", file=str(path)
            ) from exc
        categories = data.setdefault("categories", [])
        if category is not None:
            existing = next((c for c in categories if c.get("name") == category["name"]), None)
            if existing is None:
                categories.append(dict(category))
            else:
                existing["description"] = category.get("description", existing.get("description", ""))
        skills = [s for s in data.setdefault("skills", []) if s.get("name") != manifest["name"]]
        data["skills"] = skills + [manifest]
        body.parent.mkdir(parents=True, exist_ok=True)
        new_body = _temp_write(body, source)
        new_manifest = _temp_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        backup = None
        try:
            if body.exists():
                backup = body.with_name(f".{body.name}.previous")
                os.replace(body, backup)
            os.replace(new_body, body)
            os.replace(new_manifest, path)
        except BaseException:
            _restore(body, backup)
            for leftover in (new_body, new_manifest):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
            raise
        if backup is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(backup)
        record_body(workspace, manifest["name"], source, how="admitted")
    return body


def _restore(body: Path, backup: Path | None) -> None:
    if backup is not None and backup.exists():
        os.replace(backup, body)
    elif body.exists() and backup is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(body)


def _temp_write(target: Path, text: str) -> Path:
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return Path(name)
