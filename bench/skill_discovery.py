"""Skill discovery at 10, 100 and 1,000 skills: prompt tokens per turn, and how often the right skill is offered.

    .venv/bin/python bench/skill_discovery.py [--sizes 10 100 1000] [--budget 2000] [--engines local lexical]

The skills are the real SKILL.md corpus (``../shared/skills-corpus`` from the
repository root, 24 skills) plus generated ones (an action on a kind of
object, so neighbours are easy to confuse: "review PDF contracts" next to
"summarize PDF contracts" and "review Terraform modules"), written as
SKILL.md folders. For every skill there is one request: the first sentence
of its description, with about a third of its words dropped and a few
neighbours swapped (seeded, so runs are reproducible).

Methods, per turn:

- ``reference``: the Agent Skills reference listing (``skills-ref``'s
  ``to_prompt``: every skill's name, description and location), as
  :func:`semif_agent.compat.skills_ref.to_prompt` renders it (the same bytes).
- ``client cut``: the popular clients' behaviour: the same listing, with the
  skills past a character budget (15,000) dropped.
- ``ours``: an :class:`~semif_agent.agent.Agent` with the skills
  (``with_skills_directory``) and a skill prompt budget; the request runs a
  real turn against the scripted provider, and what the model was sent is
  measured: the system prompt (budgeted listing, tree categories, shortlist
  for the message) plus the schemas of the skill tools (``activate_skill``
  with its enum, ``browse_skills``, ``search_skills``).

"Offered" means the right skill's name is in what the model is shown that
turn (listed, or shortlisted). For ours, "search" is how often one
``search_skills`` call with the request would return it (the 8 results the
tool gives). Tokens are estimated at four characters a token for every
method. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from semif_agent.agent import Agent
from semif_agent.agent.usage import estimate_json_tokens, estimate_tokens
from semif_agent.catalog import SkillCatalog as Catalog
from semif_agent.catalog import SkillCatalogWarning
from semif_agent.compat.skills_ref import to_prompt
from semif_agent.engine import local_available
from semif_agent.llm import ScriptedProvider

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "fixtures" / "skills-corpus"
CLIENT_CHARS = 15_000
SEED = 7

OBJECTS = [
    ("invoices", "customer invoices and billing statements"),
    ("payroll", "payroll runs and payslips"),
    ("k8s-manifests", "Kubernetes manifests and Helm charts"),
    ("terraform", "Terraform modules and cloud infrastructure code"),
    ("sql-schemas", "PostgreSQL schemas and database migrations"),
    ("react-components", "React components and UI state"),
    ("jira-tickets", "Jira tickets and sprint boards"),
    ("slack-threads", "Slack threads and channel messages"),
    ("figma-designs", "Figma designs and design tokens"),
    ("pdf-contracts", "PDF contracts and signed agreements"),
    ("spreadsheets", "Excel workbooks and spreadsheet formulas"),
    ("csv-exports", "CSV exports and tabular data dumps"),
    ("docker-images", "Docker images and container builds"),
    ("ci-workflows", "GitHub Actions workflows and CI pipelines"),
    ("openapi-specs", "OpenAPI specifications and REST endpoints"),
    ("s3-buckets", "S3 buckets and object storage policies"),
    ("dns-records", "DNS records and domain settings"),
    ("tls-certs", "TLS certificates and key rotation"),
    ("unit-tests", "unit tests and test fixtures"),
    ("release-notes", "release notes and changelogs"),
    ("meeting-notes", "meeting notes and action items"),
    ("podcasts", "podcast episodes and audio transcripts"),
    ("product-photos", "product photos and image assets"),
    ("newsletters", "marketing newsletters and email campaigns"),
    ("support-tickets", "customer support tickets and help-desk replies"),
    ("forecasts", "sales forecasts and pipeline reports"),
    ("expenses", "expense reports and receipts"),
    ("tax-filings", "tax filings and VAT returns"),
    ("ndas", "non-disclosure agreements and legal clauses"),
    ("papers", "research papers and citations"),
    ("notebooks", "Jupyter notebooks and data analyses"),
    ("dashboards", "Grafana dashboards and metrics panels"),
    ("logs", "application log files and stack traces"),
    ("alerts", "Prometheus alerts and on-call pages"),
    ("screenshots", "mobile app screenshots and store listings"),
    ("i18n-files", "translation files and locale strings"),
    ("seo-metadata", "SEO metadata and page titles"),
    ("a11y", "accessibility audits and ARIA labels"),
    ("calendars", "team calendars and meeting invites"),
    ("recipes", "cooking recipes and meal plans"),
    ("flights", "flight bookings and travel itineraries"),
    ("resumes", "resumes and job applications"),
]
ACTIONS = [
    ("draft", "Draft new {o} from a short brief"),
    ("review", "Review {o} for mistakes and risky changes"),
    ("summarize", "Summarize {o} into a short briefing"),
    ("convert", "Convert {o} into another format"),
    ("validate", "Validate {o} against the team's rules"),
    ("migrate", "Migrate {o} to the latest version"),
    ("search", "Search across {o} for a specific item"),
    ("clean", "Clean up and normalise {o}"),
    ("compare", "Compare two versions of {o} and explain the differences"),
    ("audit", "Audit {o} for compliance problems"),
    ("translate", "Translate {o} into other languages"),
    ("archive", "Archive old {o} safely"),
    ("debug", "Debug problems in {o} and find the root cause"),
    ("optimize", "Optimize {o} for speed and cost"),
    ("visualize", "Visualize {o} as charts"),
    ("tag", "Tag and categorise {o}"),
    ("export", "Export {o} to a shareable file"),
    ("monitor", "Monitor {o} and report anomalies"),
    ("deduplicate", "Find and merge duplicate {o}"),
    ("redact", "Redact personal data from {o}"),
    ("estimate", "Estimate the effort behind {o}"),
    ("schedule", "Schedule recurring work on {o}"),
    ("backup", "Back up {o} and test the restore"),
    ("lint", "Lint {o} for style problems"),
]


@dataclass
class Case:
    name: str
    request: str


def generated(count: int) -> list[tuple[str, str]]:
    pairs = [(a, o) for o in OBJECTS for a in ACTIONS]
    random.Random(SEED).shuffle(pairs)
    skills = []
    for (verb, phrase), (slug, objects) in pairs[:count]:
        first = phrase.format(o=objects)
        skills.append((f"{verb}-{slug}", f"{first}. Use when the user asks to {verb} {objects.split(' and ')[0]}."))
    if len(skills) < count:
        raise SystemExit(f"the generator makes at most {len(pairs)} skills")
    return skills


def write(root: Path, name: str, description: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{description}\n", encoding="utf-8"
    )
    return folder


def paraphrase(description: str, rng: random.Random) -> str:
    first = re.split(r"(?<=[.!?])\s+", " ".join(description.split()))[0]
    words = first.rstrip(".").split()
    kept = [w for w in words if rng.random() > 0.33] or words[:4]
    for _ in range(2):
        if len(kept) > 3:
            i = rng.randrange(len(kept) - 1)
            kept[i], kept[i + 1] = kept[i + 1], kept[i]
    return " ".join(kept).strip(" ,;:-").lower()


def build_set(size: int, tmp: Path) -> tuple[list[Path], list[Case]]:
    """Skill folders for ``size`` skills (the corpus first) and one request per skill."""
    catalog = Catalog()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkillCatalogWarning)
        for source in sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []:
            catalog.scan_custom(source)
    corpus = sorted(catalog.list_all(), key=lambda d: d.name)[:size]
    root = tmp / f"skills-{size}"
    folders = [write(root / "corpus", d.name, d.description) for d in corpus]
    descriptions = {d.name: d.description for d in corpus}
    for name, description in generated(size - len(corpus)):
        folders.append(write(root / "generated", name, description))
        descriptions[name] = description
    rng = random.Random(SEED + size)
    cases = [Case(f.name, paraphrase(descriptions[f.name], rng)) for f in folders]
    return folders, cases


def reference(folders: list[Path], cases: list[Case]) -> dict[str, float]:
    text = to_prompt(folders)
    return {
        "tokens": estimate_tokens(text),
        "offered": 100.0 * sum(f"<name>\n{c.name}\n</name>" in text for c in cases) / len(cases),
    }


def client_cut(folders: list[Path], cases: list[Case]) -> dict[str, float]:
    blocks = to_prompt(folders).split("<skill>\n")
    kept, size = [blocks[0]], len(blocks[0])
    for block in blocks[1:]:
        if size + len(block) + 7 > CLIENT_CHARS:
            break
        kept.append(block)
        size += len(block) + 7
    text = "<skill>\n".join(kept)
    offered = sum(f"<name>\n{c.name}\n</name>" in text for c in cases)
    return {
        "tokens": estimate_tokens(text),
        "offered": 100.0 * offered / len(cases),
        "dropped": len(blocks) - len(kept),
    }


def ours(folders: list[Path], cases: list[Case], budget: int, engine: str) -> dict[str, float]:
    provider = ScriptedProvider(default="ok")
    agent = Agent(llm=provider).with_skill_discovery(prompt_budget=budget, engine=engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkillCatalogWarning)
        for parent in sorted({f.parent for f in folders}):
            agent.with_skills_directory(parent)
    started = time.perf_counter()
    list(agent.stream("warm up"))  # embeds the skills and builds the tree once (cached on disk after)
    setup = time.perf_counter() - started
    tokens = offered = found = 0
    started = time.perf_counter()
    for case in cases:
        agent.clear_history()
        list(agent.stream(case.request))
        request = provider.requests[-1]
        system = request.messages[0].content if request.messages[0].role == "system" else ""
        tokens += estimate_tokens(system) + sum(
            estimate_tokens(t.name) + estimate_tokens(t.description) + estimate_json_tokens(t.input_schema)
            for t in request.tools
        )
        offered += f"- {case.name}:" in system
    per_turn = (time.perf_counter() - started) / len(cases)
    discovery = agent.skills.discovery
    for case in cases:
        found += case.name in {s.name for s in discovery.find(case.request)}
    n = len(cases)
    return {
        "tokens": tokens / n,
        "offered": 100.0 * offered / n,
        "search": 100.0 * found / n,
        "turn_ms": per_turn * 1000,
        "setup_s": setup,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--budget", type=int, default=2000, help="our skill prompt budget, in tokens")
    parser.add_argument("--engines", nargs="+", default=["local", "lexical"])
    args = parser.parse_args()
    engines = [e for e in args.engines if e != "local" or local_available()]
    if not CORPUS.is_dir():
        print(f"note: no corpus at {CORPUS}; generated skills only", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory(prefix="semif-bench-discovery-") as tmp:
        for size in args.sizes:
            folders, cases = build_set(size, Path(tmp))
            ref = reference(folders, cases)
            cut = client_cut(folders, cases)
            rows.append((size, "reference listing (skills-ref to_prompt)", ref["tokens"], ref["offered"], None, ""))
            rows.append(
                (
                    size,
                    f"client cut at {CLIENT_CHARS:,} chars",
                    cut["tokens"],
                    cut["offered"],
                    None,
                    f"{cut['dropped']} skills dropped",
                )
            )
            for engine in engines:
                mine = ours(folders, cases, args.budget, engine)
                rows.append(
                    (
                        size,
                        f"ours, budget {args.budget}, {engine}",
                        mine["tokens"],
                        mine["offered"],
                        mine["search"],
                        f"{mine['turn_ms']:.1f} ms/turn, first turn {mine['setup_s']:.1f} s",
                    )
                )
    print("Skill discovery: one request per skill (a paraphrased first sentence); tokens ~ 4 characters each\n")
    print(f"{'skills':>6}  {'method':42} {'tokens/turn':>11} {'offered':>8} {'search':>7}  notes")
    for size, method, tokens, offered, search, notes in rows:
        search_text = f"{search:6.1f}%" if search is not None else "      -"
        print(f"{size:>6}  {method:42} {tokens:>11,.0f} {offered:7.1f}% {search_text}  {notes}")


if __name__ == "__main__":
    main()
