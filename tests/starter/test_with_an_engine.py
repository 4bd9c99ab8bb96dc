"""Each skill's manifest examples run end to end with a real (offline) engine, within budget.

Uses the lexical engine, which every installation has.
"""

from __future__ import annotations

from semif_agent.skills import ActionResult, Request

from ._support import NOW, load_body, manifests


class Counting:
    """Passes decisions to ``inner`` and keeps them."""

    def __init__(self, inner):
        self.inner, self.name, self.model, self.calls = inner, inner.name, inner.model, []

    def call(self, request):
        self.calls.append(request)
        return self.inner.call(request)


def test_examples_run_within_budget(ws):
    from semif_agent.engine import create_engine
    from semif_agent.skills import ActionContext

    engine = create_engine("lexical", {})
    for name, manifest in manifests(ws).items():
        body = load_body(ws, name)
        for text in manifest["examples"]:
            counting = Counting(engine)
            ctx = ActionContext(engine=counting, config=ws.skill_config(), write_roots=ws.write_roots, skill=name)
            request = Request(text, meta={"now": NOW})
            result = body.act(ctx, request, body.predict(ctx, request))
            assert isinstance(result, ActionResult) and result.action_log.startswith(f"{name}: ")
            assert len(counting.calls) <= manifest["cost_budget"], (name, text)
