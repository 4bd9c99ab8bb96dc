"""How fast ``semif ui`` serves the runs page of a large decision log.

    python bench/ui.py [--decisions 100000] [--repeat 20]

Makes a starter workspace, runs four real requests in it (the lexical engine),
then fills its log with copies of those runs under new ids and requests
until it holds N decision rows (plus an outcome row per run, and a label on
every tenth). It starts ``semif ui`` on that workspace in its own process and
prints:

- the time ``semif ui`` took to index the log (what it prints at start);
- for the runs page, a search, a filtered page and one run's page: the median
  time to the first byte of the response and to its last byte (the page fully
  rendered by the server), over ``--repeat`` requests on one connection;
- the same after a run is appended (the index reads only the new bytes), and
  the time to label a run through the page;
- with the system's Chromium and Playwright, the time until the browser has
  loaded the runs page (its ``load`` event), median of 5.

The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SEED_REQUESTS = (
    "Email Alice that the quarterly report is ready",
    "Add a todo: renew the passport",
    "What is on my calendar tomorrow?",
    "Find the budget spreadsheet",
)
WORDS = (
    "report",
    "budget",
    "meeting",
    "Alice",
    "Bob",
    "draft",
    "invoice",
    "launch",
    "tomorrow",
    "notes",
    "plan",
    "team",
)


def make_workspace(root: Path, decisions: int) -> int:
    """A starter workspace whose log holds about ``decisions`` decision rows; the number of runs."""
    from semif_agent.engine import create_engine
    from semif_agent.loop.runner import SkillRunner
    from semif_agent.starter import create_workspace
    from semif_agent.workspace import Workspace

    create_workspace(root)
    settings = root / "semif.toml"
    settings.write_text(settings.read_text().replace("[engine]\n", '[engine]\nname = "lexical"\n', 1))
    runner = SkillRunner(Workspace.load(root), engine=create_engine("lexical"))
    for text in SEED_REQUESTS:
        runner.run(text)
    log = root / "data" / "decisions.jsonl"
    seeds: dict[str, list[dict]] = {}
    for line in log.read_text().splitlines():
        row = json.loads(line)
        seeds.setdefault(row["run_id"], []).append(row)
    templates = list(seeds.values())
    random.seed(7)
    written, runs, start = 0, 0, time.time() - 90 * 86400
    with open(log, "a", encoding="utf-8") as handle:
        while written < decisions:
            template = templates[runs % len(templates)]
            run_id = f"bench-{runs:07d}"
            request = f"{template[-1].get('request')} {' '.join(random.sample(WORDS, 3))} #{runs}"
            ts = start + runs * 90 * 86400 / max(1, decisions // 4)
            for row in template:
                copy = {**row, "run_id": run_id, "ts": ts}
                if "state" in copy and copy.get("kind") == "route":
                    copy["state"] = request
                if copy.get("kind") == "outcome":
                    copy["request"] = request
                else:
                    written += 1
                handle.write(json.dumps(copy, ensure_ascii=False) + "\n")
            if runs % 10 == 0:
                handle.write(
                    json.dumps(
                        {
                            "v": 1,
                            "ts": ts,
                            "run_id": run_id,
                            "kind": "label",
                            "outcome": "success",
                            "by": "bench",
                            "source": "person",
                        }
                    )
                    + "\n"
                )
            runs += 1
    return runs + len(templates)


def timed_get(connection: http.client.HTTPConnection, path: str) -> tuple[float, float, int]:
    """(seconds to the first byte, seconds to the last byte, bytes) of one GET."""
    started = time.perf_counter()
    connection.request("GET", path)
    response = connection.getresponse()
    first = response.read(1)
    first_at = time.perf_counter()
    rest = response.read()
    assert response.status == 200, (path, response.status)
    return first_at - started, time.perf_counter() - started, len(first) + len(rest)


def measure(url: str, paths: dict[str, str], repeat: int) -> None:
    host, port = re.match(r"http://([^:/]+):(\d+)/", url).groups()
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    for name, path in paths.items():
        timings = [timed_get(connection, path) for _ in range(repeat)]
        first = statistics.median(t[0] for t in timings) * 1000
        last = statistics.median(t[1] for t in timings) * 1000
        print(
            f"  {name:<28} first byte {first:7.1f} ms   fully rendered {last:7.1f} ms   ({timings[0][2] // 1024} KiB)"
        )
    connection.close()


def label_time(url: str) -> float:
    """Ms to label one run through the page's form (the 303 that follows the write)."""
    host, port = re.match(r"http://([^:/]+):(\d+)/", url).groups()
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    connection.request("GET", "/")
    token = re.search(r'name="semif-token" content="([^"]+)"', connection.getresponse().read().decode()).group(1)
    started = time.perf_counter()
    connection.request(
        "POST",
        "/runs/bench-0000123/label",
        body=f"token={token}&skill_choice=none&by=bench",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    response = connection.getresponse()
    response.read()
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status == 303, response.status
    connection.close()
    return elapsed


def browser_load(url: str) -> float | None:
    """Median ms until Chromium fires the runs page's load event (None without a browser)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if path is None:
        return None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path)
        page = browser.new_page()
        page.goto(url)  # warm
        times = []
        for _ in range(5):
            started = time.perf_counter()
            page.goto(url, wait_until="load")
            times.append((time.perf_counter() - started) * 1000)
        browser.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="semif-ui-bench-"))
    try:
        root = folder / "ws"
        runs = make_workspace(root, args.decisions)
        log = root / "data" / "decisions.jsonl"
        print(
            f"log: {args.decisions} decision rows, {runs} runs, {log.stat().st_size / 1e6:.1f} MB; "
            f"load average {os.getloadavg()[0]:.2f}"
        )
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "semif_agent", "ui", "-w", str(root), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        url = None
        for line in process.stdout:  # type: ignore[union-attr]  # stdout is a pipe here
            print("  semif ui: " + line.rstrip())
            found = re.search(r"at (http://\S+/)", line)
            if found:
                url = found.group(1)
                break
        if url is None:
            raise SystemExit("semif ui did not start")
        try:
            paths = {
                "runs page": "/",
                "search 'budget alice'": "/?text=budget+alice",
                "labelled, last page": "/?label=labelled&page=50",
                "one run": "/runs/bench-0000123",
            }
            print(f"served (median of {args.repeat}):")
            measure(url, paths, args.repeat)
            with open(log, "a", encoding="utf-8") as handle:
                last = [json.loads(line) for line in log.read_text().splitlines()[-6:]]
                handle.writelines(json.dumps({**row, "run_id": "bench-appended"}) + "\n" for row in last)
            print("after one run is appended:")
            measure(url, {"runs page (first request)": "/"}, 1)
            print(f"  {'label a run (POST)':<28} answered in {label_time(url):7.1f} ms")
            loaded = browser_load(url)
            if loaded is not None:
                print(f"Chromium: runs page loaded in {loaded:.1f} ms (median of 5, load event)")
            print(f"load average {os.getloadavg()[0]:.2f}")
        finally:
            process.terminate()
            process.wait(timeout=10)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
