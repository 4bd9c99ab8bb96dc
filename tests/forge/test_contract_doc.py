"""The contract the code-generation model reads states the name rule the checker applies."""

from __future__ import annotations

import re
from importlib import resources

from semif_agent.catalog.names import NAME_RE
from semif_agent.contract import check_source

BODY = "def predict(ctx, request):\n    return None\n\n\ndef act(ctx, request, prediction):\n    return None\n"


def test_the_contract_states_the_checkers_name_rule() -> None:
    contract = resources.files("semif_agent.forge").joinpath("CONTRACT.md").read_text(encoding="utf-8")
    [row] = [line for line in contract.splitlines() if line.startswith("| `name` |")]
    [pattern] = re.findall(r"`([^`]*\[a-z0-9_\][^`]*)`", row)
    assert pattern == NAME_RE.pattern
    for name, ok in (("email.compose", True), ("docs.word-counter", True), ("Email.compose", False), ("a..b", False)):
        assert bool(re.fullmatch(pattern, name)) is ok, name
        named = [v for v in check_source(BODY, name=name, category="email").violations if v.criterion == 2]
        assert (not named) is ok, name
