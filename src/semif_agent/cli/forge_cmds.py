"""``semif skills check|new|review``: the contract checker and skill generation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .._text import plural
from ..errors import UserError
from ..workspace import Workspace
from ._common import json_option, print_json, workspace_option
from .workspace_cmds import find_cli_workspace, load_tree, open_workspace

if TYPE_CHECKING:
    from ..forge.generator import Attempt
    from ..llm.protocol import LLMProvider
    from ..tree.manifests import SkillManifest


def provider_for(ws: Workspace, model: str | None) -> LLMProvider:
    """The code model: ``--code-model``, else ``[forge] model``, else the workspace's provider settings."""
    from ..llm.calllog import logged
    from ..llm.engine import build_provider
    from ..llm.settings import provider_table

    settings = ws.engine_settings
    chosen = model or ws.settings.forge.model
    if chosen:
        settings["model"] = chosen
    elif not (settings.get("model") or provider_table(settings).get("model")):
        raise UserError(
            "no code model: pass --code-model PROVIDER/MODEL (e.g. openai/gpt-4o), or set model = "
            '"provider/model" under [forge] (or [engine]) in semif.toml'
        )
    return logged(build_provider(settings), ws, purpose="generate")


def code_model_options(fn: Any) -> Any:
    """``--code-model``, and ``--model``, its older name, kept hidden for a while."""
    fn = click.option(
        "--model", "old_model", metavar="PROVIDER/MODEL", hidden=True, help="Deprecated: use --code-model."
    )(fn)
    return click.option(
        "--code-model",
        metavar="PROVIDER/MODEL",
        help="The model that writes the skill (default: [forge] model, else the workspace's model).",
    )(fn)


def _code_model(code_model: str | None, old_model: str | None) -> str | None:
    """``--code-model``, or the deprecated ``--model`` with a one-line note."""
    if old_model is None:
        return code_model
    if code_model is not None and code_model != old_model:
        raise UserError("give the code model once: --code-model (--model is its older name)")
    click.echo("warning: --model is deprecated here; the code model is --code-model", err=True)
    return old_model


def _manifest_for(target: str, ws: Workspace | None, name: str | None) -> tuple[str, dict[str, Any]]:
    """(source, manifest) for a body file or a skill name of the workspace."""
    from ..tree.tree import SkillTree

    path = Path(target)
    tree = load_tree(ws) if ws is not None else SkillTree()
    if path.suffix == ".py" or path.exists():
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: cannot read ({exc})") from exc
        guess = name or f"{path.parent.name}.{path.stem}"
        known = tree.skills.get(guess)
        manifest = (
            known.to_dict() if known else {"name": guess, "category": guess.split(".")[0] if "." in guess else ""}
        )
        return source, manifest
    skill = tree.get(target)
    if skill.is_stub:
        raise UserError(f"{target} has no body to check (expected {skill.body_path})")
    return _body_file(skill).read_text(encoding="utf-8"), skill.to_dict()


def _body_file(skill: SkillManifest) -> Path:
    """A code skill's body; a SKILL.md skill has none (a clear error, not a crash)."""
    if skill.body_path is None:
        raise UserError(f"{skill.name} is a SKILL.md skill: it has no Python body to check or review")
    return skill.body_path


@click.command("check")
@click.argument("target", metavar="FILE_OR_NAME")
@workspace_option
@click.option("--name", help="The skill's manifest name (default: from the path, data/skills/CATEGORY/LEAF.py).")
@click.option("--no-gate", is_flag=True, help="Skip the behavioural gate (the sample runs).")
@json_option
def check(target: str, workspace: str | None, name: str | None, no_gate: bool, as_json: bool) -> None:
    """Check a skill body against the contract; every violation with its line. Exit 1 if any."""
    from .._sync import run_sync
    from ..forge import acheck_skill
    from ..tree.tree import SkillTree

    ws = find_cli_workspace(workspace)
    source, manifest = _manifest_for(target, ws, name)
    tree = load_tree(ws) if ws is not None else SkillTree()
    report = run_sync(
        acheck_skill(source, manifest, workspace=ws, tree=tree, engine=_engine(ws), gate=not no_gate and ws is not None)
    )
    if as_json:
        print_json(report.to_dict())
    else:
        click.echo(report.render(target))
    if not report.ok:
        raise SystemExit(1)


