"""The per-agent runtime: visibility, activation, ambiguity, saved state, documents, paths, traces."""

from __future__ import annotations

import json
import os

import pytest
from support.catalog_helpers import make_skill

from semif_agent.catalog import (
    AgentSkillRuntime,
    JsonlTraceWriter,
    MemoryTraceWriter,
    NullTraceWriter,
    RuntimeNotBound,
    SkillCatalog,
    TraceWriter,
    read_spans,
)
from semif_agent.catalog.paths import real_path


@pytest.fixture
def registry(tmp_path) -> SkillCatalog:
    team = tmp_path / "team"
    make_skill(team, "report", files={"references/style.md": "Be brief.", "scripts/make.py": "print(1)"})
    make_skill(
        team,
        "email",
        "name: email\ndescription: Send email.\nscript: scripts/send.py",
        files={"scripts/send.py": "print('sent')"},
    )
    make_skill(team, "hooked", "name: hooked\ndescription: Hooks.\nhooks:\n  pre_step: h.py", files={"h.py": ""})
    other = tmp_path / "other"
    make_skill(other, "report", "name: report\ndescription: The other report.")
    registry = SkillCatalog()
    registry.scan_custom(team)
    registry.scan_custom(other, namespace="other")
    return registry


def runtime_for(registry, tmp_path, agent_id=1) -> AgentSkillRuntime:
    runtime = AgentSkillRuntime(agent_id, registry)
    runtime.bind_workspace(workspace_root=tmp_path / f"agent-{agent_id}", trace_writer=MemoryTraceWriter())
    return runtime


def test_visibility_by_id_and_name(registry, tmp_path):
    runtime = runtime_for(registry, tmp_path)
    runtime.set_visible_skills(["email", "other@report", "nope", ""])
    assert runtime.visible_skill_ids() == {"custom@email", "other@report"}
    assert runtime.visible_skill_count() == 2
    assert [item.skill_id for item in runtime.list_visible_skills()] == ["custom@email", "other@report"]
    assert runtime.skill_catalog() == [
        {"id": "custom@email", "name": "email", "description": "Send email."},
        {"id": "other@report", "name": "report", "description": "The other report."},
    ]
    assert runtime.add_visible_skill("hooked") and not runtime.add_visible_skill("missing")
    assert runtime.remove_visible_skill("email") and not runtime.remove_visible_skill("email")
    assert runtime.visible_skill_ids() == {"custom@hooked", "other@report"}
    runtime.visible_skill_ids().clear()
    assert runtime.visible_skill_count() == 2


def test_an_ambiguous_name_resolves_only_through_exactly_one_active_skill(registry, tmp_path):
    runtime = runtime_for(registry, tmp_path)
    assert runtime.resolve_skill_id("report", visible_only=False) == ""
    runtime.set_visible_skills(["custom@report", "other@report"])
    assert runtime.resolve_skill_id("report") == ""
    assert runtime.activate_skill("report")[0] is False
    assert runtime.activate_skill("other@report")[:2] == (True, "other@report")
    assert runtime.resolve_skill_id("report") == "other@report"
    runtime.add_default_activated_skills(["custom@report"])
    assert runtime.resolve_skill_id("report") == ""
    runtime.remove_visible_skill("other@report")
    assert runtime.resolve_skill_id("report") == "custom@report"
    assert runtime.resolve_skill_id("  ") == ""


def test_activation_follows_visibility(registry, tmp_path):
    runtime = runtime_for(registry, tmp_path)
    runtime.set_visible_skills(["email", "hooked"])
    activated, skill_id, doc = runtime.activate_skill("email")
    assert activated and skill_id == "custom@email" and doc.startswith("---\nname: email")
    assert runtime.activate_skill("custom@report") == (False, "", "")
    runtime.set_activated_skills(["hooked", "custom@report"])
    assert runtime.activated_skill_ids() == {"custom@hooked"}
    runtime.add_default_activated_skills(["email", "report"])
    assert runtime.activated_skill_count() == 2
    assert [item.skill_id for item in runtime.active_hook_skills("pre_step")] == ["custom@hooked"]
    assert runtime.infer_single_script_skill_id() == "custom@email"
    assert runtime.deactivate_skill("email") == (True, "custom@email")
    assert runtime.deactivate_skill("email") == (False, "custom@email")
    assert runtime.infer_single_script_skill_id() == ""
    runtime.set_visible_skills(["email"])
    assert runtime.activated_skill_ids() == set()


