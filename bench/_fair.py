"""What every bench that compares with a peer shares, so that the comparison is fair.

- :func:`interleave` (and :func:`ainterleave` for coroutines) runs the sides
  one round each in turn (A, B, A, B, ...) on the same work, after a warm-up
  round that is not counted, so that a change in the machine's load falls on
  both sides alike instead of on whichever ran second;
- :class:`Spread` is what a bench reports for each side: the median with the
  quartiles and the extremes, never a best-of; :func:`versus` and
  :func:`difference` compare two sides by their medians, and say the
  difference is within the spread where their quartiles (IQRs) overlap,
  instead of claiming a ratio the noise could have made;
- :class:`Load` takes the load average at the start and at the end (a figure
  taken on a busy machine says so);
- :func:`peer_venv` gives the Python of a virtual environment under ``.bench/``
  holding the peer at pinned versions (installed on first use, checked and
  printed on every use: nothing unpinned is downloaded);
- :class:`PeerProcess` keeps that Python running as a child of the bench (the
  same process tree) and asks it for one round at a time, so the peer's rounds
  interleave with ours.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / ".bench"

Measured = float | list[float] | None
"""What a side returns for one round: ``None`` (the helper times the call, in ms), its own figure in ms, or
one figure per item of work (per request, per call), each in ms."""


@dataclass(frozen=True)
class Spread:
    """The median of a side's figures with their quartiles and extremes."""

    median: float
    q1: float
    q3: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values: Iterable[float]) -> Spread:
        ordered = sorted(values)
        if not ordered:
            raise ValueError("no figures to summarise")
        if len(ordered) == 1:
            q1 = q3 = ordered[0]
        else:
            q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
        return cls(statistics.median(ordered), q1, q3, ordered[0], ordered[-1], len(ordered))

    def text(self, unit: str = "ms", digits: int = 2) -> str:
        """``median unit (IQR q1-q3, min-max low-high, n)``."""
        f = f"{{:.{digits}f}}"
        return (
            f"{f.format(self.median)} {unit} (IQR {f.format(self.q1)}-{f.format(self.q3)}, "
            f"range {f.format(self.low)}-{f.format(self.high)}, n={self.count})"
        )

    def overlaps(self, other: Spread) -> bool:
        """Whether the two sides' quartile ranges (IQRs) overlap: their medians' difference is then within the
        spread of the rounds, and no side can be said to be faster."""
        return self.q1 <= other.q3 and other.q1 <= self.q3


WITHIN_THE_SPREAD = "within the spread (no measurable difference)"


def ratio(ours: Spread, theirs: Spread) -> str:
    """How much faster (or slower) ours is by the medians, as text."""
    if ours.median <= 0 or theirs.median <= 0:
        return "n/a"
    if theirs.median >= ours.median:
        return f"{theirs.median / ours.median:.2f}x faster"
    return f"{ours.median / theirs.median:.2f}x slower"


def versus(ours: Spread, theirs: Spread, name: str) -> str:
    """Ours against the side called ``name``: a ratio of the medians, or, where the IQRs overlap, that there is no
    measurable difference."""
    if ours.overlaps(theirs):
        return f"against {name}: {WITHIN_THE_SPREAD}"
    return f"{ratio(ours, theirs)} than {name}"


def difference(ours: Spread, theirs: Spread, unit: str = "ms", digits: int = 1) -> str:
    """What ours adds to theirs by the medians (``+6.5 ms``), or, where the IQRs overlap, that there is no
    measurable difference."""
    if ours.overlaps(theirs):
        return WITHIN_THE_SPREAD
    return f"{ours.median - theirs.median:+.{digits}f} {unit}"


class Load:
    """The 1-minute load average at the start (on creation) and at the end (:meth:`text`)."""

    def __init__(self) -> None:
        self.start = os.getloadavg()[0]

    def text(self) -> str:
        return (
            f"load average {self.start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, {os.cpu_count()} cores"
        )


def _figures(measured: Measured, elapsed_ms: float) -> list[float]:
    if measured is None:
        return [elapsed_ms]
    if isinstance(measured, list):
        return [float(x) for x in measured]
    return [float(measured)]


