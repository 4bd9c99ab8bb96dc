"""The skill trace is JSON lines split at "\\n" only: text a script printed, U+2028 and the other characters
:meth:`str.splitlines` takes for a line break among it, never cuts the host's record of the run into pieces, nor
makes a record of its own."""

from __future__ import annotations

import json
from pathlib import Path

from semif_agent.catalog import JsonlTraceWriter, read_spans

FORGED = json.dumps({"name": "skill.script", "attributes": {"note": "FORGED"}})
PRINTED = "ok\u2028" + FORGED + "\u2029" + FORGED + "\x85" + FORGED + "\x1c" + FORGED + "\u2028"


def test_a_span_whose_text_holds_line_separators_reads_back_whole_and_alone(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    writer = JsonlTraceWriter(path)
    with writer.span("skill.script", out=PRINTED):
        pass
    writer.close()
    raw = path.read_bytes()
    assert raw.count(b"\n") == 1
    assert "\u2028".encode() not in raw and "\u2029".encode() not in raw and "\x85".encode() not in raw
    assert len(raw.decode("utf-8").splitlines()) == 1  # a reader splitting at every line break sees one line too
    [span] = read_spans(path)
    assert span["name"] == "skill.script"
    assert span["attributes"]["out"] == PRINTED


def test_a_line_written_with_the_separators_raw_is_still_one_record(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    host = {"name": "skill.script", "attributes": {"skill.id": "custom@echo", "out": PRINTED}}
    path.write_text(json.dumps(host, ensure_ascii=False) + "\n\n", encoding="utf-8")  # as an older writer did
    assert read_spans(path) == [host]
