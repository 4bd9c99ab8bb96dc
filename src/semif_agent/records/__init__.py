"""The decision log and its rows: every decision, outcome, label and model call, typed.

- :mod:`.log`: :class:`DecisionLog`, the append-only JSON-lines file
  (crash-safe, locked, never through a link), which refuses a row of the
  wrong shape;
- :mod:`.rows` and :mod:`.calls`: one frozen builder per kind of row
  (``to_row()`` writes it, ``from_row()`` reads an old one leniently);
- :mod:`.kinds`: the table of kinds (:data:`RECORD_KINDS`) the CLI, the web
  view and the readers go by;
- :mod:`.runs`: the runs of a log as :class:`RunRecord`, people's labels
  folded in.

It sits just above the kernel: everything from ``llm`` up may import it.
"""

from .calls import ModelCallRow
from .kinds import RECORD_KINDS, RecordKind, check_row, is_run_record
from .log import SCHEMA_VERSION, DecisionLog, TornLineWarning
from .rows import DecisionRow, GenerateRow, LabelRow, OutcomeRow, ProposeRow
from .runs import (
    Label,
    RunRecord,
    RunRows,
    fold_labels,
    label_row,
    login_name,
    persons_labels,
    resolve_run_id,
    run_records,
    run_rows,
)

__all__ = [
    "DecisionLog",
    "TornLineWarning",
    "SCHEMA_VERSION",
    "RECORD_KINDS",
    "RecordKind",
    "check_row",
    "is_run_record",
    "DecisionRow",
    "OutcomeRow",
    "LabelRow",
    "ProposeRow",
    "GenerateRow",
    "ModelCallRow",
    "Label",
    "RunRecord",
    "RunRows",
    "fold_labels",
    "label_row",
    "login_name",
    "persons_labels",
    "resolve_run_id",
    "run_records",
    "run_rows",
]
