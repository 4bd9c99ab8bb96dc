"""``bench/README.md`` says how to run each bench as the bench itself takes it: the flags of its ``--help``, and
the commands its figures came from, runnable as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
README = (BENCH / "README.md").read_text(encoding="utf-8")

ASK_THE_PARSER = """
import argparse, json, runpy, sys

parse_args = argparse.ArgumentParser.parse_args


def answer(self, args=None, namespace=None):
    print(json.dumps({"usage": " ".join(self.format_usage().split())}), flush=True)
    parse_args(self, args, namespace)  # a flag it does not take, or a value it refuses, exits 2 with argparse's line
    sys.exit(0)  # parsed: the bench itself is not run


argparse.ArgumentParser.parse_args = answer
path = sys.argv[1]
sys.argv = [path, *sys.argv[2:]]
sys.path.insert(0, path.rsplit("/", 1)[0])  # as `python bench/NAME.py` puts the bench's folder first
runpy.run_path(path, run_name="__main__")
"""


def ask_the_parser(bench: str, args: list[str]) -> tuple[str, subprocess.CompletedProcess[str]]:
    """The bench's usage line as its ``--help`` gives it, and how its parser took ``args`` (the bench is not run)."""
    done = subprocess.run(
        [sys.executable, "-c", ASK_THE_PARSER, str(BENCH / bench), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=BENCH.parent,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert done.stdout, f"{bench} printed nothing: {done.stderr[-2000:]}"
    return json.loads(done.stdout.splitlines()[0])["usage"], done


def run_cells() -> dict[str, str]:
    """Each bench in the README's tables, with its ``run`` cell (the last one of its row)."""
    cells = {}
    for row in re.findall(r"^\| `(\w+\.py)` \|.*\| `(python bench/[^`]*)` \|$", README, re.M):
        cells[row[0]] = row[1]
    return cells


def heading_commands() -> list[str]:
    """The commands the last figures came from, as the headings over them give them."""
    return re.findall(r"^### `(\w+\.py[^`]*)`", README, re.M)


def test_every_bench_is_listed_with_how_to_run_it() -> None:
    helpers_paragraph = README[README.index("Helpers, not benches:") :].split("\n\n")[0]
    helpers = set(helpers_paragraph.split("`")[1::2])
    benches = {path.name for path in BENCH.glob("*.py")} - helpers
    assert sorted(benches - run_cells().keys()) == []
    assert len(heading_commands()) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("bench", sorted(run_cells()))
def test_a_benchs_flags_are_listed_as_its_help_gives_them(bench: str) -> None:
    usage, _ = ask_the_parser(bench, [])
    assert usage.startswith(f"usage: {bench} [-h]")
    assert run_cells()[bench] == f"python bench/{bench}{usage.removeprefix(f'usage: {bench} [-h]')}"


@pytest.mark.slow
@pytest.mark.parametrize("command", heading_commands())
def test_the_command_over_each_figure_runs_as_written(command: str) -> None:
    bench, *args = shlex.split(command)
    _, parsed = ask_the_parser(bench, args)
    assert parsed.returncode == 0, parsed.stderr
