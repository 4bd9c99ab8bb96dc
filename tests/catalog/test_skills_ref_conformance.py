"""``semif_agent.compat.skills_ref`` against the reference library ``skills-ref`` 0.1.1 itself.

- The reference's own 40 tests run against our module (its sdist is downloaded
  at test time; none of its files are committed).
- Tricky inputs are parsed and validated by both, and must agree.
- ``semif skills validate`` agrees with the reference on every corpus folder,
  and ``semif skills prompt`` prints the same bytes as ``skills-ref to-prompt``.
Without a network the tests that need the reference skip, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.catalog_helpers import SKILLS_REF, cache_dir, corpus_skill_folders, make_skill

from semif_agent.cli._common import SemifGroup
from semif_agent.cli.catalog_cmds import prompt, validate
from semif_agent.compat import skills_ref

SHIM_MODULES = ("__init__", "parser", "validator", "prompt", "models", "errors")


@pytest.fixture(scope="module")
def reference_sdist(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = cache_dir(pytestconfig, tmp_path_factory, "skills-ref-0.1.1-sdist")
    found = sorted(cache.glob("skills_ref-0.1.1.tar.gz"))
    if found:
        return found[0]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--disable-pip-version-check",
            "--quiet",
            SKILLS_REF,
            "-d",
            str(cache),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    found = sorted(cache.glob("skills_ref-0.1.1.tar.gz"))
    if done.returncode != 0 or not found:
        pytest.skip(f"cannot download the {SKILLS_REF} sdist (no network?): {done.stderr.strip()[-300:]}")
    return found[0]


def test_the_reference_test_suite_passes_against_our_module(reference_sdist, tmp_path):
    with tarfile.open(reference_sdist) as archive:
        members = [m for m in archive.getmembers() if m.isfile() and "/tests/" in m.name and m.name.endswith(".py")]
        for member in members:
            member.name = "tests/" + member.name.split("/tests/", 1)[1]
            archive.extract(member, tmp_path, filter="data")
    shim = tmp_path / "shim" / "skills_ref"
    shim.mkdir(parents=True)
    for module in SHIM_MODULES:
        (shim / f"{module}.py").write_text(
            "from semif_agent.compat.skills_ref import *  # noqa: F403\n"
            "from semif_agent.compat.skills_ref import __all__, validate_metadata  # noqa: F401\n"
        )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "shim")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "tests"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert summary.startswith("40 passed"), summary


CASES = {
    "plain": "---\nname: a\ndescription: b\n---\n# Body\n",
    "no-frontmatter": "# nothing\n",
    "unclosed": "---\nname: a\n",
    "dash-in-value": "---\nname: a\ndescription: x---y\n---\nbody",
    "bom": "\ufeff---\nname: a\ndescription: b\n---\n",
    "crlf": "---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\n",
    "typed-scalars": "---\nname: 123\ndescription: true\nmetadata:\n  version: 1.0\n  n: null\n---\n",
    "empty-values": "---\nname:\ndescription: ''\n---\n",
    "flow-map": "---\nname: a\nmetadata: {k: v}\n---\n",
    "flow-seq": "---\nname: a\nallowed-tools: [Read]\n---\n",
    "anchor": "---\nname: &n a\ndescription: *n\n---\n",
    "tag": "---\nname: !!str a\n---\n",
    "duplicate": "---\nname: a\nname: b\n---\n",
    "list": "---\n- a\n- b\n---\n",
    "scalar": "---\njust text\n---\n",
    "empty": "---\n---\nbody",
    "nested-metadata": "---\nname: a\ndescription: b\nmetadata:\n  deep:\n    k: v\n  list:\n    - 1\n---\n",
    "block-scalars": "---\nname: a\ndescription: |\n  line one\n  line two\nlicense: >\n  folded\n  text\n---\n",
    "quotes": '---\nname: \'a\'\ndescription: "say \\"hi\\": <b> & co"\n---\n',
    "tab": "---\nname:\ta\n---\n",
    "comment-only": "---\n# nothing here\n---\n",
    "unicode": "---\nname: навык\ndescription: Ünïcödé ✓\n---\n",
    "long-name": f"---\nname: {'n' * 70}\ndescription: d\ncompatibility: ''\nextra: 1\n---\n",
}

REFERENCE_PROBE = """
import json, sys
from pathlib import Path
from skills_ref.parser import parse_frontmatter, read_properties
from skills_ref.validator import validate
out = {}
for folder in sys.argv[1:]:
    folder = Path(folder)
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    entry = {"validate": validate(folder)}
    try:
        entry["parse"] = list(parse_frontmatter(text))
    except Exception as exc:
        entry["parse"] = [type(exc).__name__, str(exc).split(":")[0]]
    try:
        entry["props"] = read_properties(folder).to_dict()
    except Exception as exc:
        entry["props"] = [type(exc).__name__, str(exc).split(":")[0]]
    out[folder.name] = entry
