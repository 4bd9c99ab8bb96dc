"""`semif mcp` over streamable HTTP under load: many concurrent clients, against the same calls made in-process.

    .venv/bin/python bench/mcp_load.py --skills 1600 --clients 50 --seconds 120 [--workspace WS]
        [--mix find=60,load=20,run=10,report=10] [--think S] [--processes P] [--json]

The workspace holds ``--skills`` real SKILL.md skills (the distinct skills of
the test fixtures and of the public collections ``bench/skill_collections.py``
fetches, as ``bench/mcp.py`` counts them; past the real ones, variants of
them, ``bench/tree_scale.py``'s generator). With ``--workspace WS`` it is
made there, or reused when WS already holds a workspace. Its tree is stored
first (``semif tree refresh``), then ``semif mcp -w WS --http 127.0.0.1:0``
is started as a child process (its token given through ``SEMIF_MCP_TOKEN``)
and answers one find before the clock starts (its skills embedded and
loaded).

``--clients`` clients then call it for ``--seconds`` seconds, each with a
session of its own (the official MCP SDK's streamable HTTP client) under a
client name of its own, spread over ``--processes`` client processes. Each
call is drawn from ``--mix``: ``find_skills`` on a request of
``bench/data/skill_requests.jsonl`` (half of them made unseen by a suffix,
so that the embedding cache does not answer every one), ``load_skill`` and
``run_skill`` of the best skill of the client's last find (with its
``choice_id``; a find comes first when the client has none), and
``report_outcome`` labelling one of the client's own finds or runs. With
``--think S`` a client waits between calls (a time drawn around S seconds,
as an agent's model thinks between tool calls), and makes its first call at a
moment drawn within the first S seconds (independent agents do not all call
at once); by default it calls again as soon as it is answered, which measures
what the server can take.

Reported, per tool: calls, answered calls per second, p50 / p95 / p99
latency of the answered calls, and the failures by kind: ``busy`` (a tool
error whose text starts with "busy": the server asking to retry later) apart
from every other error. Then the server's resident memory sampled every few
seconds (first, half-way, max, last) and the CPU the server and the clients
used (the server's also per answered call): on a 2-core machine the clients
compete with the server for the same cores, which the output says.

The floor: the same mix in this process through ``semif_agent.Router`` on the
same workspace, one call at a time (the clients' names taken in turn), for up
to ``--floor-seconds``: what a call costs with no transport and no other
caller (its CPU per call too, beside the server's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import resource
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from _mcp_serve import BUSY, call, cpu_seconds, serve, session  # noqa: E402 (sibling scripts, found once their folder is on the path)
from skill_retrieval import load_requests  # noqa: E402 (as above)
from tree_scale import rss  # noqa: E402 (as above)

TOOLS = {"find": "find_skills", "load": "load_skill", "run": "run_skill", "report": "report_outcome"}
DEFAULT_MIX = "find=60,load=20,run=10,report=10"
SAMPLE_SECONDS = 2.0
FIND_TARGET_MS = 150.0

Record = tuple[str, float, str | None]
"""One call: its tool (find, load, run, report), its latency in ms, and what went wrong (None: answered)."""


def parse_mix(text: str) -> dict[str, float]:
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name.strip() not in TOOLS:
            raise SystemExit(f"--mix names tools among {', '.join(TOOLS)}, not {name.strip()!r}")
        try:
            mix[name.strip()] = float(weight)
        except ValueError:
            raise SystemExit(f"--mix gives each tool a weight (find=60), not {part!r}") from None
    if sum(mix.values()) <= 0:
        raise SystemExit("--mix needs a tool with a positive weight")
    return mix


def workspace(size: int, where: Path) -> Path:
    """A workspace of ``size`` real skills at ``where`` (kept as it is when one is there already), its tree stored."""
    if not (where / "semif.toml").is_file():
        from skill_retrieval import router_workspace
        from tree_scale import catalog, default_corpora, real_skills

        real = real_skills(default_corpora())
        print(f"making a workspace of {size:,} skills ({min(size, len(real)):,} real) at {where}", file=sys.stderr)
        router_workspace(catalog(real, size), where)
    subprocess.run(
        [sys.executable, "-m", "semif_agent", "tree", "refresh", "-w", str(where)], check=True, capture_output=True
    )
    return where


@dataclass
class Client:
    """One client's state: its name, its last find, and the ids of its own finds and runs (what it reports on)."""

    name: str
    rng: random.Random
    texts: list[str]
    tag: str
    think: float = 0.0
    last_find: dict[str, Any] | None = None
    own: list[str] = field(default_factory=list)
    asked: int = 0

    def request(self) -> str:
        self.asked += 1
        text = self.rng.choice(self.texts)
        return f"{text} ({self.tag}-{self.name}-{self.asked})" if self.rng.random() < 0.5 else text

    def next_call(self, mix: dict[str, float]) -> tuple[str, dict[str, Any]]:
        """The next call the mix draws, as a tool and its arguments (a find when what it draws needs one first)."""
        kind = self.rng.choices(list(mix), weights=list(mix.values()))[0]
        found = self.last_find or {}
        best = found["skills"][0]["name"] if found.get("skills") else None
        if kind == "load" and best:
            return kind, {"name": best, "choice_id": found["choice_id"]}
        if kind == "run" and best:
            return kind, {"name": best, "request": found["request"], "choice_id": found["choice_id"]}
        if kind == "report" and self.own:
            return kind, {"id": self.rng.choice(self.own[-10:]), "outcome": self.rng.choice(["success", "failure"])}
        return "find", {"request": self.request()}

    def pause(self) -> float:
        """Seconds to think before the next call: drawn around ``think`` (none when it is 0)."""
        return self.rng.expovariate(1 / self.think) if self.think > 0 else 0.0

    def answered(self, kind: str, arguments: dict[str, Any], answer: Any) -> None:
        if kind == "find" and isinstance(answer, dict):
            self.last_find = {**answer, "request": arguments["request"]}
            self.own.append(answer["choice_id"])
        elif kind == "run" and isinstance(answer, dict) and answer.get("run_id"):
            self.own.append(answer["run_id"])


