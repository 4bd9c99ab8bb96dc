"""Every check switched off in the code says which check and why: ``# noqa: CODE - why``, ``# type: ignore[code]  # why``."""

from __future__ import annotations

import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOQA = re.compile(r"#\s*noqa\b(?P<rest>.*)$", re.IGNORECASE)
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")


def comments(path: Path) -> list[tuple[int, str]]:
    """The comments of a Python file, with their line numbers (strings that look like comments are not comments)."""
    found = []
    with path.open("rb") as handle:
        for token in tokenize.tokenize(handle.readline):
            if token.type == tokenize.COMMENT:
                found.append((token.start[0], token.string))
    return found


def unexplained(path: Path, root: Path = ROOT) -> list[str]:
    """The suppressions in ``path`` that name no check or give no reason, as ``file:line: comment``."""
    bad = []
    for line, comment in comments(path):
        noqa = NOQA.search(comment)
        if noqa is not None:
            rest = noqa.group("rest")
            named = re.match(r"\s*:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)\s*(?:[-—:]\s*)?(.*)$", rest)
            if named is None or not named.group(2).strip():
                bad.append(f"{path.relative_to(root)}:{line}: {comment.strip()}")
        ignore = IGNORE.search(comment)
        if ignore is not None:
            rest = ignore.group("rest")
            named = re.match(r"\[[a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*\]\s*(?:#\s*|[-—]\s*)(.+)$", rest)
            if named is None or not named.group(1).strip():
                bad.append(f"{path.relative_to(root)}:{line}: {comment.strip()}")
    return bad


def python_files() -> list[Path]:
    return [
        p
        for folder in ("src", "tests", "bench")
        for p in sorted((ROOT / folder).rglob("*.py"))
        if "fixtures" not in p.relative_to(ROOT).parts
    ]


def test_every_suppression_names_its_check_and_says_why() -> None:
    bad = [entry for path in python_files() for entry in unexplained(path)]
    assert not bad, "a suppression without its check or its reason:\n" + "\n".join(bad)


def test_the_rule_catches_what_it_should(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os  # noqa\n"
        "import re  # noqa: F401\n"
        "import sys  # noqa: F401 - kept for the plugin\n"
        "x: int = 'a'  # type: ignore\n"
        "y: int = 'b'  # type: ignore[assignment]\n"
        "z: int = 'c'  # type: ignore[assignment]  # the value is patched at start\n"
        "s = '# noqa'\n",
        encoding="utf-8",
    )
    lines = [entry.split(":")[1] for entry in unexplained(sample, tmp_path)]
    assert lines == ["1", "2", "4", "5"]  # the string on line 7 is not a comment
