"""`semif mcp --http` killed with SIGKILL mid-burst: every answered call's rows are in the log, the log reads (a torn
last line read as one), and the next server on the workspace starts clean and answers."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from mcp_kill import trial


@pytest.mark.slow
@pytest.mark.parametrize("torn", [False, True], ids=["killed", "killed-mid-write"])
def test_a_server_killed_mid_burst_loses_only_calls_not_yet_answered(corpus_workspace, tmp_path, torn):
    root, env = corpus_workspace
    found = trial(root, env, random.Random(7 + torn), clients=5, torn=torn, scratch=tmp_path)
    assert sum(found.answered.values()) >= 5 and found.answered.get("find", 0) >= 1, found
    assert found.missing == [] and found.errors == [], found
    assert found.log_exit == 0
    if torn:  # half a row left by the kill: skipped and said to be a torn last line, by the reader and `semif log`
        assert found.torn_lines == 1 and found.log_says_torn
    assert found.restart_clean  # answered a find, its row whole on a line of its own (after a torn one too)