def interleave(sides: dict[str, Callable[[], Measured]], rounds: int, warmup: int = 1) -> dict[str, Spread]:
    """Each side's figures over ``rounds`` rounds, the sides taking turns in each (after ``warmup`` rounds not counted)."""
    figures: dict[str, list[float]] = {name: [] for name in sides}
    for index in range(warmup + rounds):
        for name, side in sides.items():
            started = time.perf_counter()
            measured = side()
            elapsed = (time.perf_counter() - started) * 1000
            if index >= warmup:
                figures[name] += _figures(measured, elapsed)
    return {name: Spread.of(values) for name, values in figures.items()}


async def ainterleave(
    sides: dict[str, Callable[[], Awaitable[Measured]]], rounds: int, warmup: int = 1
) -> dict[str, Spread]:
    """:func:`interleave` for sides that are coroutine functions (run on the caller's event loop)."""
    figures: dict[str, list[float]] = {name: [] for name in sides}
    for index in range(warmup + rounds):
        for name, side in sides.items():
            started = time.perf_counter()
            measured = await side()
            elapsed = (time.perf_counter() - started) * 1000
            if index >= warmup:
                figures[name] += _figures(measured, elapsed)
    return {name: Spread.of(values) for name, values in figures.items()}


def table(spreads: dict[str, Spread], reference: str | None = None, unit: str = "ms", digits: int = 2) -> str:
    """One line per side: its spread, and how it compares with ``reference`` when given (:func:`versus`)."""
    width = max(len(name) for name in spreads) + 2
    lines = []
    for name, spread in spreads.items():
        against = f"   {versus(spread, spreads[reference], reference)}" if reference and name != reference else ""
        lines.append(f"  {name:<{width}}{spread.text(unit, digits)}{against}")
    return "\n".join(lines)


def peer_venv(name: str, pins: dict[str, str], no_deps: tuple[str, ...] = ()) -> Path:
    """The Python of ``.bench/<name>`` holding the distributions ``pins`` (name to exact version).

    Installed with pip on first use (those named in ``no_deps`` without their
    dependencies: the peer's heavy extras the bench never imports); on every use each pinned distribution's
    installed version is checked (a mismatch stops the bench) and printed on
    stderr, so a figure always comes with the peer's version.
    """
    venv = BENCH / name
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"installing {', '.join(f'{d}=={v}' for d, v in pins.items())} into {venv}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        install = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        bare = [f"{d}=={v}" for d, v in pins.items() if d in no_deps]
        if bare:
            subprocess.run([*install, "--no-deps", *bare], check=True)
        subprocess.run([*install, *(f"{d}=={v}" for d, v in pins.items() if d not in no_deps)], check=True)
    check_pins(python, pins)
    return python


def check_pins(python: Path | str, pins: dict[str, str]) -> None:
    """Stop unless ``python`` has each distribution of ``pins`` at its version; print them."""
    script = "import json, sys\nfrom importlib.metadata import version\nprint(json.dumps({d: version(d) for d in sys.argv[1:]}))"
    found = json.loads(
        subprocess.run([str(python), "-c", script, *pins], capture_output=True, text=True, check=True).stdout
    )
    wrong = {d: v for d, v in found.items() if v != pins[d]}
    if wrong:
        raise SystemExit(f"the peer's environment has {wrong}, the bench pins {pins}: remove it to reinstall")
    print("peer: " + ", ".join(f"{d} {v}" for d, v in found.items()), file=sys.stderr)


class PeerProcess:
    """A child Python that serves a peer: it runs ``script``, which reads one JSON request a line on stdin and
    writes one JSON answer a line on stdout (``serve`` below is the loop it uses)."""

    SERVE = (
        "import json, sys\n"
        "def serve(handle):\n"
        "    for line in sys.stdin:\n"
        "        print(json.dumps(handle(json.loads(line))), flush=True)\n"
    )

    def __init__(self, python: Path | str, script: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [str(python), "-c", self.SERVE + script, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )

    def ask(self, request: object) -> object:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the peer's process ended (exit status {self.process.wait()})")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)

    def __enter__(self) -> PeerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