async def _client_loop(opened: Any, client: Client, mix: dict[str, float], seconds: float) -> list[Record]:
    records: list[Record] = []
    deadline = time.monotonic() + seconds
    if (
        client.think > 0
    ):  # agents that think between calls do not all call at the same moment: each comes in its own time
        await asyncio.sleep(client.rng.uniform(0, client.think))
    while time.monotonic() < deadline:
        kind, arguments = client.next_call(mix)
        started = time.perf_counter()
        answer, error = await call(opened, TOOLS[kind], arguments)
        records.append((kind, (time.perf_counter() - started) * 1000, error))
        if error is None:
            client.answered(kind, arguments, answer)
        await asyncio.sleep(min(client.pause(), max(0.0, deadline - time.monotonic())))
    return records


async def _clients(
    url: str, token: str, clients: list[Client], mix: dict[str, float], seconds: float, ready: Any, go: Any
) -> list[Record]:
    """Open every client's session, say how many opened on ``ready``, wait for ``go``, then run them all for
    ``seconds`` (each client a task of its own, its session opened and closed in it)."""
    opened: list[bool] = []
    started = asyncio.Event()

    async def one(client: Client) -> list[Record]:
        try:
            async with session(url, token, client.name) as own:
                opened.append(True)
                if len(opened) == len(clients):
                    ready.put(len(opened))
                await started.wait()
                return await _client_loop(own, client, mix, seconds)
        except Exception as exc:  # noqa: BLE001 (a session that failed counts as one failed call)
            opened.append(False)
            if len(opened) == len(clients):
                ready.put(sum(opened))
            return [("find", 0.0, f"session {type(exc).__name__}: {str(exc)[:80]}")]

    tasks = [asyncio.create_task(one(client)) for client in clients]
    await asyncio.to_thread(go.wait)
    started.set()
    return [record for records in await asyncio.gather(*tasks) for record in records]


def client_process(
    url: str,
    token: str,
    names: list[str],
    texts: list[str],
    tag: str,
    think: float,
    mix: dict[str, float],
    seconds: float,
    ready: Any,
    go: Any,
    out: Any,
) -> None:
    """A client process: its clients' records, and the CPU it used once the clock started, put on ``out``."""
    clients = [Client(name, random.Random(name), texts, tag, think) for name in names]
    before: list[float] = []

    async def run() -> list[Record]:
        def started() -> None:
            go.wait()
            usage = resource.getrusage(resource.RUSAGE_SELF)
            before.append(usage.ru_utime + usage.ru_stime)

        threading.Thread(target=started, daemon=True).start()
        return await _clients(url, token, clients, mix, seconds, ready, go)

    try:
        records = asyncio.run(run())
    except Exception as exc:  # noqa: BLE001 (a process whose sessions failed says so, the bench counts it)
        ready.put(0)
        out.put({"records": [], "cpu": 0.0, "failed": f"{type(exc).__name__}: {exc}"[:200]})
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.put({"records": records, "cpu": usage.ru_utime + usage.ru_stime - (before[0] if before else 0.0)})


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


