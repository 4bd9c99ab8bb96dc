"""``semif run`` and ``find`` agree: the skill a run's route ends at is the one ``find`` puts first, at the probability
``find`` shows for it, on real SKILL.md skills beside the starter's code skills."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from semif_agent import Router
from semif_agent._sync import run_sync
from semif_agent.engine import local_available
from semif_agent.loop.settings import RunSettings
from semif_agent.starter import create_workspace

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "skills-corpus"
REQUESTS = [json.loads(line) for line in (ROOT / "bench" / "data" / "skill_requests.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def router(tmp_path_factory) -> Router:
    root = create_workspace(tmp_path_factory.mktemp("agree") / "ws")
    for collection in ("superpowers", "openai-skills"):
        for folder in (CORPUS / collection).iterdir():
            if (folder / "SKILL.md").is_file():
                shutil.copytree(folder, root / "skills" / folder.name)
    found = Router(root, rerank=False)
    found.settings = RunSettings.resolve(found.workspace, log=False)
    return found


def test_a_run_goes_where_find_puts_its_first_skill_at_the_probability_find_shows(router: Router) -> None:
    # the requests written for the corpus' skills in users' words: the route scored its leaves one way (the cosine
    # with BM25 near the best) and find another (the two fused over every leaf); 8 of the 72 routes ended at
    # another skill than find's first, and none at the probability find showed
    texts = [row["text"] for row in REQUESTS if row["set"] == "corpus"]
    assert len(texts) >= 70
    apart = []
    for text in texts:
        shortlist = router.find(text, 3)
        first = shortlist.skills[0]
        found = (first.name, round(first.probability, 4)) if first.probability > shortlist.none else (None, None)
        route = run_sync(router.runner.strategy.aroute(text))
        ended = (None, None)
        if route.skill is not None:
            ended = (route.skill.name, round(route.decisions[-1].result.probabilities[route.skill.name], 4))
        if ended != found:
            apart.append((text, ended, found))
    assert apart == []
