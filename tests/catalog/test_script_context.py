"""SkillScriptContext: read-only, its folders read back as paths, equal, copied and pickled by value."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from semif_agent.catalog import SkillScriptContext


def _context() -> SkillScriptContext:
    return SkillScriptContext(
        workspace_root="/srv/agents/agent-1",
        skill_dir=Path("/skills/tools"),
        skill_id="custom@tools",
        skill_name="tools",
    )


def test_folders_given_as_strings_or_paths_read_back_as_paths():
    ctx = _context()
    assert ctx.workspace_root == Path("/srv/agents/agent-1") and isinstance(ctx.workspace_root, Path)
    assert ctx.skill_dir / "scripts" == Path("/skills/tools/scripts")
    assert ctx.env == {} and ctx.hook_type == ""


def test_the_context_is_read_only():
    ctx = _context()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.skill_id = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del ctx.env
    assert ctx.skill_id == "custom@tools"


def test_equal_by_fields_copied_and_pickled_by_value():
    ctx = _context()
    assert ctx == _context() and ctx != SkillScriptContext("/elsewhere", "/skills/tools", "custom@tools", "tools")
    for twin in (copy.copy(ctx), copy.deepcopy(ctx), pickle.loads(pickle.dumps(ctx))):
        assert twin == ctx and twin.workspace_root == Path("/srv/agents/agent-1")
    assert repr(ctx).startswith("SkillScriptContext(workspace_root=") and "skill_id='custom@tools'" in repr(ctx)