def summary(records: list[Record], seconds: float) -> dict[str, dict[str, Any]]:
    """Per tool (and ``all``): calls, answered per second, p50 / p95 / p99 ms of the answered, failures by kind."""
    found: dict[str, dict[str, Any]] = {}
    for kind in [*TOOLS, "all"]:
        mine = [r for r in records if kind in ("all", r[0])]
        answered = [ms for _, ms, error in mine if error is None]
        errors: dict[str, int] = {}
        for _, _, error in mine:
            if error is not None:
                errors[error] = errors.get(error, 0) + 1
        found[kind] = {
            "calls": len(mine),
            "per_second": round(len(answered) / seconds, 2),
            "p50_ms": round(percentile(answered, 0.5), 1),
            "p95_ms": round(percentile(answered, 0.95), 1),
            "p99_ms": round(percentile(answered, 0.99), 1),
            "busy": errors.pop(BUSY, 0),
            "errors": errors,
        }
    return found


def sample(pid: int, stop: threading.Event, into: list[tuple[float, int, float]]) -> None:
    """Every few seconds until ``stop``: the time, the server's resident memory and its CPU seconds so far."""
    while True:
        into.append((time.monotonic(), rss(pid), cpu_seconds(pid)))
        if stop.wait(SAMPLE_SECONDS):
            into.append((time.monotonic(), rss(pid), cpu_seconds(pid)))
            return


