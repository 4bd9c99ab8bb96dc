"""The run's snapshot takes set-uid and set-gid bits off what the run made (a second layer under the
sandbox's filter, which refuses setting them): a write dir is idmapped, so a run's files are root's on disk."""

from __future__ import annotations

import os
import stat

from semif_agent.loop.observe import observe


def test_a_set_id_bit_on_a_file_the_run_made_or_changed_is_taken_off_and_the_rest_is_left(tmp_path):
    root = tmp_path / "out"
    root.mkdir()
    kept = root / "kept"
    kept.write_bytes(b"before the run")
    os.chmod(kept, 0o4755)  # there before the run: not the run's doing, left as it is
    before = observe((root,))
    (root / "deep").mkdir()
    made = root / "deep" / "made"
    made.write_bytes(b"\x7fELF")
    os.chmod(made, 0o6755)
    plain = root / "plain"
    plain.write_bytes(b"x")
    os.chmod(plain, 0o1755)
    os.symlink(kept, root / "link")
    after = observe((root,), since=before)
    assert stat.S_IMODE(made.stat().st_mode) == 0o755
    assert stat.S_IMODE(plain.stat().st_mode) == 0o1755
    assert stat.S_IMODE(kept.stat().st_mode) == 0o4755  # not through the link either
    assert "out/deep/made" in after.files
