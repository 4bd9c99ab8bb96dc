"""The decision log and its rows: every decision, outcome, label and model call, typed.

- :mod:`.log`: :class:`DecisionLog`, the append-only JSON-lines file
  (crash-safe, locked, never through a link), which refuses a row of the
  wrong shape;
- :mod:`.rows` and :mod:`.calls`: one frozen pydantic model per kind of row
  (``to_row()`` writes it, ``from_row()`` reads an old one leniently);
- :mod:`.kinds`: the table of kinds (:data:`RECORD_KINDS`) the CLI, the web
  view and the readers go by, and :data:`AnyRow`, the union of the row
  models told apart by ``kind``, with the one :data:`ROW_ADAPTER` that reads
  and checks them;
- :mod:`.runs`: the runs of a log as :class:`RunRecord`, people's labels
  folded in.

It sits just above the kernel: everything from ``llm`` up may import it.
"""

from .calls import ModelCallRow
from .kinds import (
    ASSESS_KIND,
    LABEL_KIND,
    OUTCOME_KIND,
    RECORD_KINDS,
    ROUTE_KIND,
    ROW_ADAPTER,
    UNDO_KIND,
    UNLABEL_KIND,
    AnyRow,
    RecordKind,
    check_row,
    is_run_record,
)
from .log import SCHEMA_VERSION, DecisionLog, Joined, TornLineWarning
from .rows import DecisionRow, GenerateRow, LabelRow, LogRow, OutcomeRow, ProposeRow, UndoRow, UnlabelRow
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
    "Joined",
    "TornLineWarning",
    "SCHEMA_VERSION",
    "RECORD_KINDS",
    "RecordKind",
    "AnyRow",
    "ROW_ADAPTER",
    "LogRow",
    "ROUTE_KIND",
    "ASSESS_KIND",
    "OUTCOME_KIND",
    "LABEL_KIND",
    "UNDO_KIND",
    "UNLABEL_KIND",
    "check_row",
    "is_run_record",
    "DecisionRow",
    "OutcomeRow",
    "LabelRow",
    "ProposeRow",
    "GenerateRow",
    "UndoRow",
    "UnlabelRow",
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
