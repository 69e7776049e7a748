"""A strict reader of Moodle's embedded-answers (cloze) syntax, written from Moodle's documentation
("Embedded Answers (Cloze) question type") and the grammar qtype_multianswer states as regular
expressions — never from examprep's exporter. It refuses what Moodle would refuse or misread:

    field        = "{" [weight] ":" type ":" alternative ("~" alternative)* "}"
    weight       = digits (default 1)
    alternative  = [ "=" | "%" grade "%" ] answer [ "#" feedback ]
    grade        = one of question_bank::fraction_options_full (100, 90, 83.33333, …, 5, 0)
    NUMERICAL    answer = number [ ":" number ]      number = -?(d+[.,]?d*|[.,]d+)([eE][-+]?d+)?

Inside an answer or feedback the characters } # ~ / " \\ are escaped with a backslash: an
unescaped "}" ends the field (so a LaTeX brace in feedback must be escaped; "{" needs no escape),
an unescaped "~" starts the next alternative and an unescaped "#" the feedback. A field whose type
Moodle does not know, an empty answer, a second "#", a grade not in the list, no 100 % answer, or
an answer or feedback whose braces do not balance (a "}" left unescaped closed the field early) is
an error.
"""
from __future__ import annotations

import re

TYPES = {"SHORTANSWER", "SA", "MW", "SHORTANSWER_C", "SAC", "MWC", "NUMERICAL", "NM", "MULTICHOICE", "MC",
         "MULTICHOICE_V", "MCV", "MULTICHOICE_H", "MCH", "MULTICHOICE_S", "MCS", "MULTICHOICE_VS", "MCVS",
         "MULTICHOICE_HS", "MCHS", "MULTIRESPONSE", "MR", "MULTIRESPONSE_H", "MRH", "MULTIRESPONSE_S", "MRS",
         "MULTIRESPONSE_HS", "MRHS"}
NUMERIC = {"NUMERICAL", "NM"}
GRADES = {"100", "90", "83.33333", "80", "75", "70", "66.66667", "60", "50", "40", "33.33333", "30", "25", "20",
          "16.66667", "14.28571", "12.5", "11.11111", "10", "5", "0"}
NUMBER = r"-?(?:[0-9]+[.,]?[0-9]*|[.,][0-9]+)(?:[eE][-+]?[0-9]+)?"
START = re.compile(r"\{([0-9]*):([A-Z_]+):")


class ClozeError(AssertionError):
    pass


def _split(body: str, sep: str) -> list[str]:
    """Split on ``sep`` where it is not escaped."""
    out, cur, i = [], [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            if i + 1 >= len(body):
                raise ClozeError(f"a lone backslash ends {body!r}")
            cur.append(body[i:i + 2])
            i += 2
            continue
        if c == sep:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    return out + ["".join(cur)]


def _open_braces(raw: str) -> int:
    """Unescaped "{" in ``raw`` (an answer or feedback as written) not closed by an escaped "\\}"."""
    depth, i = 0, 0
    while i < len(raw):
        if raw.startswith("\\}", i):
            depth = max(depth - 1, 0)
            i += 2
            continue
        if raw[i] == "\\":
            i += 2
            continue
        depth += raw[i] == "{"
        i += 1
    return depth


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_alternative(raw: str, kind: str) -> dict:
    if raw.startswith("="):
        grade, rest = "100", raw[1:]
    elif raw.startswith("%"):
        m = re.match(r"%([^%]*)%", raw)
        if not m:
            raise ClozeError(f"an unclosed grade in {raw!r}")
        grade, rest = m.group(1), raw[m.end():]
        if grade not in GRADES:
            raise ClozeError(f"grade {grade}% is not one Moodle accepts (fraction_options_full)")
    else:
        grade, rest = "0", raw
    answer, *feedback = _split(rest, "#")
    if len(feedback) > 1:
        raise ClozeError(f"an unescaped '#' in the feedback of {raw!r}")
    if not answer:
        raise ClozeError(f"an empty answer in {raw!r}")
    alt = {"grade": float(grade), "answer": unescape(answer), "feedback": unescape(feedback[0]) if feedback else ""}
    for what, text in (("answer", answer), ("feedback", feedback[0] if feedback else "")):
        if _open_braces(text):     # "{" needs no escape, so a "}" left unescaped ended the field early
            raise ClozeError(f"unbalanced braces in the {what} {alt[what]!r}: an unescaped '}}' closed the field early")
    if kind in NUMERIC:
        m = re.fullmatch(rf"({NUMBER})(?::({NUMBER}))?", answer)
        if not m:
            raise ClozeError(f"not a Moodle number (and tolerance): {answer!r}")
        alt["value"] = float(m.group(1).replace(",", "."))
        alt["tolerance"] = float(m.group(2).replace(",", ".")) if m.group(2) else 0.0
    return alt


def parse_questiontext(text: str) -> list[dict]:
    """Every field of a cloze question text, in order; ClozeError for anything Moodle would not read
    as the exporter meant."""
    fields, pos = [], 0
    while True:
        m = START.search(text, pos)
        if not m:
            break
        if m.group(2) not in TYPES:
            raise ClozeError(f"unknown cloze type {m.group(2)!r} at {m.start()}")
        i, body = m.end(), []
        while True:
            if i >= len(text):
                raise ClozeError(f"the field at {m.start()} never closes")
            c = text[i]
            if c == "\\":
                body.append(text[i:i + 2])
                i += 2
                continue
            if c == "}":
                break
            body.append(c)
            i += 1
        alts = [parse_alternative(a, m.group(2)) for a in _split("".join(body), "~")]
        if sum(a["grade"] == 100 for a in alts) != 1:
            raise ClozeError(f"the field at {m.start()} needs exactly one 100 % answer")
        fields.append({"weight": int(m.group(1) or 1), "type": m.group(2), "alternatives": alts})
        pos = i + 1
    return fields
