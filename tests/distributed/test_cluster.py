"""eval, train and batch runs on a local Ray cluster give what they give here; a worker killed mid-batch costs nothing."""

from __future__ import annotations

import json
import os
import shutil
import sys
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from semif_agent.cli import main

from .conftest import REQUESTS, starter

pytestmark = pytest.mark.usefixtures("cluster")


@pytest.fixture(scope="module", autouse=True)
def _helpers_travel_by_value(cluster: Any) -> None:
    """This module's helpers reach the workers as code, so a worker need not import the tests."""
    cluster.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output + str(result.exception)
    return result


def without_timing(report: dict[str, Any]) -> dict[str, Any]:
    return {
        **report,
        "strategies": {
            name: {k: v for k, v in metrics.items() if not k.startswith("latency")}
            for name, metrics in report["strategies"].items()
        },
    }


def test_eval_on_the_cluster_reports_the_same_decisions(tmp_path: Path, local_cache: Path) -> None:
    ws = starter(tmp_path / "ws")
    here = json.loads(invoke("eval", str(REQUESTS), "-w", str(ws), "--errors", "--json").stdout)
    result = invoke("eval", str(REQUESTS), "-w", str(ws), "--errors", "--json", "--ray")
    there = json.loads(result.stdout)
    assert without_timing(there) == without_timing(here)
    assert set(there["strategies"]) == {"chain", "best_leaf", "beam", "shortlist", "examples"}
    assert "examples: 63/63 requests on 2 workers" in result.stderr


def test_eval_loses_nothing_when_a_worker_is_killed(cluster: Any, tmp_path: Path, local_cache: Path) -> None:
    from semif_agent._sync import run_sync
    from semif_agent.distributed import jobs
    from semif_agent.distributed.pool import RayPool
    from semif_agent.routing.evaluate import load_dataset, route_all, summarize
    from semif_agent.tree.tree import SkillTree
    from semif_agent.workspace import Workspace

    ws = Workspace.load(starter(tmp_path / "ws"))
    tree = SkillTree.for_workspace(ws)
    examples = load_dataset(REQUESTS)
    make = partial(_strategy, tree)
    here = run_sync(route_all(make("examples"), examples))
    statuses = []
    with RayPool(cluster, 2) as pool:
        kill = _killer(cluster, pool, statuses)
        there = jobs.route_all(pool, make, ("examples",), examples, batch_size=8, progress=kill)
    assert statuses[-1].failures >= 1  # a batch was sent again...
    assert [o.predicted for o in there] == [o.predicted for o in here]  # ...and every request routed once, in order
    assert [o.example for o in there] == examples
    drop = ("latency_ms_p50", "latency_ms_p90")
    assert {k: v for k, v in summarize(there, tree).items() if k not in drop} == {
        k: v for k, v in summarize(here, tree).items() if k not in drop
    }


def _strategy(tree: Any, name: str) -> Any:
    from semif_agent.engine.registry import create_engine
    from semif_agent.routing import create_strategy

    return create_strategy(name, tree, create_engine("local", {}))


def _killer(ray: Any, pool: Any, statuses: list[Any]) -> Any:
    """A progress callback that kills every worker once, after the first batch is back (each still holds work)."""

    def progress(status: Any) -> None:
        statuses.append(status)
        if status.done and not any(s.failures for s in statuses) and not getattr(progress, "fired", False):
            progress.fired = True
            for actor in pool.actors:
                ray.kill(actor, no_restart=False)

    return progress


