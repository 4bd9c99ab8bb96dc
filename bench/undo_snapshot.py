"""What keeping before-images costs a run: the snapshot of the write dirs with and without the files' bytes.

    python bench/undo_snapshot.py [--files 1000] [--size 2048] [--repeat 20]

A starter workspace gets FILES drafts of SIZE bytes each; the script times
(median of REPEAT) the snapshot a run takes before its skill acts, as it was
(sizes, times, small texts) and with before-images (every file's bytes up to
1 MiB a file, 32 MiB in all), and then one whole ``todos.add`` run on the
lexical engine (act lock, both snapshots, the undo record).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from semif_agent.engine import create_engine
from semif_agent.loop.observe import observe
from semif_agent.loop.runner import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace


def median_ms(repeat: int, work) -> float:
    times = []
    for _ in range(repeat):
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
            (drafts / f"draft-{index:05d}.txt").write_bytes(b"x" * args.size)
        ws = Workspace.load(root)
        plain = median_ms(args.repeat, lambda: observe(ws.write_roots, base=ws.root, texts=True))
        images = median_ms(args.repeat, lambda: observe(ws.write_roots, base=ws.root, texts=True, images=True))
        runner = SkillRunner(ws, engine=create_engine("lexical"))
        runner.run("Remind me to water the plants")  # the warm worker starts
        whole = median_ms(args.repeat, lambda: runner.run("Remind me to water the plants", skill="todos.add"))
    print(f"write dirs: {args.files} files of {args.size} bytes")
    print(f"snapshot without before-images  {plain:8.1f} ms")
    print(f"snapshot with before-images     {images:8.1f} ms")
    print(f"one todos.add run (lexical)     {whole:8.1f} ms")


if __name__ == "__main__":
    main()
