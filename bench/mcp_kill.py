"""`semif mcp --http` killed (SIGKILL) mid-burst, again and again: what was answered is in the log, the log reads.

    .venv/bin/python bench/mcp_kill.py [--repeat 20] [--clients 6] [--workspace WS] [--seed S] [--json]

Each trial starts ``semif mcp -w WS --http 127.0.0.1:0``, has ``--clients``
clients (the official MCP SDK's streamable HTTP client, a session and a
client name each) call it at once: finds mostly, runs of the best skill of
the client's last find and reports on the client's own finds and runs now
and then. Once a number of calls drawn at random (5 to 60) have been
answered, the server is killed with SIGKILL, calls in flight. Then:

- every answered call's rows are in the decision log: a find's shortlist row
  (its ``choice_id``), a run's outcome row and the label row that makes it the
  client's pick (its ``run_id``), a report's label row (the id it labelled, by
  the client that reported);
- the log reads: ``DecisionLog.read()`` and ``semif log -w WS`` (exit 0);
  a torn last line is skipped with a warning that calls it one, never an
  error. Every other trial appends half a row with no newline after the
  kill, as a kill mid-write leaves it, to see that too;
- a new server on the same workspace starts clean: it answers a find, and
  its row is in the log (on a line of its own, after a torn one too).

The workspace (made at ``--workspace``, or reused when it holds one; else a
temporary one) holds the 24 real SKILL.md skills of the test fixtures. The
tally: answered calls by tool, rows found, torn lines seen, clean restarts;
the exit status is 1 when a row is missing or a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from _mcp_serve import BUSY, call, serve, session  # noqa: E402 (sibling scripts, found once their folder is on the path)
from skill_retrieval import load_requests  # noqa: E402 (as above)

WEIGHTS = {"find": 70, "run": 15, "report": 15}
TOOLS = {"find": "find_skills", "run": "run_skill", "report": "report_outcome"}
BURST_SECONDS = 300.0
"""The longest a trial waits for its answered calls before killing the server anyway."""


@dataclass
class Trial:
    """What one trial found (see the docstring)."""

    answered: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    rows_found: int = 0
    missing: list[str] = field(default_factory=list)
    torn_lines: int = 0
    torn_appended: bool = False
    log_exit: int = -1
    log_says_torn: bool = False
    restart_clean: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def sound(self) -> bool:
        torn_shown = self.log_says_torn or not self.torn_lines
        return not self.missing and not self.errors and self.log_exit == 0 and torn_shown and self.restart_clean


Answer = tuple[str, str, str]
"""An answered call: its tool (find, run, report), the id it answered with (choice_id, run_id, the id labelled), and
the client's name."""


async def _client(
    url: str, token: str, name: str, rng: random.Random, texts: list[str], got: Any, flying: list[int]
) -> None:
    """Call the server until it stops answering: each answered call handed to ``got``; ``flying[0]`` counts the
    calls asked and not answered yet (of every client)."""
    last: dict[str, Any] | None = None
    own: list[str] = []
    deadline = time.monotonic() + BURST_SECONDS
    try:
        async with session(url, token, name, timeout=60) as opened:
            while time.monotonic() < deadline:
                kind = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
                if kind == "run" and last and last.get("skills"):
                    arguments = {"name": last["skills"][0]["name"], "request": last["request"]}
                    arguments["choice_id"] = last["choice_id"]
                elif kind == "report" and own:
                    arguments = {"id": rng.choice(own), "outcome": rng.choice(["success", "failure"])}
                else:
                    kind, arguments = "find", {"request": f"{rng.choice(texts)} ({secrets.token_hex(3)})"}
                flying[0] += 1
                try:
                    answer, error = await call(opened, TOOLS[kind], arguments)
                finally:
                    flying[0] -= 1
                if error is not None:
                    if error == BUSY or error.startswith("tool: "):  # answered: busy, or a caller's mistake
                        continue
                    return  # the server is gone
                if kind == "find":
                    last = {**answer, "request": arguments["request"]}
                    own.append(answer["choice_id"])
                    got(("find", answer["choice_id"], name))
                elif kind == "run":
                    if answer.get("run_id"):
                        own.append(answer["run_id"])
                        got(("run", answer["run_id"], name))
                else:
                    got(("report", answer["labelled"], name))
    except Exception:  # noqa: BLE001 (the server killed mid-handshake, or the session torn down with it)
        return