def test_train_on_the_cluster_fits_the_same_router(tmp_path: Path, local_cache: Path) -> None:
    here_ws = starter(tmp_path / "here")
    there_ws = tmp_path / "there"
    shutil.copytree(here_ws, there_ws)
    # --force: the routers are compared whatever the guard decides (the same on both sides, checked below)
    here = json.loads(
        invoke("train", str(REQUESTS), "-w", str(here_ws), "--held-out", "0.5", "--force", "--json").stdout
    )
    result = invoke("train", str(REQUESTS), "-w", str(there_ws), "--held-out", "0.5", "--force", "--json", "--ray")
    there = json.loads(result.stdout)
    assert here["held_out"] >= 20  # something was held out, and the same requests were
    for key in ("counts", "classes", "held_out", "before", "after", "calibration", "l2", "decision"):
        assert there[key] == here[key], key
    with np.load(here_ws / "data" / "router.npz") as a, np.load(there_ws / "data" / "router.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
            assert np.array_equal(a[name], b[name]), name
    assert "embedding: " in result.stderr and "texts on 2 workers" in result.stderr


def _batch(path: Path, count: int) -> list[dict[str, Any]]:
    texts = [json.loads(line)["text"] for line in REQUESTS.read_text().splitlines()][:count]
    requests = [{"text": text, "id": f"req-{i:02d}"} for i, text in enumerate(texts)]
    requests.append({"text": "Add call the plumber to my todo list", "skill": "todos.add", "id": "req-skill"})
    path.write_text("".join(json.dumps(r) + "\n" for r in requests))
    return requests


def _runs(ws: Path) -> dict[str, list[dict[str, Any]]]:
    """The logged rows of each run, by run id."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for line in (ws / "data" / "decisions.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows.setdefault(row["run_id"], []).append(row)
    return rows


def test_a_batch_run_logs_every_request_once(tmp_path: Path, local_cache: Path) -> None:
    requests = _batch(tmp_path / "batch.jsonl", 20)
    here_ws, there_ws = starter(tmp_path / "here"), starter(tmp_path / "there")
    invoke("run", "--batch", str(tmp_path / "batch.jsonl"), "-w", str(here_ws))
    result = invoke("run", "--batch", str(tmp_path / "batch.jsonl"), "-w", str(there_ws), "--json", "--ray")
    report = json.loads(result.stdout)
    assert [r["run_id"] for r in report["runs"]] == [r["id"] for r in requests]
    here, there = _runs(here_ws), _runs(there_ws)
    assert list(there) == [r["id"] for r in requests]  # one run per request, written in request order
    for run_id, rows in there.items():
        assert [r["kind"] for r in rows].count("outcome") == 1 and rows[-1]["kind"] == "outcome"
        assert [r["step"] for r in rows if r["kind"] != "outcome"] == list(range(1, len(rows)))
        routed = [(r["question"], r["selected"]) for r in rows if r["kind"] == "route"]
        assert routed == [(r["question"], r["selected"]) for r in here[run_id] if r["kind"] == "route"]
        assert rows[-1]["skill"] == here[run_id][-1]["skill"]
    assert there["req-skill"][-1]["skill"] == "todos.add"
    assert report["rows_written"] == sum(len(rows) for rows in there.values())


def test_a_worker_killed_mid_batch_loses_and_repeats_no_row(cluster: Any, tmp_path: Path) -> None:
    from semif_agent.cli._batch_run import batch_runner
    from semif_agent.distributed.batch import load_requests, run_batch
    from semif_agent.distributed.pool import RayPool
    from semif_agent.records import DecisionLog
    from semif_agent.workspace import Workspace

    requests = _batch(tmp_path / "batch.jsonl", 12)
    ws = Workspace.load(starter(tmp_path / "ws"))
    statuses: list[Any] = []
    with RayPool(cluster, 2) as pool:
        report = run_batch(
            pool,
            partial(batch_runner, str(ws.root), None, None, None, None),
            load_requests(tmp_path / "batch.jsonl"),
            DecisionLog(ws.log_path),
            progress=_killer(cluster, pool, statuses),
        )
    assert statuses[-1].failures >= 1
    runs = _runs(ws.root)
    assert list(runs) == [r["id"] for r in requests]
    assert all([r["kind"] for r in rows].count("outcome") == 1 for rows in runs.values())
    assert report.rows_written == sum(len(rows) for rows in runs.values())


def test_a_worker_that_always_dies_stops_the_job_with_one_line(cluster: Any) -> None:
    from semif_agent.distributed.pool import RayPool, WorkerFailed

    with RayPool(cluster, 1, retries=1) as pool, pytest.raises(WorkerFailed, match="lost its worker 2 times"):
        pool.map(partial(os._exit, 3), _identity, [[1], [2]], on_result=lambda index, result: None)


def test_a_worker_whose_restart_waits_for_a_cpu_is_waited_for_and_loses_no_batch(cluster: Any) -> None:
    """A killed worker restarts only once a CPU is free: another task took its CPU first (as on a busy machine,
    where a restart takes seconds). Its batches wait for it instead of being given up on after a few refusals."""
    from semif_agent.distributed.pool import RayPool

    hold = cluster.remote(num_cpus=1)(_hold)
    results: dict[int, Any] = {}
    statuses: list[Any] = []
    holders: list[Any] = []

    def progress(status: Any) -> None:
        statuses.append(status)
        if status.done and len(holders) == 1:
            holders.append(hold.remote(8))  # queued first for the CPU the killed worker frees: its restart waits
            for actor in pool.actors:
                cluster.kill(actor, no_restart=False)

    with RayPool(cluster, 1) as pool:
        holders.append(hold.remote(30))  # the cluster's other CPU, taken for the rest of the test
        try:
            pool.map(_nothing, _identity, [[i] for i in range(6)], on_result=results.__setitem__, progress=progress)
        finally:
            for holder in holders:
                cluster.cancel(holder, force=True)
    assert statuses[-1].failures >= 1  # a batch was sent again...
    assert results == {i: [i] for i in range(6)}  # ...and every batch came back once


def _hold(seconds: float) -> None:
    import time

    time.sleep(seconds)


def _nothing() -> None:
    return None


def test_an_error_in_a_task_reaches_the_driver_as_it_is(cluster: Any, tmp_path: Path) -> None:
    ws = starter(tmp_path / "ws")
    (tmp_path / "batch.jsonl").write_text(
        json.dumps({"text": "do it", "skill": "no.such_skill"})
        + "\n"
        + json.dumps({"text": "Add milk to my todo list"})
        + "\n"
    )
    result = CliRunner().invoke(main, ["run", "--batch", str(tmp_path / "batch.jsonl"), "-w", str(ws), "--ray"])
    assert result.exit_code == 1
    assert "1 of 2 requests could not run; request 1:" in result.output and "no.such_skill" in result.output
    assert len(_runs(ws)) == 1  # the other request ran and was logged


def _identity(state: Any, batch: Any) -> Any:
    return batch


def test_tuning_the_encoder_embeds_its_router_on_the_cluster(tmp_path: Path, local_cache: Path) -> None:
    ws = starter(tmp_path / "ws")
    result = invoke("train", str(REQUESTS), "-w", str(ws), "--encoder", "--epochs", "1", "--force", "--json", "--ray")
    report = json.loads(result.stdout)
    tuned = json.loads((ws / "data" / "encoder" / "encoder.json").read_text())
    assert report["encoder"]["model_id"] == tuned["model_id"] != "all-MiniLM-L6-v2-int8"
    assert json.loads((ws / "data" / "router.json").read_text())["model"] == tuned["model_id"]
    assert "texts on 2 workers" in result.stderr  # the tuned router's requests were embedded there
    assert not list((ws / "data" / "encoder").glob(".candidate-*"))  # the folder the workers read is gone
