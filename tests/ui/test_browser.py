"""The web view in a real browser: runs, search, one run, a label written and read back by ``semif log``, tree, quality, live."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ._png import distinct_colours
from .conftest import Served, semif, semif_env

MIN_COLOURS = 12  # a blank or error-only page has a handful; a rendered page has many more


def shoot(page, folder: Path, name: str) -> Path:
    """A full-page screenshot in ``folder``, checked not to be blank."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    colours = distinct_colours(path)
    assert colours > MIN_COLOURS, f"{path} looks blank: {colours} distinct colours"
    return path


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    return tmp_path / "screenshots"


def run_id_of(served: Served, text: str) -> str:
    rows = [json.loads(line) for line in (served.workspace / "data" / "decisions.jsonl").read_text().splitlines()]
    return next(row["run_id"] for row in rows if row.get("kind") == "outcome" and row.get("request") == text)


def test_runs_search_open_and_relabel_a_run(served: Served, page, screenshots: Path) -> None:
    page.goto(served.url)
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 5
    assert "remind me to water the plants" in rows.first.inner_text()  # newest first
    assert "Email Alice that the quarterly report is ready" in rows.last.inner_text()
    shoot(page, screenshots, "runs")

    page.fill("input[name=text]", "alice quarterly")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/?text=alice+quarterly*")
    assert rows.count() == 1
    page.click("table.runs tbody tr td.request a")

    page.wait_for_selector("h1.request")
    assert page.inner_text("h1.request") == "Email Alice that the quarterly report is ready"
    assert page.locator("article.decision").count() >= 3  # route, predict, assess
    chosen = page.locator("article.kind-route tr.chosen td.option").first.inner_text()
    assert chosen == "email"
    assert page.locator("details.change pre.diff").count() == 1  # the draft it wrote, as a diff
    shoot(page, screenshots, "run")

    page.check("form.label-form input[name=skill_choice][value=skill]")
    page.fill("form.label-form input[name=skill]", "email.list_drafts")
    page.check("form.label-form input[name=outcome][value=failure]")
    page.fill("form.label-form input[name=note]", "wanted the drafts")
    page.fill("form.label-form input[name=by]", "tester")
    page.click("form.label-form button[type=submit]")
    page.wait_for_selector(".current-label .labelled")
    label = page.inner_text(".current-label")
    assert "email.list_drafts" in label and "failure" in label and "tester" in label
    shoot(page, screenshots, "run-labelled")

    run_id = page.url.rsplit("/", 1)[1].split("#")[0]
    listed = semif(served.workspace.parent / "home", "log", "-w", str(served.workspace), "--run", run_id, "--json")
    assert listed.returncode == 0, listed.stderr
    record = json.loads(listed.stdout)
    assert (record["label_skill"], record["label_outcome"], record["labelled_by"]) == (
        "email.list_drafts",
        "failure",
        "tester",
    )
    shown = semif(served.workspace.parent / "home", "log", "show", run_id, "-w", str(served.workspace), "--json")
    labels = json.loads(shown.stdout)["labels"]
    assert labels[-1]["skill"] == "email.list_drafts" and labels[-1]["source"] == "person"


def test_an_unknown_skill_is_refused_and_one_click_confirms_a_run(served: Served, page) -> None:
    log = served.workspace / "data" / "decisions.jsonl"
    before = log.read_bytes()
    page.goto(served.url + "runs/" + run_id_of(served, "Show my email drafts"))
    page.check("form.label-form input[name=skill_choice][value=skill]")
    page.fill("form.label-form input[name=skill]", "email.compos")
    page.click("form.label-form button[type=submit]")
    page.wait_for_selector("p.error")
    assert "no skill named 'email.compos'" in page.inner_text("p.error") and "email.compose" in page.inner_text(
        "p.error"
    )
    assert log.read_bytes() == before

    page.click("button.quick-label:text-is('Right skill, and it worked')")  # one click
    page.wait_for_selector(".current-label .labelled")
    label = page.inner_text(".current-label")
    assert "success" in label and "should be email.list_drafts" in label


def test_tree_and_quality_pages(served: Served, page, screenshots: Path) -> None:
    page.goto(served.url + "tree")
    assert page.locator("li.category").count() >= 5
    page.fill("input[name=q]", "drafts")
    page.click("form.filters button[type=submit]")
    page.click("ul.found a:text-is('email.list_drafts')")
    page.wait_for_selector("article.skill-detail")
    detail = page.inner_text("article.skill-detail")
    assert "email.list_drafts" in detail and "def predict" in detail  # its body
    shoot(page, screenshots, "tree")

    page.goto(served.url + "quality")
    assert page.locator("svg.chart").count() == 4
    assert page.locator("section.figure table.numbers").count() == 4
    shoot(page, screenshots, "quality")


def test_a_request_holding_a_script_is_shown_as_text(served: Served, page) -> None:
    page.goto(served.url)
    cell = page.locator("table.runs td.request", has_text="remind me to water the plants")
    assert "<script>window.__injected = 1</script>" in cell.inner_text()
    page.goto(
        served.url + "runs/" + run_id_of(served, "<script>window.__injected = 1</script> remind me to water the plants")
    )
    assert page.inner_text("h1.request").startswith("<script>window.__injected = 1</script>")
    assert page.evaluate("window.__injected") is None
    assert page.locator("script").count() == 1  # our own app.js only


def test_a_run_from_the_command_line_appears_without_a_reload(served: Served, page) -> None:
    page.goto(served.url)
    page.evaluate("window.__same_page = true")
    before = page.locator("table.runs tbody tr").count()
    done = subprocess.run(
        [sys.executable, "-m", "semif_agent", "run", "Add a todo: renew the passport", "-w", str(served.workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        env=semif_env(served.workspace.parent / "home"),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page.wait_for_selector("td.request:has-text('renew the passport')", timeout=15_000)
    assert page.locator("table.runs tbody tr").count() == before + 1
    assert page.evaluate("window.__same_page") is True
