"""The benches' fairness helper (``bench/_fair.py``): sides taking turns, medians with their spread, pinned peers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _fair import PeerProcess, Spread, check_pins, difference, interleave, table, versus


def test_the_sides_take_turns_after_an_uncounted_warm_up() -> None:
    order: list[str] = []
    spreads = interleave(
        {"ours": lambda: order.append("ours") or 1.0, "theirs": lambda: order.append("theirs") or 2.0}, rounds=3
    )
    assert order == ["ours", "theirs"] * 4  # one warm-up round, then three
    assert spreads["ours"].count == 3 and spreads["theirs"].count == 3


def test_a_load_that_grows_during_the_run_falls_on_both_sides_alike() -> None:
    """Run one side after the other on a machine that gets slower and the second looks slower; taking turns, not."""
    clock = iter(range(1, 1000))

    def same_work() -> float:
        return float(next(clock))  # the same work, taking longer each time the machine is asked

    spreads = interleave({"ours": same_work, "theirs": same_work}, rounds=20)
    assert spreads["theirs"].median / spreads["ours"].median < 1.1


def test_a_spread_gives_the_median_quartiles_and_range_never_the_best() -> None:
    spread = Spread.of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (spread.median, spread.q1, spread.q3, spread.low, spread.high, spread.count) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    assert spread.text() == "3.00 ms (IQR 2.00-4.00, range 1.00-5.00, n=5)"
    line = table({"ours": Spread.of([1.0]), "theirs": Spread.of([2.0])}, reference="theirs")
    assert "2.00x faster than theirs" in line


def test_sides_whose_spreads_overlap_are_said_to_differ_by_nothing_measurable() -> None:
    """As confinement's bench once printed "1.01x faster than in the host" and "-21 ms per semif run" for two sides
    whose rounds overlapped: a ratio or a difference is claimed only where the quartile ranges are apart."""
    confined = Spread.of([2300.0, 2330.0, 2380.0, 2420.0, 2480.0])
    host = Spread.of([2310.0, 2350.0, 2400.0, 2440.0, 2470.0])
    line = table({"confined child": confined, "in the host": host}, reference="in the host", digits=0)
    assert "against in the host: within the spread (no measurable difference)" in line
    assert "faster" not in line and "slower" not in line
    assert difference(confined, host, digits=0) == "within the spread (no measurable difference)"
    assert versus(host, confined, "confined") == "against confined: within the spread (no measurable difference)"


def test_sides_whose_spreads_are_apart_get_their_ratio_and_difference() -> None:
    confined = Spread.of([26.0, 27.0, 28.0, 29.0, 30.0])
    host = Spread.of([19.0, 20.0, 21.0, 22.0, 23.0])
    assert difference(confined, host) == "+7.0 ms"
    assert versus(confined, host, "in the host") == "1.33x slower than in the host"
    assert "1.33x faster than confined" in table({"confined": confined, "host": host}, reference="confined")


def test_a_per_item_side_counts_every_item() -> None:
    spreads = interleave({"ours": lambda: [1.0, 2.0, 3.0]}, rounds=2)
    assert spreads["ours"].count == 6 and spreads["ours"].median == 2.0


def test_a_peer_process_answers_one_round_at_a_time() -> None:
    with PeerProcess(sys.executable, "serve(lambda ask: {'twice': ask['n'] * 2})") as peer:
        assert peer.ask({"n": 2}) == {"twice": 4}
        assert peer.ask({"n": 5}) == {"twice": 10}


def test_a_peer_at_another_version_than_pinned_stops_the_bench(capsys: pytest.CaptureFixture[str]) -> None:
    installed = {"pytest": pytest.__version__}
    check_pins(sys.executable, installed)
    assert f"pytest {pytest.__version__}" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="the bench pins"):
        check_pins(sys.executable, {"pytest": "0.0.1"})
