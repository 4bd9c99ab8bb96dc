"""What keeping before-images costs a run: the snapshot of the write dirs, and the store's before-images.

    python bench/undo_snapshot.py [--files 1000] [--size 2048] [--repeat 20]

A starter workspace gets FILES drafts of SIZE bytes each; the script times
(median of REPEAT) what a run does before its skill acts: the snapshot
(sizes, times, inodes of the write dirs' files), then the before-images from
the workspace's store, on a first run (an empty store: every file is read and
stored) and on a later one (nothing changed: no file is read); then one whole
``todos.add`` run on the lexical engine (act lock, both snapshots, the
store, the undo record), which reads again only the to-do file the run
before it changed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from semif_agent.engine import create_engine
from semif_agent.loop.before_images import ImageStore
from semif_agent.loop.observe import observe
from semif_agent.loop.runner import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace


def median_ms(repeat: int, work: Callable[[], object], setup: Callable[[], object] = lambda: None) -> float:
    times = []
    for _ in range(repeat):
        setup()
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "ws"
        create_workspace(root)
        drafts = root / "data" / "drafts"
        drafts.mkdir(parents=True, exist_ok=True)
        for index in range(args.files):
            (drafts / f"draft-{index:05d}.txt").write_bytes(f"{index:08d}".encode().ljust(args.size, b"x"))
        time.sleep(0.1)  # the files' last change settles (a key is trusted once it is older than the read)
        ws = Workspace.load(root)
        store = ImageStore.of(ws)
        snap = observe(ws.write_roots, base=ws.root)
        stat_only = median_ms(args.repeat, lambda: observe(ws.write_roots, base=ws.root))
        first = median_ms(
            args.repeat, lambda: store.keep(snap).release(), setup=lambda: shutil.rmtree(store.folder, True)
        )
        store.keep(snap).release()
        later_images = store.keep(snap)
        later_images.release()
        later = median_ms(args.repeat, lambda: store.keep(snap).release())
        runner = SkillRunner(ws, engine=create_engine("lexical"))
        runner.run("Remind me to water the plants")  # the warm worker starts
        whole = median_ms(args.repeat, lambda: runner.run("Remind me to water the plants", skill="todos.add"))
        kept = store.size()
    print(f"write dirs: {args.files} files of {args.size} bytes")
    print(f"snapshot (stat only)                      {stat_only:8.1f} ms")
    print(f"before-images, first run (empty store)    {first:8.1f} ms")
    print(f"before-images, later run (nothing changed){later:8.1f} ms   files read: {later_images.read}")
    print(f"one todos.add run (lexical)               {whole:8.1f} ms")
    print(f"store after the runs                      {kept / 1024 / 1024:8.1f} MiB")


if __name__ == "__main__":
    main()