def test_runtimes_sharing_a_registry_keep_their_own_state(registry, tmp_path):
    first, second = runtime_for(registry, tmp_path, 1), runtime_for(registry, tmp_path, 2)
    first.set_visible_skills(["email"])
    first.activate_skill("email")
    second.set_visible_skills(["hooked"])
    assert second.activated_skill_ids() == set() and second.resolve_skill_id("email") == ""
    assert first.activated_skill_ids() == {"custom@email"}
    assert len(registry) == 4


def test_saved_state_restores_visible_and_active_skills(registry, tmp_path):
    runtime = runtime_for(registry, tmp_path)
    runtime.set_visible_skills(["email", "hooked", "other@report"])
    runtime.activate_skill("hooked")
    saved = json.loads(json.dumps(runtime.to_state()))
    rebuilt = AgentSkillRuntime.from_state(saved, registry)
    assert rebuilt.agent_id == 1
    assert rebuilt.visible_skill_ids() == runtime.visible_skill_ids()
    assert rebuilt.activated_skill_ids() == {"custom@hooked"}
    saved["visible"].append("custom@deleted")
    with pytest.warns(UserWarning, match="custom@deleted"):
        assert rebuilt.load_state(saved) == ["custom@deleted"]
    assert "custom@deleted" not in rebuilt.visible_skill_ids()


def test_deprecated_aliases_warn_and_delegate(registry, tmp_path):
    runtime = runtime_for(registry, tmp_path)
    runtime.set_visible_skills(["email"])
    with pytest.deprecated_call():
        assert runtime.resolve_skill_id_by_name("email") == "custom@email"
    with pytest.deprecated_call():
        assert runtime.activate_skill_by_name("email")[0]
    with pytest.deprecated_call():
        assert runtime.deactivate_skill_by_name("email") == (True, "custom@email")


def test_activated_content_lists_documents_and_resources_fresh_from_disk(registry, tmp_path):
    runtime = runtime_for(registry, tmp_path)
    runtime.set_visible_skills(["custom@report", "email"])
    runtime.set_activated_skills(["custom@report", "email"])
    xml = runtime.activated_skill_content_xml()
    assert xml.count("<skill_content") == 2
    assert '<skill_content name="report" id="custom@report">' in xml
    assert "<file>references/style.md</file>" in xml and "<file>SKILL.md</file>" not in xml
    (tmp_path / "team" / "report" / "references" / "new.md").write_text("x")
    assert "<file>references/new.md</file>" in runtime.activated_skill_content_xml()


def test_documents_and_files_only_of_visible_skills(registry, tmp_path):
    runtime = runtime_for(registry, tmp_path)
    runtime.set_visible_skills(["custom@report"])
    assert runtime.read_skill_file("custom@report", "references/style.md") == "Be brief."
    assert runtime.read_skill_file("email", "scripts/send.py") == ""
    assert runtime.load_skill_doc("email") == ""
    assert runtime.load_skill_doc("custom@report").startswith("---")
    for escape in ("../email/SKILL.md", "/etc/passwd", "%2e%2e/email/SKILL.md", "references/\x00x"):
        assert runtime.read_skill_file("custom@report", escape) == ""
    spans = [span for span in runtime.trace_writer.records if span["name"] == "skill.read_file"]
    assert len(spans) == 6
    escapes = [span for span in spans if span["attributes"]["file.path"] in ("../email/SKILL.md", "/etc/passwd")]
    assert {span["status"]["message"] for span in escapes} == {"path is not inside the skill"}


