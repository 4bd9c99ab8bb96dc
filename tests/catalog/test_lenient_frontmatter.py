"""Real SKILL.md frontmatter that YAML refuses only for an unquoted colon loads, read as clients read it.

The frontmatters below are copied from published skill packages. A one-line
value holding ``": "`` (``Usage: /a11y-audit [path]``) or starting with a
character YAML reserves (``@Observable``) is read as text to the end of its
line, with a warning on the skill; strict validation still reports the YAML
error; and frontmatter broken in any other way stays out, with its reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.catalog_helpers import make_skill

from semif_agent.catalog.loader import load_skill
from semif_agent.catalog.validate import validate_skill

RECOVERED = {
    # pypi skillpilot 0.3.0, commands/a11y-audit
    "a11y-audit": (
        "name: a11y-audit\n"
        "description: Scan a frontend project for WCAG 2.2 accessibility violations and fix them. "
        "Usage: /a11y-audit [path]",
        "Scan a frontend project for WCAG 2.2 accessibility violations and fix them. Usage: /a11y-audit [path]",
    ),
    # npm specweave 1.0.593, plugins/specweave/skills/team-merge: no name, more keys after the value
    "team-merge": (
        "description: Merge completed parallel agent work and trigger GitHub sync per increment. "
        "Activates for: team merge, merge agents, combine work, team finish.\n"
        "version: 1.0.0",
        "Merge completed parallel agent work and trigger GitHub sync per increment. "
        "Activates for: team merge, merge agents, combine work, team finish.",
    ),
    # pypi claude-data-skills 3.5.3, skills/data-analysis/statsmodels
    "statsmodels": (
        "name: statsmodels\n"
        "description: Use when implementing statistical models for rigorous inference, hypothesis testing, and "
        "diagnostics. CRITICAL: Always check model assumptions and diagnostics before interpreting results.",
        "Use when implementing statistical models for rigorous inference, hypothesis testing, and diagnostics. "
        "CRITICAL: Always check model assumptions and diagnostics before interpreting results.",
    ),
    # npm ecc-universal 2.0.0, docs/ja-JP/skills/swiftui-patterns: '@' cannot start a YAML value
    "swiftui-patterns": (
        "name: swiftui-patterns\n"
        "description: @Observableを使用した状態管理、ビュー合成、ナビゲーション、パフォーマンス最適化。",
        "@Observableを使用した状態管理、ビュー合成、ナビゲーション、パフォーマンス最適化。",
    ),
    # pypi clade-mcp 0.1.0, skills/investigate: quoted and nested values after it are parsed as YAML
    "investigate": (
        "name: investigate\n"
        "description: Root cause analysis skill — diagnose bugs systematically before fixing. Iron Law: no fix "
        "without a confirmed hypothesis.\n"
        'when_to_use: "bug, error, broken, failing, crash, 报错, 修复"\n'
        "argument-hint: '[error message or symptom description]'\n"
        "metadata:\n"
        "  author: evos\n"
        "user_invocable: true",
        "Root cause analysis skill — diagnose bugs systematically before fixing. Iron Law: no fix without a "
        "confirmed hypothesis.",
    ),
}


@pytest.mark.parametrize("folder", sorted(RECOVERED))
def test_an_unquoted_colon_in_a_value_loads_with_a_warning(tmp_path: Path, folder: str) -> None:
    frontmatter, description = RECOVERED[folder]
    skill = make_skill(tmp_path, folder, frontmatter)
    loaded = load_skill(skill, namespace="ws", source="workspace", source_label="skills/")
    assert loaded.skipped == "" and loaded.descriptor is not None
    assert loaded.descriptor.name == folder and loaded.descriptor.description == description
    read_so = [warning for warning in loaded.descriptor.warnings if "read 'description' as plain text" in warning]
    assert len(read_so) == 1 and "frontmatter is not valid YAML (line " in read_so[0]
    if folder == "investigate":
        assert loaded.descriptor.metadata == {"author": "evos"}
    strict = validate_skill(skill)
    assert not strict.ok and strict.errors[0].startswith("line ") and "invalid YAML in frontmatter" in strict.errors[0]
    assert strict.loads and strict.name == folder  # strict validation says the skill loads all the same


LEFT_OUT = {
    # pypi skillforge-agent 1.0.1, skills/gemini/agent-prompt-general-purpose: a nested '- *' is broken YAML
    "agent-prompt": (
        "---\nname: 'Agent Prompt: General purpose'\n"
        "description: System prompt for the general-purpose subagent that searches code\n"
        "agentMetadata:\n  agentType: 'general-purpose'\n  tools:\n    - *\n---\nBody\n",
        "did not find expected alphabetic or numeric character",
    ),
    # npm claude-flow-novice 2.21.0, cfn-mdap-context-injection: never closed, its body would be read as keys
    "unclosed": (
        "---\nname: cfn-mdap-context-injection\ndescription: Inject MDAP codebase files for troubleshooting\n"
        "status: production\n\n# What it does\nOutputs portions: grouped by area.\n",
        "frontmatter is not closed",
    ),
    # npm ecc-universal 2.0.0, docs/zh-TW/skills/verification-loop: no frontmatter at all
    "no-frontmatter": ("# 驗證循環技能\n\nClaude Code 工作階段的完整驗證系統。\n\n## 何時使用\n", "no frontmatter"),
    # a colon-holding value followed by an indented line: a plain value over two lines, not one line of text
    "two-lines": (
        "---\nname: two-lines\ndescription: Review code. Usage: /review\n  continues: here\n---\nBody\n",
        "invalid YAML in frontmatter",
    ),
    # a value that is quoted and broken is YAML's to judge, not text
    "quoted": ('---\nname: quoted\ndescription: "Review code: all of it\nother: x\n---\nBody\n', "invalid YAML"),
}


@pytest.mark.parametrize("folder", sorted(LEFT_OUT))
def test_frontmatter_broken_otherwise_stays_out_with_its_reason(tmp_path: Path, folder: str) -> None:
    text, reason = LEFT_OUT[folder]
    skill = tmp_path / folder
    skill.mkdir()
    (skill / "SKILL.md").write_text(text, encoding="utf-8")
    loaded = load_skill(skill, namespace="ws", source="workspace", source_label="skills/")
    assert loaded.descriptor is None and reason in loaded.skipped
    assert not validate_skill(skill).loads
