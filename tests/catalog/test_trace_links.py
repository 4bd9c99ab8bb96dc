"""The host's skill trace is written only to a regular file beneath the workspace: a script that may write the
workspace cannot make the host append its spans (the request text among them) to a file elsewhere by putting a
link, or a hard link, where the trace goes."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from support.catalog_helpers import make_skill

from semif_agent.catalog import AgentSkillRuntime, JsonlTraceWriter, SkillCatalog, read_spans
from semif_agent.catalog.runtime import TRACE_FILE

PLANT = """
import os, sys
os.makedirs('.semif', exist_ok=True)
os.symlink(sys.argv[1], '.semif/skill-trace.jsonl')
print('planted')
"""


def test_a_script_that_links_the_trace_elsewhere_never_gets_the_host_to_write_there(tmp_path: Path) -> None:
    victim = tmp_path / "outside" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("ORIGINAL\n")
    skills = tmp_path / "skills"
    make_skill(
        skills,
        "planter",
        "name: planter\ndescription: Plants a link.\nscript: scripts/plant.py",
        files={"scripts/plant.py": PLANT},
    )
    catalog = SkillCatalog()
    catalog.scan_custom(skills)
    runtime = AgentSkillRuntime("a1", catalog)
    runtime.add_visible_skill("planter")
    runtime.bind_workspace(workspace_root=tmp_path / "ws")  # a plain folder: the script may write all of it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = runtime.run_skill_script_sync("custom@planter", "", [str(victim), "my private request"])
        runtime.activate_skill("planter")
    assert result.ok, result.stderr
    assert os.path.islink(tmp_path / "ws" / TRACE_FILE)
    assert victim.read_text() == "ORIGINAL\n"
    assert refusals(caught) == 1  # one warning, then nothing traced


def refusals(caught: list[warnings.WarningMessage]) -> int:
    """How many of ``caught`` say the trace was refused."""
    return sum(
        issubclass(w.category, RuntimeWarning) and "not writing the skill trace" in str(w.message) for w in caught
    )


def activate_once(workspace: Path) -> None:
    """Bind a runtime to ``workspace`` with its default trace, and activate a skill (one span)."""
    catalog = SkillCatalog()
    make_skill(workspace.parent / "team", "report")
    catalog.scan_custom(workspace.parent / "team")
    runtime = AgentSkillRuntime("a1", catalog)
    runtime.add_visible_skill("report")
    runtime.bind_workspace(workspace_root=workspace)
    runtime.activate_skill("report")
    runtime.trace_writer.close()


def test_a_trace_folder_swapped_for_a_link_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".semif").symlink_to(outside)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        activate_once(workspace)
    assert list(outside.iterdir()) == []
    assert refusals(caught) == 1


def test_a_trace_file_hard_linked_to_another_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.txt"
    other.write_text("ORIGINAL\n")
    (tmp_path / "ws" / ".semif").mkdir(parents=True)
    os.link(other, tmp_path / "ws" / TRACE_FILE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        activate_once(tmp_path / "ws")
    assert other.read_text() == "ORIGINAL\n"
    assert refusals(caught) == 1


def test_the_trace_is_still_written_with_its_folders_made(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        activate_once(tmp_path / "ws")
        writer = JsonlTraceWriter(tmp_path / "plain" / "trace.jsonl")  # no folder given: the file's own
        with writer.span("skill.script"):
            pass
        writer.close()
    assert [span["name"] for span in read_spans(tmp_path / "ws" / TRACE_FILE)] == ["skill.activate"]
    assert [span["name"] for span in read_spans(tmp_path / "plain" / "trace.jsonl")] == ["skill.script"]
