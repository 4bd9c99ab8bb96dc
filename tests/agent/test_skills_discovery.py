"""Discovery at scale: a budgeted listing, the skill tree, search, a shortlist per message; no skill ever hidden."""

from __future__ import annotations

import asyncio
import re

import pytest

from semif_agent.agent import Agent, AgentConfigError, DiscoverySettings, Skill, SkillRegistry
from semif_agent.engine import local_available
from semif_agent.llm import ScriptedProvider

from ._skill_support import system_of, tool_names
from ._support import calls, collect, of_type

TOPICS = (
    "invoices payroll kubernetes terraform photos podcasts recipes flights hotels contracts spreadsheets slides "
    "calendars emails backups certificates dns firewalls graphql grpc kafka ledgers mortgages newsletters "
    "passwords quizzes receipts resumes sitemaps subtitles taxes tickets translations tweets uploads vaccines "
    "warehouses webhooks wikis xml yaml zipfiles budgets carpools diagrams essays forecasts glossaries "
    "heatmaps interviews journals keyboards lectures maps notebooks orchestras playlists quotas roadmaps "
    "sensors telescopes"
).split()


def many_skills(count: int) -> list[Skill]:
    return [
        Skill(
            name=f"{topic}-helper",
            activation="on_demand",
            description=f"Create, check and organise {topic}. Use when the user works with {topic}.",
        )
        for topic in TOPICS[:count]
    ]


def lexical_agent(provider, count: int = 60, **settings) -> Agent:
    settings.setdefault("prompt_budget", 400)
    return Agent(llm=provider).with_skills(many_skills(count)).with_skill_discovery(engine="lexical", **settings)


def listed_names(text: str) -> set[str]:
    return set(re.findall(r"^- ([\w-]+-helper):", text, re.M))


def test_every_skill_is_listed_when_all_fit():
    provider = ScriptedProvider(["ok"])
    collect(Agent(llm=provider).with_skills(many_skills(10)).stream("hello"))
    request = provider.requests[0]
    assert listed_names(system_of(request)) == {s.name for s in many_skills(10)}
    assert "not all of them are listed" not in system_of(request)
    assert tool_names(request) == ["activate_skill"]  # no browse or search needed
    assert len(request.tools[0].input_schema["properties"]["name"]["enum"]) == 10


def test_past_the_budget_the_prompt_says_how_to_reach_every_skill():
    provider = ScriptedProvider(["ok"])
    agent = lexical_agent(provider)
    collect(agent.stream("Please help me organise my mortgages"))
    request = provider.requests[0]
    system = system_of(request)
    skills_part = system[system.index("## Skills") :]
    assert len(skills_part) // 4 <= 400 + 10  # within the budget (an estimate, 4 characters a token)
    assert "You have 60 skills; not all of them are listed here." in system
    assert "Categories (browse_skills(category) lists a category's skills):" in system
    listed = listed_names(system)
    unlisted = int(re.search(r"\((\d+) skills are not listed here", system).group(1))
    assert len(listed) + unlisted == 60  # nothing silently dropped: the rest is counted and reachable
    assert tool_names(request) == ["activate_skill", "browse_skills", "search_skills"]
    enum = request.tools[0].input_schema["properties"]["name"]["enum"]
    assert set(enum) == listed  # the enum is what the model was shown, not 60 names


def test_the_shortlist_for_the_message_comes_first():
    provider = ScriptedProvider(["ok"])
    collect(lexical_agent(provider).stream("I need to sort out my mortgages"))
    system = system_of(provider.requests[0])
    shortlist = system[system.index("Likely skills for this request:") :]
    assert shortlist.splitlines()[1].startswith("- mortgages-helper:")


def test_browsing_the_tree_reaches_every_skill():
    registry = SkillRegistry(discovery=DiscoverySettings(prompt_budget=300, engine="lexical"))
    for skill in many_skills(60):
        registry.register(skill)
    listing = registry.discovery.listing()
    assert listing.overflow and listing.total == 60
    seen: set[str] = set()

    def walk(category: str) -> None:
        text = registry.discovery.browse(category)
        seen.update(listed_names(text))
        for child in re.findall(
            r"^- (\S+) \(\d+ skills\):", text.split("Subcategories:")[-1] if category else text, re.M
        ):
            walk(child)

    walk("")
    assert seen == {s.name for s in many_skills(60)}
    assert registry.discovery.discovered == seen  # what browsing showed joins the activate_skill enum
    with pytest.raises(ValueError, match="no category 'nope'"):
        registry.discovery.browse("nope")


def test_search_then_activate_a_skill_that_was_not_listed():
    provider = ScriptedProvider(
        [
            calls(("search_skills", {"query": "telescopes"})),
            calls(("activate_skill", {"name": "telescopes-helper"})),
            "done",
        ]
    )
    agent = lexical_agent(provider, count=61, prompt_budget=250, shortlist=0)
    events = collect(agent.stream("hello"))
    first, second, _ = provider.requests
    assert "telescopes-helper" not in system_of(first)
    found, activated = of_type(events, "tool_finished")
    assert found.result.splitlines()[1].startswith("- telescopes-helper:")
    assert "telescopes-helper" in second.tools[0].input_schema["properties"]["name"]["enum"]
    assert not activated.is_error and agent.skills.is_active("telescopes-helper")


def test_settings_are_checked():
    with pytest.raises(AgentConfigError):
        DiscoverySettings(prompt_budget=0)
    with pytest.raises(AgentConfigError):
        Agent(llm=ScriptedProvider()).with_skill_discovery(shortlist=-1)


@pytest.mark.skipif(not local_available(), reason="the embedded model is not installed")
def test_with_the_local_model_the_tree_is_clustered_and_paraphrases_are_shortlisted():
    registry = SkillRegistry(discovery=DiscoverySettings(prompt_budget=300, shortlist=3))
    for skill in many_skills(61):
        registry.register(skill)
    shortlist = asyncio.run(registry.discovery.preselect("my home loan repayments are confusing"))
    assert "mortgages-helper" in shortlist
    listing = registry.discovery.listing(shortlist)
    assert "- mortgages-helper:" in listing.text and "mortgages-helper" in listing.offered
    top = registry.discovery.browse("")
    assert "_to_" not in top  # clustered and named by their words, not name ranges
    assert "telescopes-helper" in [s.name for s in registry.discovery.search("star gazing equipment", 3)]