def test_real_paths_are_those_the_os_resolves(tmp_path, monkeypatch):
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "file.txt").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    (tmp_path / "chain").symlink_to(tmp_path / "link" / "sub")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    monkeypatch.chdir(tmp_path)
    for path in (
        tmp_path / "dir",
        tmp_path / "link" / "file.txt",
        f"{tmp_path}/link//sub/",
        tmp_path / "chain",
        tmp_path / "dangling",
        tmp_path / "dangling" / "below",
        tmp_path / "loop",
        f"{tmp_path}/dir/file.txt/",
        tmp_path / "missing" / "deeper",
        "link/file.txt",
        ".",
        "/",
    ):
        assert real_path(path) == os.path.realpath(path), path


def test_only_writers_that_keep_spans_are_enabled(tmp_path):
    class Collecting(NullTraceWriter):
        def emit(self, record):
            pass

    assert not NullTraceWriter().enabled and not TraceWriter().enabled
    assert MemoryTraceWriter().enabled and JsonlTraceWriter(tmp_path / "t.jsonl").enabled and Collecting().enabled


def test_resolve_skill_path_by_containment_and_by_segment(registry, tmp_path):
    runtime = runtime_for(registry, tmp_path)
    runtime.set_visible_skills(["custom@report"])
    style = tmp_path / "team" / "report" / "references" / "style.md"
    assert runtime.resolve_skill_path(style) == ("custom@report", "references/style.md")
    assert runtime.resolve_skill_path("/somewhere/skills/report/references/style.md") == (
        "custom@report",
        "references/style.md",
    )
    assert runtime.resolve_skill_path("skills/custom@report/scripts/make.py") == ("custom@report", "scripts/make.py")
    assert runtime.resolve_skill_path("skills/report/references/missing.md") is None
    assert runtime.resolve_skill_path("skills/report/../email/SKILL.md") is None
    assert runtime.resolve_skill_path(tmp_path / "team" / "email" / "SKILL.md") is None


def test_activation_and_reads_are_traced_as_jsonl_spans(registry, tmp_path):
    runtime = AgentSkillRuntime("agent-7", registry)
    runtime.bind_workspace(workspace_root=tmp_path / "ws")
    runtime.set_visible_skills(["email"])
    runtime.activate_skill("email")
    runtime.read_skill_file("email", "scripts/send.py")
    spans = read_spans(tmp_path / "ws" / ".semif" / "skill-trace.jsonl")
    assert [span["name"] for span in spans] == ["skill.activate", "skill.read_file"]
    for span in spans:
        assert len(span["trace_id"]) == 32 and len(span["span_id"]) == 16 and span["parent_span_id"] is None
        assert span["end_time_unix_nano"] >= span["start_time_unix_nano"]
        assert span["status"]["code"] == "OK" and span["resource"]["agent.id"] == "agent-7"
    assert spans[0]["attributes"]["skill.id"] == "custom@email"
    with runtime.trace_writer.span("agent.step") as parent:
        runtime.activate_skill("email")
    nested = read_spans(tmp_path / "ws" / ".semif" / "skill-trace.jsonl")[-2:]
    assert nested[0]["parent_span_id"] == parent.span_id and nested[0]["trace_id"] == parent.trace_id
    assert nested[1]["name"] == "agent.step"


def test_an_unbound_runtime_refuses_to_run_scripts(registry):
    runtime = AgentSkillRuntime(3, registry)
    assert not runtime.is_initialized
    with pytest.raises(RuntimeNotBound):
        runtime.workspace_root()
    with pytest.raises(RuntimeNotBound):
        _ = runtime.fs


@pytest.mark.slow
def test_visibility_over_thousands_of_skills(tmp_path):
    root = tmp_path / "many"
    for index in range(4000):
        make_skill(root, f"skill-{index:04d}", f"name: skill-{index:04d}\ndescription: number {index}")
    registry = SkillCatalog()
    assert len(registry.scan_custom(root)) == 4000
    runtime = AgentSkillRuntime(1, registry)
    runtime.set_visible_skills([f"skill-{index:04d}" for index in range(0, 4000, 2)] + ["custom@skill-0001"])
    assert runtime.visible_skill_count() == 2001
    assert runtime.resolve_skill_id("skill-3998") == "custom@skill-3998"
    assert runtime.resolve_skill_id("skill-3999") == ""
