"""Engines answer with one of the offered ids, fall back on `none`, and fail clearly otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from semif_agent.engine import (
    DecisionRequest,
    DecisionResult,
    Option,
    ScriptedEngine,
    create_engine,
    register_engine,
)
from semif_agent.errors import DecisionError, EngineConfigError

CATEGORIES = [
    Option("email", "Write email messages and drafts to contacts"),
    Option("calendar", "Schedule meetings and events, show the agenda"),
    Option("todos", "Task list: add, list and complete to-do items"),
    Option("none", "Nothing fits"),
]


def ask(state: str, options: list[Option] = CATEGORIES) -> DecisionRequest:
    return DecisionRequest(state=state, question="Which category?", options=options)


def test_decision_request_validates_options() -> None:
    with pytest.raises(ValueError, match="at least one option"):
        DecisionRequest("s", "q", [])
    with pytest.raises(ValueError, match="duplicate option ids: a"):
        DecisionRequest("s", "q", [Option("a"), Option("a")])
    with pytest.raises(ValueError):
        Option("")


@pytest.mark.parametrize("name", ["lexical", "local"])
def test_engine_picks_the_matching_option(name: str) -> None:
    engine = create_engine(name)
    result = engine.call(ask("schedule a meeting with the team on Friday"))
    assert result.selected == "calendar"
    assert result.engine == name and result.model
    assert set(result.scores) == {"email", "calendar", "todos", "none"}
    assert result.latency_ms >= 0


@pytest.mark.parametrize("name", ["lexical", "local"])
def test_engine_falls_back_on_none_for_unrelated_state(name: str) -> None:
    result = create_engine(name).call(ask("what is the capital of Mongolia"))
    assert result.selected == "none"


def test_lexical_without_none_and_without_signal_is_a_clear_error() -> None:
    options = [o for o in CATEGORIES if o.id != "none"]
    with pytest.raises(DecisionError, match="no 'none' option"):
        create_engine("lexical").call(ask("zzz qqq", options))


def test_local_probabilities_sum_to_one_and_favour_the_choice() -> None:
    result = create_engine("local").call(ask("add buy milk to my todo list"))
    assert result.selected == "todos"
    assert result.probabilities is not None
    assert abs(sum(result.probabilities.values()) - 1.0) < 1e-6
    assert max(result.probabilities, key=result.probabilities.get) == "todos"


def test_local_engine_embeds_a_calls_options_in_one_batch_and_caches_them() -> None:
    engine = create_engine("local")
    embedder = engine.embedder
    batches: list[int] = []
    original = embedder._run
    embedder._run = lambda texts: (batches.append(len(texts)), original(texts))[1]  # type: ignore[method-assign]  # counting the model's batches
    try:
        options = [Option(f"opt{i}", f"unique option text number {i} for batching") for i in range(5)]
        engine.call(ask("a brand new state for batching", options))
        engine.call(ask("another brand new state for batching", options))
    finally:
        embedder._run = original  # type: ignore[method-assign]  # counting the model's batches
    assert batches == [6, 1]  # state + 5 options at once; then only the new state


def test_local_engine_refuses_a_tampered_model(tmp_path: Path) -> None:
    from semif_agent.engine.local import model_file

    copy = tmp_path / "model.onnx"
    shutil.copyfile(model_file(), copy)
    with copy.open("r+b") as handle:
        handle.seek(1000)
        handle.write(b"\x00\x01\x02")
    with pytest.raises(EngineConfigError, match="sha256"):
        create_engine("local", {"model_path": str(copy)})


def test_scripted_engine_plays_replies_and_records_calls() -> None:
    engine = ScriptedEngine(["email", {"selected": "todos", "scores": {"todos": 0.9}}])
    assert engine.call(ask("x")).selected == "email"
    second = engine.call(ask("y"))
    assert (second.selected, second.scores, second.engine) == ("todos", {"todos": 0.9}, "scripted")
    assert [c.state for c in engine.calls] == ["x", "y"]
    with pytest.raises(DecisionError, match="no reply left"):
        engine.call(ask("z"))


def test_scripted_engine_function_default_and_errors() -> None:
    assert ScriptedEngine(fn=lambda req: req.options[-1].id).call(ask("x")).selected == "none"
    assert ScriptedEngine(default="first").call(ask("x")).selected == "email"
    with pytest.raises(DecisionError, match="not one of the offered options"):
        ScriptedEngine(["weather"]).call(ask("x"))
    with pytest.raises(RuntimeError, match="boom"):
        ScriptedEngine([RuntimeError("boom")]).call(ask("x"))


def test_engine_registry_names_and_errors() -> None:
    with pytest.raises(EngineConfigError, match="unknown engine 'nope'"):
        create_engine("nope")
    with pytest.raises(EngineConfigError, match="needs a script"):
        create_engine("scripted")
    register_engine("always-first", lambda settings: ScriptedEngine(default="first"))
    assert create_engine("always-first").call(ask("x")).selected == "email"


def test_scripted_engine_from_a_file(tmp_path: Path) -> None:
    script = tmp_path / "answers.json"
    script.write_text('["calendar"]')
    assert create_engine(f"scripted:{script}").call(ask("x")).selected == "calendar"
    script.write_text("{not json")
    with pytest.raises(EngineConfigError, match="cannot read the engine script"):
        create_engine(f"scripted:{script}")


def test_scripted_engine_replays_the_typed_rows_a_decision_log_reads(tmp_path: Path) -> None:
    from semif_agent.records import DecisionLog, DecisionRow, OutcomeRow

    log = DecisionLog(tmp_path / "decisions.jsonl")
    asked = DecisionRequest("Add a note", "Which skill?", [Option("notes.add"), Option("none")])
    log.extend(
        [
            DecisionRow.of(
                run_id="r1", step=1, kind="route", skill=None, request=asked, result=DecisionResult("notes.add")
            ),
            OutcomeRow(run_id="r1", skill="notes.add", request="Add a note", outcome="success"),
        ]
    )
    engine = ScriptedEngine.replay(log.read())
    assert engine.call(asked).selected == "notes.add" and engine.model == "replay:r1"


def test_result_to_dict_is_json_safe() -> None:
    result = DecisionResult(selected="a", scores={"a": float("-inf"), "b": 0.5})
    assert result.to_dict()["scores"] == {"a": None, "b": 0.5}


def test_option_embeddings_are_cached_on_disk_and_invalidated_by_a_new_description(tmp_path: Path) -> None:
    from semif_agent.engine.embed_cache import EmbeddingStore
    from semif_agent.engine.local import Embedder, model_file

    store_path = tmp_path / "embeddings.sqlite3"
    first = Embedder(model_file(), store=EmbeddingStore(store_path))
    texts = ["email: write a draft", "notes: save a note", "todos: add a task"]
    first.embed(texts)
    assert first.computed == 3 and len(EmbeddingStore(store_path)) == 3

    second = Embedder(model_file(), store=EmbeddingStore(store_path))  # a new process, in effect
    again = second.embed(texts)
    assert second.computed == 0
    assert abs(float(again[0] @ first.embed(texts)[0]) - 1.0) < 1e-5
    second.embed(["email: write a draft to a contact"] + texts[1:])
    assert second.computed == 1


def test_an_unwritable_cache_is_skipped_with_a_warning(tmp_path: Path) -> None:
    from semif_agent.engine.embed_cache import EmbeddingStore
    from semif_agent.engine.local import Embedder, model_file

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    embedder = Embedder(model_file(), store=EmbeddingStore(blocker / "sub" / "e.sqlite3"))
    with pytest.warns(RuntimeWarning, match="embedding cache"):
        vectors = embedder.embed(["still works"])
    assert vectors.shape == (1, 384)