print(json.dumps(out))
"""


def ours(folder: Path) -> dict:
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    entry: dict = {"validate": skills_ref.validate(folder)}
    try:
        entry["parse"] = list(skills_ref.parse_frontmatter(text))
    except Exception as exc:  # noqa: BLE001 - compared by type and message head
        entry["parse"] = [type(exc).__name__, str(exc).split(":")[0]]
    try:
        entry["props"] = skills_ref.read_properties(folder).to_dict()
    except Exception as exc:  # noqa: BLE001 - the error's type is the result compared
        entry["props"] = [type(exc).__name__, str(exc).split(":")[0]]
    return entry


def test_tricky_inputs_parse_and_validate_as_in_the_reference(reference_python, tmp_path):
    folders = []
    for name, text in CASES.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "SKILL.md").write_bytes(text.encode("utf-8"))
        folders.append(folder)
    done = subprocess.run(
        [str(reference_python), "-c", REFERENCE_PROBE, *map(str, folders)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    reference = json.loads(done.stdout)
    for folder in folders:
        assert _same_text(json.loads(json.dumps(ours(folder)))) == _same_text(reference[folder.name]), folder.name


def _same_text(entry: dict) -> dict:
    """Cut PyYAML's and StrictYAML's own wording after ``Invalid YAML in frontmatter:`` (the one difference)."""
    prefix = "Invalid YAML in frontmatter:"
    entry["validate"] = [prefix if message.startswith(prefix) else message for message in entry["validate"]]
    return entry


def run_cli(*args: str) -> tuple[int, str]:
    group = SemifGroup("skills", commands={"validate": validate, "prompt": prompt})
    result = CliRunner().invoke(group, list(args))
    return result.exit_code, result.output


def test_validate_agrees_with_the_reference_folder_by_folder(reference_python, corpus, tmp_path):
    synthetic = tmp_path / "synthetic"
    make_skill(synthetic, "Upper", "name: Upper\ndescription: d")
    make_skill(synthetic, "no-description", "name: no-description")
    make_skill(synthetic, "extra-field", "name: extra-field\ndescription: d\nmodel: x")
    make_skill(synthetic, "mismatch", "name: other\ndescription: d")
    make_skill(synthetic, "too-long", f"name: too-long\ndescription: {'x' * 1100}")
    make_skill(synthetic, "fine", "name: fine\ndescription: d\nlicense: MIT")
    folders = corpus_skill_folders(corpus) + sorted(synthetic.iterdir())
    done = subprocess.run(
        [
            str(reference_python),
            "-c",
            "import json, sys; from skills_ref import validate; print(json.dumps({p: validate(p) for p in sys.argv[1:]}))",
            *map(str, folders),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    reference = {path: not errors for path, errors in json.loads(done.stdout).items()}
    code, output = run_cli("validate", "--json", *map(str, folders))
    semif = {report["path"]: report["ok"] for report in json.loads(output)}
    assert semif == reference
    assert sum(reference.values()) == len(corpus_skill_folders(corpus)) + 1
    assert code == 1
    code, _ = run_cli("validate", *map(str, corpus_skill_folders(corpus)))
    assert code == 0


def test_prompt_is_byte_identical_to_the_reference(reference_python, corpus, tmp_path):
    special = make_skill(tmp_path, "special", "name: special\ndescription: Use <foo> & \"bar\" 'baz'")
    folders = [*map(str, corpus_skill_folders(corpus)[:6]), str(special / "SKILL.md")]
    cli = Path(reference_python).parent / "agentskills"
    done = subprocess.run([str(cli), "to-prompt", *folders], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    code, output = run_cli("prompt", *folders)
    assert code == 0
    assert output.encode("utf-8") == done.stdout
    assert "&lt;foo&gt; &amp; &quot;bar&quot; &#x27;baz&#x27;" in output
