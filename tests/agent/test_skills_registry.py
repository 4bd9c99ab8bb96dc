"""The agent's SkillRegistry: the seed's methods, over the SKILL.md catalog and the per-agent runtime (one mechanism)."""

from __future__ import annotations

import json
import warnings

import pytest
from pydantic import ValidationError

from semif_agent.agent import (
    AgentConfigError,
    Skill,
    SkillNameCollisionError,
    SkillNotRegisteredError,
    SkillRegistry,
    ToolNameCollisionError,
    tool,
)
from semif_agent.catalog import SkillCatalog as Catalog
from semif_agent.catalog import SkillCatalogWarning
from semif_agent.errors import SemifError

from ._skill_support import CORPUS, write_skill


@tool
def convert(path: str) -> str:
    """Convert a spreadsheet."""
    return path


@tool(name="convert")
def convert_again(path: str) -> str:
    """Convert something else."""
    return path


def on_demand(name: str, *tools, **fields) -> Skill:
    return Skill(name=name, description=f"The {name} skill.", activation="on_demand", tools=tools, **fields)


def test_skill_has_the_seed_fields_and_the_skill_md_fields():
    skill = Skill(
        name="sheets",
        description="Spreadsheets.",
        instructions="Keep headers.",
        tools=(convert,),
        activation="on_demand",
        tags=("office",),
        license="MIT",
        compatibility="python 3.11",
        metadata={"owner": "ops"},
        allowed_tools=("Read",),
    )
    assert skill.activation == "on_demand" and skill.tool_names == ("convert",) and skill.path is None
    assert Skill(name="x", description="X.").activation == "always"  # the seed's default
    with pytest.raises(ValidationError):
        Skill(name="two words", description="X.")
    with pytest.raises(ValidationError):
        Skill(name="x", description="  ")
    with pytest.raises(ValidationError, match="several tools named convert"):
        Skill(name="x", description="X.", tools=(convert, convert_again))


def test_from_path_reads_the_skill_md_fields(tmp_path):
    folder = write_skill(
        tmp_path,
        "pdf-tools",
        "Fill PDF forms.",
        "# PDF\n\nUse pdftk.",
        extra="license: Apache-2.0\ncompatibility: needs pdftk\nmetadata:\n  author: me\nallowed-tools: Read Bash(pdftk:*)",
    )
    skill = Skill.from_path(folder)
    assert (skill.name, skill.description, skill.activation) == ("pdf-tools", "Fill PDF forms.", "on_demand")
    assert skill.instructions == "# PDF\n\nUse pdftk."
    assert (skill.license, skill.compatibility, dict(skill.metadata)) == ("Apache-2.0", "needs pdftk", {"author": "me"})
    assert skill.allowed_tools == ("Read", "Bash(pdftk:*)") and skill.path == folder.resolve()


def test_register_refuses_a_taken_name_with_a_value_error_of_our_tree():
    registry = SkillRegistry()
    registry.register(on_demand("sheets"))
    with pytest.raises(SkillNameCollisionError) as caught:
        registry.register(on_demand("sheets"))
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, AgentConfigError)
    assert isinstance(caught.value, SemifError)
    with pytest.raises(AgentConfigError):
        registry.register("sheets")  # type: ignore[arg-type]  # a bad argument on purpose


def test_activation_deactivation_reset_and_lookups():
    registry = SkillRegistry()
    base = Skill(name="base", description="Always there.", instructions="Be brief.")
    registry.register(base)
    registry.register(on_demand("sheets", convert))
    assert registry.get("sheets").name == "sheets" and registry.get("nope") is None
    assert registry.is_active("base") and not registry.is_active("sheets") and not registry.is_active("nope")
    assert [s.name for s in registry.on_demand_skills()] == ["sheets"]
    assert registry.active_tools() == []
    assert registry.activate("sheets").name == "sheets"
    assert registry.is_active("sheets") and [t.name for t in registry.active_tools()] == ["convert"]
    registry.deactivate("sheets")
    assert not registry.is_active("sheets")
    registry.deactivate("base")  # always-on skills stay active
    assert registry.is_active("base")
    registry.activate("sheets")
    registry.reset()
    assert not registry.is_active("sheets") and registry.is_active("base") and len(registry) == 2
    with pytest.raises(KeyError) as caught:
        registry.activate("nope")
    assert (
        isinstance(caught.value, SkillNotRegisteredError) and str(caught.value) == "no skill named 'nope' is registered"
    )


def test_two_active_skills_with_one_tool_name_are_a_value_error():
    registry = SkillRegistry()
    registry.register(on_demand("a", convert))
    registry.register(on_demand("b", convert_again))  # sharing a name is fine while only one is active
    registry.activate("a")
    with pytest.raises(ToolNameCollisionError, match="'convert' is provided by both active skills 'a' and 'b'"):
        registry.activate("b")
    assert not registry.is_active("b")  # refused, not half-activated
    registry.deactivate("a")
    registry.activate("b")
    assert [t.fn for t in registry.active_tools()] == [convert_again.fn]