def burst(
    url: str, token: str, clients: int, rng: random.Random, texts: list[str], got: Any, flying: list[int]
) -> threading.Thread:
    """``clients`` clients calling the server at once, in a thread of their own (it ends once they all stopped)."""
    seeds = [rng.random() for _ in range(clients)]

    async def everyone() -> None:
        names = [f"kill client {n}" for n in range(clients)]
        await asyncio.gather(
            *(_client(url, token, name, random.Random(seed), texts, got, flying) for name, seed in zip(names, seeds))
        )

    thread = threading.Thread(target=asyncio.run, args=(everyone(),), daemon=True)
    thread.start()
    return thread


def read_log(path: Path) -> tuple[list[Any], list[str]]:
    """The log's rows, and the warnings reading it gave."""
    from semif_agent.records import DecisionLog

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        rows = list(DecisionLog(path).read())
    return rows, [str(w.message) for w in said]


def missing_rows(rows: list[Any], answered: list[Answer]) -> tuple[int, list[str]]:
    """How many answered calls have their rows in ``rows``, and what each of the others lacks."""
    from semif_agent.records import DecisionRow, LabelRow, OutcomeRow

    shortlists = {str(r.run_id) for r in rows if isinstance(r, DecisionRow) and r.kind == "shortlist"}
    outcomes = {str(r.run_id) for r in rows if isinstance(r, OutcomeRow)}
    labels = {(str(r.run_id), r.by, r.source) for r in rows if isinstance(r, LabelRow)}
    missing = []
    for kind, id_, name in answered:
        if kind == "find" and id_ not in shortlists:
            missing.append(f"the shortlist row of find {id_}")
        elif kind == "run" and not (id_ in outcomes and (id_, name, "implicit") in labels):
            missing.append(
                f"the rows of run {id_}: outcome {id_ in outcomes}, {name}'s pick {(id_, name, 'implicit') in labels}"
            )
        elif kind == "report" and (id_, name, "client") not in labels:
            missing.append(f"the label row of {name}'s report on {id_}")
    return len(answered) - len(missing), missing


