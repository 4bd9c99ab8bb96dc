"""A router many callers ask at once: their requests embedded together, a tree switched whole while finds go on."""

from __future__ import annotations

import asyncio
import threading

import pytest

from semif_agent import Router
from semif_agent.chooser._batch import EmbedBatcher
from semif_agent.starter import create_workspace

REQUESTS = [
    "Email Grace that I accept the offer",
    "Remind me to water the plants on Sunday",
    "Put the dentist on my calendar for Tuesday at 3pm",
    "Add milk and eggs to my to-do list",
    "Write a note about the book club's next pick",
    "Send Bob the minutes of today's meeting",
    "What is on my calendar tomorrow?",
    "Draft an email to the landlord about the heating",
]


@pytest.fixture
def root(tmp_path):
    return create_workspace(tmp_path / "ws")


def test_concurrent_finds_are_embedded_in_one_batch_and_rank_as_they_would_alone(root):
    alone = Router(root, client="alone")
    expected = [[c.name for c in alone.find(text).skills] for text in REQUESTS]

    together = Router(root, client="together")
    together.find("warm the tree up")  # the skills' vectors made first: what is batched below is the requests alone

    async def all_at_once():
        found = await asyncio.gather(*(together.afind(text) for text in REQUESTS))
        return found, together._batchers[asyncio.get_running_loop()]

    found, batcher = asyncio.run(all_at_once())
    assert [[c.name for c in shortlist.skills] for shortlist in found] == expected
    assert batcher.batches == [len(REQUESTS)]  # one call of the embedder for the eight requests


def test_a_failed_batch_fails_each_find_that_asked_and_the_next_batch_starts_afresh():
    calls: list[list[str]] = []

    def embed(texts):
        calls.append(list(texts))
        if len(calls) == 1:
            raise RuntimeError("the model is gone")

    batcher = EmbedBatcher(embed)

    async def scenario():
        first = await asyncio.gather(batcher.embedded("a"), batcher.embedded("b"), return_exceptions=True)
        await batcher.embedded("c")
        return first

    first = asyncio.run(scenario())
    assert [str(e) for e in first] == ["the model is gone", "the model is gone"]
    assert calls == [["a", "b"], ["c"]]


def test_a_tree_reloaded_while_finds_go_on_is_switched_whole(root):
    """Finds asked from another thread while the tree is read again all answer (from the old tree or the new one,
    never a mix of both); once it is switched, the new skill is found."""
    router = Router(root, client="tester")
    router.find(REQUESTS[0])
    folder = root / "skills" / "plant-care"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: plant-care\ndescription: Water, feed and repot house plants on a schedule.\n---\nCare for plants.\n",
        encoding="utf-8",
    )
    failures: list[BaseException] = []
    finished = threading.Event()

    def keep_finding():
        try:
            while not finished.is_set():
                shortlist = router.find("Remind me to water the plants on Sunday", k=15)
                assert all(c.name in router.skills or c.name == "plant-care" for c in shortlist.skills)
        except BaseException as exc:  # noqa: BLE001 (kept for the assertion below)
            failures.append(exc)

    finder = threading.Thread(target=keep_finding)
    finder.start()
    try:
        assert router.reload() == len(router.skills)
    finally:
        finished.set()
        finder.join(60)
    assert failures == []
    assert "plant-care" in router.skills
    assert router.find("Water and repot my house plants").skills[0].name == "plant-care"


def test_a_router_semif_train_switches_to_is_taken_up_on_reload(root):
    from click.testing import CliRunner

    from semif_agent.cli import main
    from semif_agent.routing.learned import Learned

    router = Router(root, client="tester")
    router.find(REQUESTS[0])
    assert not isinstance(router.runner.strategy, Learned)
    trained = CliRunner().invoke(main, ["train", "-w", str(root), "--force", "--json"])
    assert trained.exit_code == 0, trained.output
    assert not isinstance(router.runner.strategy, Learned)  # nothing changes under a router until it reloads
    router.reload()
    assert isinstance(router.runner.strategy, Learned)
    assert router.find(REQUESTS[0]).skills[0].name == "email.compose"


def test_long_texts_are_embedded_after_the_short_ones_asked_with_them():
    calls: list[list[str]] = []
    batcher = EmbedBatcher(lambda texts: calls.append(list(texts)))
    long = "a page of text " * 200

    async def scenario():
        await asyncio.gather(batcher.embedded(long), batcher.embedded("short one"), batcher.embedded("short two"))

    asyncio.run(scenario())
    assert calls == [["short one", "short two"], [long]]


def test_an_encoder_switched_in_is_taken_up_on_reload(root):
    """A reload after ``semif encoder on`` embeds with the tuned encoder (its own engine), and after ``off`` with
    the installed one again. The tuned encoder here is a copy of the installed model under its own id: cheap, and
    what the engine is given is all that matters."""
    import shutil

    from semif_agent.engine.local import MODEL_ID, MODEL_SHA256, model_file
    from semif_agent.routing.encoder import store
    from semif_agent.workspace import Workspace

    ws = Workspace.load(root)
    router = Router(root, client="tester")
    router.find(REQUESTS[0])
    assert router.runner.engine.model == MODEL_ID
    folder = store.encoder_folder(ws)
    folder.mkdir(parents=True)
    shutil.copyfile(model_file(), folder / store.model_name(MODEL_SHA256))
    tuned = store.write_manifest(folder, MODEL_SHA256, {})
    (folder / "tuned").mkdir()  # the routing kept for it: none, the untrained one
    store.switch_encoder(ws, "tuned")
    router.reload()
    assert router.runner.engine.model == tuned.model_id != MODEL_ID
    assert router.find(REQUESTS[0]).skills  # it finds with it
    store.switch_encoder(ws, "base")
    router.reload()
    assert router.runner.engine.model == MODEL_ID
