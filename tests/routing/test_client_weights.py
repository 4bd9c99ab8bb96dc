"""A client's rows in training: once per request, none about what people routed, and a bounded share of the weight."""

from __future__ import annotations

import numpy as np

from semif_agent.routing._fitting import CLIENT_SHARE, CLIENTS_SHARE, _balance, client_capped
from semif_agent.routing.training import (
    TrainingExample,
    once_per_request,
    request_key,
)

LEAVES = [f"skill.{n}" for n in range(10)]


def test_a_clients_repeats_count_once_and_none_count_about_what_people_routed() -> None:
    own = [
        TrainingExample("Email Alice that the quarterly report is ready", "email.compose", "examples"),
        TrainingExample("Send my manager a note asking for Friday off", "email.compose", "label", 2.0),
    ]
    repeats = [
        TrainingExample(text, "todos.complete", "implicit", 0.5, client=f"client {n % 3}")
        for n in range(60)
        for text in (
            f"Mark the LAUNDRY task as done{'!' * n}",
            f"email alice that the quarterly report is ready{'.' * n}",
        )
    ]
    kept = once_per_request(own + repeats)
    assert kept[:2] == own
    assert [(r.text, r.skill) for r in kept[2:]] == [("Mark the LAUNDRY task as done", "todos.complete")]
    assert request_key("  Mark the laundry task, as DONE!!! ") == request_key("mark the laundry task as done")


def test_each_clients_share_and_all_clients_share_are_bounded() -> None:
    own = np.ones(72)
    for clients in (1, 3, 60):
        theirs = np.full(600, 0.5)
        weight = np.concatenate([own, theirs])
        client = np.concatenate([np.full(72, -1), np.arange(600) % clients])
        capped = client_capped(weight, client, LEAVES)
        base = 72 + len(LEAVES)
        assert np.array_equal(capped[:72], own)  # the workspace's own rows keep their weight
        for number in range(clients):
            assert capped[72:][client[72:] == number].sum() <= CLIENT_SHARE * base + 1e-9
        assert capped[72:].sum() <= CLIENTS_SHARE * base + 1e-9


def test_many_light_rows_do_not_thin_out_a_skills_own_examples() -> None:
    # skill 0 has 6 examples; a client adds 1,000 rows to it at a hundredth of a weight each
    target = np.array([0] * 6 + [1] * 6 + [0] * 1000)
    wrong = np.full(len(target), -1)
    weight = np.array([1.0] * 12 + [0.01] * 1000)
    balanced = weight * _balance(target, wrong, weight)
    examples_0, examples_1 = balanced[:6].sum(), balanced[6:12].sum()
    assert examples_0 > 0.5 * examples_1  # by count, skill 0's examples would weigh 1/sqrt(1006) each: a thirteenth
    unit = np.ones(12)
    assert np.allclose(_balance(target[:12], wrong[:12], unit), 1.0)  # unit weights, equal classes: unchanged


def test_what_a_person_said_is_a_label_and_what_a_client_said_is_its_report() -> None:
    from semif_agent.records import RunRecord
    from semif_agent.routing.training import WEIGHTS, examples_from_log

    class Tree:
        skills = {"email.compose": None, "todos.add": None}

    runs = [
        RunRecord("a", "Email Bob", "email.compose", "success", "run", label_outcome="success", labelled_by="ann"),
        RunRecord(
            "b",
            "Email Cy",
            "email.compose",
            "success",
            "run",
            label_outcome="failure",
            labelled_by="bot",
            label_source="client",
            label_outcome_source="client",
            label_client="bot",
        ),
    ]
    taught = [(r.text, r.skill, r.wrong, r.source, r.weight, r.client) for r in examples_from_log(runs, Tree())]
    assert taught == [
        ("Email Bob", "email.compose", None, "label", WEIGHTS["label"], None),  # never broken by a switch
        ("Email Cy", None, "email.compose", "reported", WEIGHTS["reported"], "bot"),
    ]