@click.command("new")
@click.argument("name", metavar="CATEGORY.NAME")
@click.option("--description", required=True, help="What the skill does, in one or two sentences.")
@code_model_options
@click.option("--category-description", help="Create the category if it is new, described so.")
@click.option("--example", "examples", multiple=True, help="A request the skill should serve (repeatable).")
@click.option(
    "--budget", default=3, show_default=True, type=click.IntRange(min=0), help="cost_budget: engine calls per run."
)
@click.option("--attempts", default=3, show_default=True, type=click.IntRange(1, 10), help="Attempts before giving up.")
@workspace_option
@json_option
def new(
    name: str,
    description: str,
    code_model: str | None,
    old_model: str | None,
    category_description: str | None,
    examples: tuple[str, ...],
    budget: int,
    attempts: int,
    workspace: str | None,
    as_json: bool,
) -> None:
    """Have a model write a new code skill; it is admitted only if it passes the contract."""
    from ..forge import make_manifest

    model = _code_model(code_model, old_model)
    ws = open_workspace(workspace)
    manifest = make_manifest(name, description, examples=list(examples), cost_budget=budget)
    generated = _generate(ws, manifest, model, category_description, attempts, [], quiet=as_json)
    if as_json:
        print_json(
            {
                "admitted": True,
                "manifest": generated.manifest,
                "body": str(generated.body_path),
                "attempts": len(generated.attempts),
            }
        )
    else:
        click.echo(f"admitted {name} after {plural(len(generated.attempts), 'attempt')}: {generated.body_path}")


@click.command("review")
@click.argument("name")
@workspace_option
@click.option("--regenerate", is_flag=True, help="Write the body again, feeding its failed runs back to the model.")
@code_model_options
@json_option
def review(
    name: str, workspace: str | None, regenerate: bool, code_model: str | None, old_model: str | None, as_json: bool
) -> None:
    """Show a skill's body, its check report and its run history; optionally regenerate it."""
    from .._sync import run_sync
    from ..forge import acheck_skill
    from ..records import OUTCOME_KIND, DecisionLog, OutcomeRow

    model = _code_model(code_model, old_model)
    ws = open_workspace(workspace)
    tree = load_tree(ws)
    skill = tree.get(name)
    source = _body_file(skill).read_text(encoding="utf-8") if not skill.is_stub else ""
    report = run_sync(acheck_skill(source, skill.to_dict(), workspace=ws, tree=tree, engine=_engine(ws), gate=False))
    logged = DecisionLog.for_workspace(ws).read(kinds=(OUTCOME_KIND,))
    runs = [row for row in logged if isinstance(row, OutcomeRow) and row.skill == name]
    counts = {label: sum(row.outcome == label for row in runs) for label in ("success", "failure", "unclear")}
    failures = [f"{row.request!r}: {row.reason} ({row.action_log})" for row in runs if row.outcome == "failure"]
    if as_json and not regenerate:
        print_json(
            {
                "skill": skill.to_dict(),
                "body": source,
                "check": report.to_dict(),
                "runs": counts,
                "recent_failures": failures[-5:],
            }
        )
        return
    if not as_json:
        click.echo(click.style(f"{name}  ({skill.body_path})", bold=True))
        click.echo(source or "(no body: a stub)")
        click.echo(click.style("check", bold=True) + f"  {report.render(str(skill.body_path))}")
        click.echo(click.style("runs", bold=True) + "   " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        for line in failures[-5:]:
            click.echo(f"  failed: {line}")
    if regenerate:
        feedback = [f"Past runs of this skill failed; make it handle them: {f}" for f in failures[-5:]]
        manifest = {k: v for k, v in skill.to_dict().items() if k not in ("body", "stub")}
        generated = _generate(ws, manifest, model, None, 3, feedback, quiet=as_json)
        if as_json:
            print_json({"regenerated": True, "body": str(generated.body_path), "attempts": len(generated.attempts)})
        else:
            click.echo(f"regenerated {name} after {plural(len(generated.attempts), 'attempt')}")


def _generate(
    ws: Workspace,
    manifest: dict[str, Any],
    model: str | None,
    category_description: str | None,
    attempts: int,
    feedback: list[str],
    *,
    quiet: bool,
):
    from .._sync import run_sync
    from ..forge import GenerationFailed, agenerate_skill
    from ..loop.settings import RunSettings

    def show(attempt: Attempt) -> None:
        if not quiet:
            verdict = "passes" if attempt.report.ok else plural(len(attempt.report.violations), "violation")
            click.echo(f"attempt {attempt.number}: {verdict}", err=True)
            for violation in attempt.report.violations:
                click.echo(f"  {violation.render()}", err=True)

    settings = RunSettings.resolve(ws)
    try:
        return run_sync(
            agenerate_skill(
                ws,
                manifest,
                provider=provider_for(ws, model),
                engine=settings.build_engine(),
                category_description=category_description,
                max_attempts=attempts,
                feedback=feedback,
                log=settings.build_log(),
                on_attempt=show,
            )
        )
    except GenerationFailed as exc:
        raise UserError(str(exc)) from None


def _engine(ws: Workspace | None):
    from ..loop.settings import RunSettings

    return RunSettings.resolve(ws).build_engine() if ws is not None else None


SKILL_COMMANDS = [check, new, review]
