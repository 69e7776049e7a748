"""`examprep solve --batch`: one {"id", "topic", "params"} JSON object per input line, one answer line
per input, in order; a bad line gets {"id", "error"} and never stops the batch."""
from __future__ import annotations

import json
from typing import Any, Iterable, TextIO

from examprep.errors import ExamprepError, ParamError
from examprep.solve.contract import answer_only, jsonable


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def run_batch(lines: Iterable[str], out: TextIO) -> int:
    """Answer one {"id", "topic", "params"} JSON object per line; return the number rejected.

    Blank lines are skipped; every other line gets exactly one output line, in order. A line that
    cannot be answered gets {"id", "error"} and the batch goes on.
    """
    rejected = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        ident: Any = None
        try:
            try:
                obj = json.loads(line, parse_constant=_reject_constant)
            except (json.JSONDecodeError, ValueError) as err:
                raise ParamError(f"line {number}: invalid JSON ({err})") from None
            if not isinstance(obj, dict):
                raise ParamError(f"line {number}: expected a JSON object with id, topic and params")
            ident = obj.get("id")
            if "topic" not in obj:
                raise ParamError("topic: missing")
            answer = answer_only(obj["topic"], obj.get("params", {}))
            text = json.dumps({"id": ident, "answer": jsonable(answer)}, allow_nan=False, ensure_ascii=False)
        except ExamprepError as err:
            rejected += 1
            text = json.dumps({"id": ident, "error": str(err)}, ensure_ascii=False)
        except Exception as err:  # a bug must not stop the batch: report it on this line
            rejected += 1
            text = json.dumps({"id": ident, "error": f"internal error: {type(err).__name__}: {err}"}, ensure_ascii=False)
        out.write(text + "\n")
    out.flush()
    return rejected
