"""The kernel's small shared mechanisms: clipping text, counting with a noun, replacing a file in one step."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from semif_agent._files import replace_file
from semif_agent._text import clip, plural


def test_clip_keeps_short_text_and_cuts_long_text_at_a_word():
    assert clip("  two\n words ", 20) == "two words"
    assert clip("the quarterly report is ready", 16) == "the quarterly…"
    assert clip("abcdefghijklmnop", 8) == "abcdefg…"  # no word boundary in the second half: cut mid-word
    assert clip("first line\nsecond line is long", 16, one_line=False) == "first line…"
    assert len(clip("word " * 100, 50)) <= 50


def test_plural_gives_the_noun_in_the_number_of_its_count():
    assert [plural(n, "label") for n in (0, 1, 2)] == ["0 labels", "1 label", "2 labels"]
    assert plural(1, "category", "categories") == "1 category"
    assert plural(3, "category", "categories") == "3 categories"


def test_replace_file_writes_whole_files_and_keeps_permissions(tmp_path: Path):
    new = tmp_path / "new.json"
    replace_file(new, "{}\n")
    assert new.read_text(encoding="utf-8") == "{}\n"
    assert stat.S_IMODE(new.stat().st_mode) == 0o600  # a file that did not exist is private
    shared = tmp_path / "shared.txt"
    shared.write_text("old", encoding="utf-8")
    os.chmod(shared, 0o644)
    replace_file(shared, b"new bytes", fsync=True)
    assert shared.read_bytes() == b"new bytes" and stat.S_IMODE(shared.stat().st_mode) == 0o644


def test_a_failed_replace_leaves_the_old_file_and_no_temporary(tmp_path: Path):
    target = tmp_path / "settings.toml"
    target.write_text("kept", encoding="utf-8")
    with pytest.raises(TypeError):
        replace_file(target, 42)  # type: ignore[arg-type]  # a bad argument on purpose
    assert target.read_text(encoding="utf-8") == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["settings.toml"]