def tear(path: Path) -> None:
    """Append the first half of the last row with no newline: what a kill in the middle of its write leaves."""
    last = path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    with path.open("ab") as log:
        log.write(last[: len(last) // 2])


def semif_log(root: Path, env: dict[str, str] | None) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "semif_agent", "log", "-w", str(root), "--limit", "5"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return done.returncode, done.stderr


def restart(root: Path, env: dict[str, str] | None, errors: Path, text: str) -> str | None:
    """A new server on ``root`` answers a find: its choice_id (None, and the reason in ``errors``, when it does not)."""
    token = secrets.token_urlsafe(16)
    served = serve(root, token, errors, env)
    try:

        async def one_find() -> Any:
            async with session(served.url, token, "kill restart", timeout=120) as opened:
                return await call(opened, "find_skills", {"request": text})

        answer, error = asyncio.run(one_find())
    finally:
        served.stop()
    if error is not None:
        with errors.open("a", encoding="utf-8") as said:
            said.write(f"the restarted server's find failed: {error}\n")
        return None
    return str(answer["choice_id"])


def trial(root: Path, env: dict[str, str] | None, rng: random.Random, clients: int, torn: bool, scratch: Path) -> Trial:
    """One trial on the workspace ``root`` (see the docstring); ``torn``: append half a row after the kill."""
    texts = [item["text"] for item in load_requests()]
    log = root / "data" / "decisions.jsonl"
    found = Trial(torn_appended=torn)
    token = secrets.token_urlsafe(16)
    errors = scratch / "server-stderr.txt"
    served = serve(root, token, errors, env)
    answered: list[Answer] = []
    enough = threading.Condition()
    kill_after = rng.randint(5, 60)

    def got(answer: Answer) -> None:
        with enough:
            answered.append(answer)
            enough.notify_all()

    flying = [0]
    clients_running = burst(served.url, token, clients, rng, texts, got, flying)
    with enough:
        enough.wait_for(lambda: len(answered) >= kill_after or not clients_running.is_alive(), BURST_SECONDS)
    os.kill(served.process.pid, signal.SIGKILL)
    found.in_flight = flying[0]  # read as the kill lands: the calls it cut (give or take one being answered)
    served.process.wait()
    clients_running.join(120)
    if clients_running.is_alive():
        found.errors.append("the clients did not stop once the server was killed")
    with enough:
        kept = list(answered)
    for kind, _, _ in kept:
        found.answered[kind] = found.answered.get(kind, 0) + 1
    if torn:
        tear(log)
    rows, said = read_log(log)
    found.rows_found, found.missing = missing_rows(rows, kept)
    found.torn_lines = sum("torn last line" in line for line in said)
    found.errors += [line for line in said if "torn last line" not in line and "unreadable line" not in line]
    found.log_exit, stderr = semif_log(root, env)
    found.log_says_torn = "torn last line" in stderr
    if found.log_exit != 0:
        found.errors.append(f"semif log exited {found.log_exit}: {stderr.strip()[-200:]}")
    choice = restart(root, env, errors, texts[0])
    if choice is not None:
        rows, _ = read_log(log)
        found.restart_clean = missing_rows(rows, [("find", choice, "kill restart")])[1] == []
    if not found.restart_clean:
        found.errors.append(errors.read_text(encoding="utf-8", errors="replace").strip()[-300:])
    return found


def kill_workspace(where: Path) -> Path:
    """A workspace of the test fixtures' 24 real SKILL.md skills at ``where`` (kept when one is there)."""
    if not (where / "semif.toml").is_file():
        from skill_retrieval import router_workspace
        from tree_scale import FIXTURE_CORPUS, real_skills

        router_workspace(real_skills([FIXTURE_CORPUS]), where)
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--workspace", type=Path, help="made there, or reused when it holds a workspace")
    parser.add_argument("--seed", type=int, help="where the kills fall (default: a new draw each time)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the tally")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    trials = []
    with tempfile.TemporaryDirectory() as tmp:
        root = kill_workspace(args.workspace or Path(tmp) / "ws")
        for n in range(args.repeat):
            found = trial(root, None, rng, args.clients, torn=n % 2 == 1, scratch=Path(tmp))
            trials.append(found)
            if not args.json:
                calls = ", ".join(f"{count} {kind}" for kind, count in sorted(found.answered.items()))
                print(
                    f"trial {n + 1:>2}: answered {calls}, {found.in_flight} in flight at the kill; rows found {found.rows_found}, missing {len(found.missing)}; "
                    f"torn lines {found.torn_lines}{' (appended)' if found.torn_appended else ''}; semif log exit "
                    f"{found.log_exit}; restart {'clean' if found.restart_clean else 'FAILED'}",
                    flush=True,
                )
                for problem in [*found.missing, *found.errors]:
                    print(f"    {problem}", flush=True)
    answered = sum(sum(t.answered.values()) for t in trials)
    tally = {
        "seed": seed,
        "trials": len(trials),
        "answered_calls": answered,
        "in_flight_at_kills": sum(t.in_flight for t in trials),
        "rows_found": sum(t.rows_found for t in trials),
        "torn_lines": sum(t.torn_lines for t in trials),
        "torn_appended": sum(t.torn_appended for t in trials),
        "restarts_clean": sum(t.restart_clean for t in trials),
        "sound": sum(t.sound for t in trials),
    }
    if args.json:
        print(json.dumps({**tally, "each": [asdict(t) for t in trials]}, indent=2))
    else:
        print(
            f"{tally['trials']} kills (seed {seed}): {answered} answered calls, {tally['rows_found']} with their rows "
            f"({tally['in_flight_at_kills']} calls in flight at the kills); "
            f"{tally['torn_lines']} torn last lines read as such ({tally['torn_appended']} appended after a kill); "
            f"{tally['restarts_clean']} clean restarts; {tally['sound']} of {tally['trials']} trials sound"
        )
    sys.exit(0 if tally["sound"] == len(trials) else 1)


if __name__ == "__main__":
    main()
