"""What the command line prints counts its nouns in the right number ("1 label", "3 labels") with the one shared
helper, never "label(s)" nor an ending picked by hand: each command's text is read for both."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import semif_agent.cli

CLI = Path(semif_agent.cli.__file__).parent
EITHER_NUMBER = re.compile(r"[a-z]\((s|es)\)")


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _ending_by_hand(node: ast.AST) -> bool:
    """``'s' if n != 1 else ''`` and the like: a plural ending chosen in place."""
    if not isinstance(node, ast.IfExp):
        return False
    sides = [side.value for side in (node.body, node.orelse) if isinstance(side, ast.Constant)]
    return "s" in sides or "es" in sides


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_no_command_prints_a_noun_in_either_number(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    either = [f"line {line}: {text!r}" for line, text in _strings(tree) if EITHER_NUMBER.search(text)]
    by_hand = [f"line {node.lineno}" for node in ast.walk(tree) if _ending_by_hand(node)]
    assert not either, f"{path.name} says a noun in either number; use _text.plural: {either}"
    assert not by_hand, f"{path.name} picks a plural ending by hand; use _text.plural: {by_hand}"


def test_the_check_finds_both_forms() -> None:
    tree = ast.parse("said = f\"{n} skill(s), {m} label{'s' if m != 1 else ''}\"")
    assert [text for _, text in _strings(tree) if EITHER_NUMBER.search(text)] == [" skill(s), "]
    assert sum(map(_ending_by_hand, ast.walk(tree))) == 1