def load_run(
    ws: Path, args: argparse.Namespace, mix: dict[str, float], texts: list[str], tag: str, errors: Path
) -> dict[str, Any]:
    """The clients against `semif mcp --http` on ``ws``: per tool figures, the server's memory and both sides' CPU."""
    token = secrets.token_urlsafe(24)
    served = serve(ws, token, errors)
    try:
        started = time.perf_counter()

        async def first_find() -> None:
            async with session(served.url, token, "bench warm-up") as opened:
                _, error = await call(opened, "find_skills", {"request": texts[0]})
                if error is not None:
                    raise SystemExit(f"the server's first find failed: {error}")

        asyncio.run(first_find())
        warm = time.perf_counter() - started
        context = multiprocessing.get_context("spawn")
        ready, out, go = context.Queue(), context.Queue(), context.Event()
        names = [f"bench client {n:03d}" for n in range(args.clients)]
        processes = [
            context.Process(
                target=client_process,
                args=(
                    served.url,
                    token,
                    names[p :: args.processes],
                    texts,
                    tag,
                    args.think,
                    mix,
                    args.seconds,
                    ready,
                    go,
                    out,
                ),
            )
            for p in range(min(args.processes, args.clients))
        ]
        for process in processes:
            process.start()
        opened = sum(ready.get(timeout=600) for _ in processes)
        samples: list[tuple[float, int, float]] = []
        stop = threading.Event()
        sampler = threading.Thread(target=sample, args=(served.process.pid, stop, samples), daemon=True)
        sampler.start()
        go.set()
        results = [out.get(timeout=args.seconds + 900) for _ in processes]
        stop.set()
        sampler.join()
        for process in processes:
            process.join(60)
        wall = samples[-1][0] - samples[0][0]
    finally:
        served.stop()
    records: list[Record] = [(kind, ms, error) for result in results for kind, ms, error in result["records"]]
    memory = [m for _, m, _ in samples]
    answered = sum(1 for r in records if r[2] is None) or 1
    server_cpu = samples[-1][2] - samples[0][2]
    return {
        "server_ready_s": round(warm, 1),
        "sessions_opened": opened,
        "client_processes": len(processes),
        "failed_processes": [r["failed"] for r in results if "failed" in r],
        "tools": summary(records, args.seconds),
        "server_rss_mb": {
            "first": round(memory[0] / 2**20, 1),
            "half_way": round(memory[len(memory) // 2] / 2**20, 1),
            "max": round(max(memory) / 2**20, 1),
            "last": round(memory[-1] / 2**20, 1),
            "samples": len(memory),
            "every": [round(m / 2**20, 1) for m in memory],
        },
        "server_cores": round(server_cpu / wall, 2),
        "client_cores": round(sum(r["cpu"] for r in results) / wall, 2),
        "server_cpu_ms_per_call": round(server_cpu * 1000 / answered, 1),
    }


def floor_run(ws: Path, args: argparse.Namespace, mix: dict[str, float], texts: list[str], tag: str) -> dict[str, Any]:
    """The same mix through ``Router`` in this process, one call at a time (see the docstring)."""
    from semif_agent import Router
    from semif_agent.errors import SemifError

    router = Router(ws, source="mcp", client="mcp client")
    router.find(texts[0])  # warm, as the server was: the tree loaded, the skills embedded
    methods = {"find": router.find, "load": router.load, "run": router.run, "report": router.report}
    clients = [Client(f"floor client {n:03d}", random.Random(n), texts, tag) for n in range(args.clients)]
    records: list[Record] = []
    deadline = time.monotonic() + args.floor_seconds
    started = time.monotonic()
    cpu = time.process_time()
    turn = 0
    while time.monotonic() < deadline:
        client = clients[turn % len(clients)]
        turn += 1
        kind, arguments = client.next_call(mix)
        began = time.perf_counter()
        try:
            answer: Any = methods[kind](**arguments, client=client.name)
            answer = answer.to_dict() if hasattr(answer, "to_dict") else answer
            error = None
        except SemifError as exc:
            answer, error = None, f"tool: {str(exc)[:80]}"
        records.append((kind, (time.perf_counter() - began) * 1000, error))
        if error is None:
            client.answered(kind, arguments, answer)
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    answered = sum(1 for r in records if r[2] is None) or 1
    return {
        "skills": len(router.skills),
        "seconds": round(elapsed, 1),
        "tools": summary(records, elapsed),
        "cpu_ms_per_call": round(cpu * 1000 / answered, 1),
    }


def print_tools(tools: dict[str, Any]) -> None:
    """One line a tool: calls, answered a second, p50 / p95 / p99 ms, busy answers and the other failures."""
    print(f"  {'tool':<7} {'calls':>7} {'per s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'busy':>5}  errors")
    for kind, row in tools.items():
        errors = ", ".join(f"{n} {what}" for what, n in row["errors"].items()) or "0"
        print(
            f"  {kind:<7} {row['calls']:>7} {row['per_second']:>7} {row['p50_ms']:>8} {row['p95_ms']:>8} "
            f"{row['p99_ms']:>8} {row['busy']:>5}  {errors}"
        )


def show(report: dict[str, Any]) -> None:
    load, floor = report["served"], report["floor"]
    print(
        f"semif mcp --http: {report['skills']:,} skills, {report['clients']} clients in "
        f"{load['client_processes']} processes, {report['seconds']:.0f} s, mix {report['mix']}, "
        f"think {report['think']} s, {report['log_rows_at_start']:,} rows in the log "
        f"(server ready in {load['server_ready_s']} s; {load['sessions_opened']} sessions opened)"
    )
    print_tools(load["tools"])
    memory = load["server_rss_mb"]
    print(
        f"  server memory (RSS, every {SAMPLE_SECONDS:.0f} s): first {memory['first']} MB, half-way "
        f"{memory['half_way']} MB, max {memory['max']} MB, last {memory['last']} MB ({memory['samples']} samples)"
    )
    print(
        f"  CPU: the server used {load['server_cores']} cores ({load['server_cpu_ms_per_call']} ms a call), "
        f"the clients {load['client_cores']}, of "
        f"{os.cpu_count()}: {'the clients compete with the server for the same cores' if (os.cpu_count() or 1) <= 4 else 'cores to spare'}"
    )
    find_p95 = load["tools"]["find"]["p95_ms"]
    verdict = "within" if find_p95 <= FIND_TARGET_MS else "over"
    print(f"  find p95 {find_p95} ms: {verdict} the {FIND_TARGET_MS:.0f} ms target")
    for failed in load["failed_processes"]:
        print(f"  a client process failed: {failed}")
    print(
        f"floor: the same mix through Router in one process, one call at a time, {floor['seconds']} s "
        f"({floor['cpu_ms_per_call']} ms of CPU a call)"
    )
    print_tools(floor["tools"])
    print(report["load_average"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1_600)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--workspace", type=Path, help="made there, or reused when it holds a workspace")
    parser.add_argument("--mix", default=DEFAULT_MIX, help=f"tool weights (default {DEFAULT_MIX})")
    parser.add_argument(
        "--think", type=float, default=0.0, help="mean seconds a client waits between calls (default 0: none)"
    )
    parser.add_argument("--processes", type=int, default=5, help="client processes the clients are spread over")
    parser.add_argument("--floor-seconds", type=float, default=30, help="how long the in-process floor runs")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    args = parser.parse_args()
    if args.clients < 1 or args.processes < 1 or args.seconds <= 0:
        raise SystemExit("--clients and --processes take 1 or more, --seconds a positive number")
    mix = parse_mix(args.mix)
    texts = [item["text"] for item in load_requests()]
    tag = uuid.uuid4().hex[:8]  # the unseen requests of this run: none is in the embedding cache
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(args.skills, args.workspace or Path(tmp) / "ws")
        log = ws / "data" / "decisions.jsonl"
        rows = log.read_bytes().count(b"\n") if log.is_file() else 0  # report_outcome reads the whole log
        served = load_run(ws, args, mix, texts, tag, Path(tmp) / "server-stderr.txt")
        floor = floor_run(ws, args, mix, texts, tag)
    report = {
        "skills": floor["skills"],
        "clients": args.clients,
        "seconds": args.seconds,
        "mix": args.mix,
        "think": args.think,
        "log_rows_at_start": rows,
        "served": served,
        "floor": floor,
        "load_average": f"load average {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, "
        f"{os.cpu_count()} cores",
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        show(report)


if __name__ == "__main__":
    main()
