"""``semif eval``: the dataset format, the report, and tuning stored in the workspace."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.routing.evaluate import Example, RoutedExample, expected_calibration_error, load_dataset, split

KEYS = {
    "accuracy",
    "leaf_accuracy",
    "category_accuracy",
    "out_of_scope_precision",
    "out_of_scope_recall",
    "decisions_per_request",
    "latency_ms_p50",
    "latency_ms_p90",
    "prompt_tokens_per_request",
    "calibration_error",
}


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_eval_reports_every_strategy(tree_file: Path, dataset_file: Path, tmp_path: Path) -> None:
    report_file = tmp_path / "report.json"
    result = invoke(
        "eval", str(dataset_file), "--tree", str(tree_file), "--engine", "local", "--json", "--report", str(report_file)
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report == json.loads(report_file.read_text())
    assert set(report["strategies"]) == {"chain", "best_leaf", "beam", "shortlist", "examples"}
    for metrics in report["strategies"].values():
        assert KEYS <= set(metrics) and metrics["examples"] == 10
        assert 0.0 <= metrics["accuracy"] <= 1.0
    assert report["strategies"]["best_leaf"]["leaf_accuracy"] >= 0.75  # 1.0 on each of 5 runs: deterministic
    assert report["strategies"]["chain"]["decisions_per_request"] >= 1.0


def test_eval_human_table(tree_file: Path, dataset_file: Path) -> None:
    result = invoke(
        "eval", str(dataset_file), "--tree", str(tree_file), "--engine", "lexical", "--strategy", "best_leaf"
    )
    assert result.exit_code == 0
    assert "best_leaf" in result.stdout and "overall" in result.stdout


def test_dataset_errors_name_the_line(tree_file: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok", "skill": "email.compose"}\n{"text": oops}\n')
    result = invoke("eval", str(bad), "--tree", str(tree_file))
    assert result.exit_code == 1 and "bad.jsonl:2: invalid JSON" in result.stderr
    bad.write_text('{"skill": "email.compose"}\n')
    assert "bad.jsonl:1: each line needs" in invoke("eval", str(bad), "--tree", str(tree_file)).stderr
    bad.write_text('{"text": "x", "skill": "email.fly"}\n')
    assert "does not have: email.fly" in invoke("eval", str(bad), "--tree", str(tree_file)).stderr


def test_a_request_holding_a_line_separator_is_one_line_of_the_dataset(tmp_path: Path) -> None:
    dataset = tmp_path / "requests.jsonl"
    texts = ["Email Alice\u2028about the report", "Add milk\u2029\x85to my list"]
    dataset.write_text("".join(json.dumps({"text": t, "skill": None}, ensure_ascii=False) + "\n" for t in texts))
    assert load_dataset(dataset) == [Example(text, None) for text in texts]


def test_split_is_deterministic_and_complete() -> None:
    data = [Example(f"request {i}", None) for i in range(100)]
    validation, test = split(data)
    assert (validation, test) == split(data)
    assert sorted(e.text for e in validation + test) == sorted(e.text for e in data)
    assert 30 < len(validation) < 70


def test_calibration_error_is_zero_when_confidence_matches_accuracy() -> None:
    right = RoutedExample(Example("a", "x"), "x", 1, 1.0, 0, 1.0)
    wrong = RoutedExample(Example("b", "x"), None, 1, 1.0, 0, 1.0)
    assert expected_calibration_error([right, right]) == 0.0
    assert expected_calibration_error([right, wrong]) == 0.5
    assert expected_calibration_error([RoutedExample(Example("c", None), None, 1, 1.0, 0, None)]) is None


def test_temperature_tuning_recalibrates_overconfident_scores() -> None:
    from semif_agent.routing.tune import tune_temperature

    # scores that separate the answer sharply, but the answer is right only 60% of the time
    outcomes = [
        RoutedExample(
            Example(f"r{i}", "a"),
            "a" if i % 5 < 3 else "b",
            1,
            1.0,
            0,
            None,
            {"a": 0.60, "b": 0.50},
            "a" if i % 5 < 3 else "b",
        )
        for i in range(100)
    ]
    for o in outcomes:  # each decision picked its own top answer
        o.scores = {o.selected: 0.60, ("b" if o.selected == "a" else "a"): 0.50}
    sharp = expected_calibration_error(outcomes, temperature=0.01)
    best = tune_temperature(outcomes)
    assert best is not None and best > 0.05
    assert expected_calibration_error(outcomes, temperature=best) < sharp
    assert tune_temperature(outcomes[:20]) is None  # too few to calibrate