def test_discovery_prompt_is_empty_without_on_demand_skills():
    registry = SkillRegistry()
    registry.register(Skill(name="base", description="Always there."))
    assert registry.skill_discovery_prompt() == ""
    registry.register(on_demand("sheets"))
    assert "- sheets: The sheets skill." in registry.skill_discovery_prompt()


def test_python_and_skill_md_skills_live_in_one_catalog_and_one_runtime(tmp_path):
    write_skill(tmp_path / "skills", "pdf-tools", "Fill PDF forms.")
    registry = SkillRegistry()
    registry.register(on_demand("sheets", instructions="Keep headers."))
    assert registry.load_directory(tmp_path / "skills") == ["pdf-tools"]
    catalog, runtime = registry.catalog, registry.runtime
    assert isinstance(catalog, Catalog)
    assert {d.skill_id for d in catalog.list_all()} == {"python@sheets", "custom@pdf-tools"}
    assert runtime.visible_skill_ids() == {"python@sheets", "custom@pdf-tools"}
    registry.activate("sheets")
    registry.activate("pdf-tools")
    assert runtime.activated_skill_ids() == {"python@sheets", "custom@pdf-tools"}
    content = registry.instructions_prompt()
    assert content == runtime.activated_skill_content_xml()
    assert "Keep headers." in content and "Do pdf-tools things." in content
    runtime.deactivate_skill("custom@pdf-tools")  # the runtime's state is the registry's state
    assert not registry.is_active("pdf-tools")


def test_activation_is_per_agent_over_a_shared_catalog():
    catalog = Catalog()
    first, second = SkillRegistry(catalog=catalog), SkillRegistry(catalog=catalog)
    skill = on_demand("sheets")
    first.register(skill)
    second.register(skill)  # the same skill: one catalog entry
    assert len(catalog) == 1
    first.activate("sheets")
    assert first.is_active("sheets") and not second.is_active("sheets")
    with pytest.raises(SkillNameCollisionError, match="another skill 'python@sheets'"):
        SkillRegistry(catalog=catalog).register(on_demand("sheets", instructions="Different."))


def test_state_round_trips_through_the_runtime_state(tmp_path):
    def build() -> SkillRegistry:
        registry = SkillRegistry(agent_id="agent-7")
        registry.register(Skill(name="base", description="Always."))
        registry.register(on_demand("sheets"))
        registry.register(on_demand("mail"))
        return registry

    saved = build()
    saved.activate("sheets")
    state = json.loads(json.dumps(saved.to_state()))
    assert (
        state["runtime"]["activated"] == ["python@base", "python@sheets"] and state["runtime"]["agent_id"] == "agent-7"
    )
    restored = build()
    restored.load_state(state)
    assert restored.is_active("sheets") and not restored.is_active("mail") and restored.is_active("base")
    smaller = SkillRegistry()
    smaller.register(on_demand("mail"))
    smaller.load_state(state)  # skills it does not have are dropped, its own stay visible
    assert smaller.runtime.visible_skill_ids() == {"python@mail"} and not smaller.is_active("mail")


@pytest.mark.filterwarnings("ignore::semif_agent.catalog.SkillCatalogWarning")
def test_a_directory_loads_leniently_and_never_twice(tmp_path):
    root = tmp_path / "skills"
    write_skill(root / "team-a", "good", "A good skill.")
    (root / "team-a" / "broken").mkdir(parents=True)
    (root / "team-a" / "broken" / "SKILL.md").write_text("no frontmatter here\n", encoding="utf-8")
    write_skill(root / "team-b", "other", "Another skill.")
    registry = SkillRegistry()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.load_directory(root) == ["good", "other"]
    assert any(issubclass(w.category, SkillCatalogWarning) and "broken" in str(w.message) for w in caught)
    assert registry.load_directory(root) == []  # already registered: nothing new
    assert registry.load_directory(root / "team-a" / "good") == []
    with pytest.raises(SemifError, match="no such folder"):
        registry.load_directory(tmp_path / "missing")


def test_a_directory_loaded_after_one_of_its_skills_still_says_what_it_left_out(tmp_path):
    root = tmp_path / "skills"
    write_skill(root / "team-a", "first", "The first skill.")
    write_skill(root / "team-b", "second", "The second skill.")
    elsewhere = tmp_path / "elsewhere"
    write_skill(elsewhere, "planted", "A skill kept elsewhere.")
    (root / "door").symlink_to(elsewhere, target_is_directory=True)
    registry = SkillRegistry()
    assert registry.load_directory(root / "team-a" / "first") == ["first"]
    with pytest.warns(SkillCatalogWarning, match="door: skipped: a link out of the skills folder"):
        assert registry.load_directory(root) == ["second"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared skills corpus is not beside this checkout")
def test_the_real_corpus_loads_whole():
    registry = SkillRegistry()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkillCatalogWarning)
        names = registry.load_directory(CORPUS)
    assert len(names) == len({p.parent for p in CORPUS.glob("*/*/SKILL.md")}) == len(registry)
    assert all(s.activation == "on_demand" and s.instructions for s in registry.skills())
