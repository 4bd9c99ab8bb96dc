"""The disk watch walks a run's writable folders without ever looking through a link the run swapped in."""

from __future__ import annotations

import os

from semif_agent.sandbox import _disk


def test_the_watch_counts_what_is_written_and_never_walks_a_folder_swapped_for_a_link(tmp_path, monkeypatch) -> None:
    writable, outside = tmp_path / "writable", tmp_path / "outside"
    (writable / "a").mkdir(parents=True)
    (writable / "a" / "note.txt").write_bytes(b"x" * 10_000)
    outside.mkdir()
    (outside / "big.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    assert sum(size for _, size in _disk.folder_entries(str(writable))) >= 10_000

    real_scandir, listed = os.scandir, []

    class Swapping:  # the run swaps its folder for a link as soon as the watch has listed the top folder
        def __init__(self, path) -> None:
            self.scanner = real_scandir(path)

        def __enter__(self):
            return self.scanner.__enter__()

        def __iter__(self):
            return iter(self.scanner)

        def __exit__(self, *exc) -> None:
            self.scanner.__exit__(*exc)
            listed.append(True)
            if len(listed) == 1:
                os.rename(writable / "a", writable / "a-moved")
                os.symlink(outside, writable / "a")

    monkeypatch.setattr(_disk.os, "scandir", Swapping)
    counted = sum(size for _, size in _disk.folder_entries(str(writable)))
    assert listed and counted < 1024 * 1024, "the watch walked the folder a link points at"
