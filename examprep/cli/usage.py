"""What the command line shows for a value typer (or its click core) rejected: one line naming the
option and what was expected; the help screens' formatter and plain metavars; and the help texts
made from the project's tables (the bundled recipes, the export formats), which `examprep --help`
and `sheet --help` list without importing the sheets or the renderers."""
from __future__ import annotations

import inspect
import re
from difflib import SequenceMatcher
from typing import Any

from typer._click import Context, HelpFormatter, exceptions as ce

from examprep.bundled import recipe_names
from examprep.render.exports import DEFAULT_FORMATS, EXPORTS

_RECIPES = ', '.join(recipe_names())        # the bank's listing, read once

USAGE_EXIT = 2

# `sheet`'s summary (its help's first paragraph and its line in `examprep --help`) and option helps
SHEET_SUMMARY = (f"Print a practice sheet from a bundled recipe ({_RECIPES}), a recipe file or "
                 f"topics: key, answer template and any of the formats {', '.join(EXPORTS)}.")
RECIPE_HELP = f"Bundled recipe ({_RECIPES}) or a recipe .toml file."
FORMAT_HELP = (f"Comma-separated, any of: {'; '.join(f'{e.name} ({e.title})' for e in EXPORTS.values())} "
               f"[default: {','.join(DEFAULT_FORMATS)}]. The key and answer template are always written.")

_EXPECTED = {"int": "an integer", "float": "a number", "bool": "true or false", "string": "text",
             "path": "a path"}


def paragraphs(text: str) -> str:
    """A command's help text with each paragraph on one line: the help screen wraps a line to the
    terminal, but keeps a docstring's own line breaks inside a paragraph, breaking it mid-sentence."""
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n") if p.strip())


def _option_name(param: Any) -> str:
    """How the user wrote (or would write) a parameter: its long option, else its metavar."""
    opts = list(getattr(param, "opts", None) or [])
    if getattr(param, "param_type_name", "") == "option" and opts:
        return max(opts, key=len)
    return (getattr(param, "metavar", None) or getattr(param, "name", "") or "value").upper()


def _near_options(err: Any) -> list[str]:
    """The options a mistyped one may have meant: those it begins (--lr → --lr-factor) if any, else
    click's close matches, closest first (difflib's ratio: --recpie → --recipe before --force);
    --help only when that is what was begun."""
    typed = err.option_name
    ctx = getattr(err, "ctx", None)
    known = [o for p in (ctx.command.get_params(ctx) if ctx is not None else [])
             for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ())) if o.startswith("-")]
    begun = sorted(o for o in known if o.startswith(typed) and o != typed and len(typed) > 2)
    picks = begun or sorted(err.possibilities or [], key=lambda o: (-SequenceMatcher(None, typed, o).ratio(), o))
    return [o for o in picks if o not in ("--help", "-h") or typed.startswith("--h")][:3]


def usage_line(err: Any) -> str:
    """One line for a value typer (or its click core) rejected: ``--opt: what was expected, got 'x'``."""
    if isinstance(err, ce.MissingParameter) and err.param is not None:
        kind = "option" if err.param.param_type_name == "option" else "argument"
        return f"{_option_name(err.param)}: missing {kind}; see --help"
    if isinstance(err, ce.BadParameter) and err.param is not None:
        cause = err.__cause__
        what = err.message
        errors = cause.errors() if hasattr(cause, "errors") else []
        if errors:
            kind = str(errors[0].get("type", "")).split("_")[0]
            got = errors[0].get("input")
            what = f"expected {_EXPECTED.get(kind, kind)}, got {got!r}" if kind in _EXPECTED else \
                str(errors[0].get("msg", what))
        return f"{_option_name(err.param)}: {what}"
    if isinstance(err, ce.NoSuchOption):
        near = _near_options(err)
        near = f"; did you mean {' or '.join(near)}?" if near else ""
        return f"{err.option_name}: no such option{near} (see --help)"
    if isinstance(err, ce.BadOptionUsage):
        message = err.message.rstrip(".")
        if "requires an argument" in message:
            message = "needs a value"
        elif "does not take a value" in message:
            message = "is a flag and takes no value"
        return f"{err.option_name}: {message[:1].lower() + message[1:]}"
    message = " ".join(err.format_message().split()).rstrip(".")
    extra = re.match(r"Got unexpected extra arguments? ?\(?s?\)? \((.*)\)$", message)
    if extra:
        words = extra.group(1).split()
        return f"unexpected extra argument{'s' if len(words) > 1 else ''} {' '.join(map(repr, words))}; see --help"
    if message.startswith("No such command"):
        return message[:1].lower() + message[1:].replace(". Did you mean", "; did you mean") + \
            ("" if "did you mean" in message.lower() else "; see examprep --help")
    return message[:1].lower() + message[1:]


_NO_BREAK_HYPHEN = "\u2011"


class NoHyphenBreakFormatter(HelpFormatter):
    """click's help formatter, except that a line never breaks after a hyphen: "sigfigs-strict",
    "carried-forward" or "item-analysis.json" split over two lines reads as two words. The text is
    wrapped with non-breaking hyphens, which are turned back into hyphens at the end."""

    def write_text(self, text: str) -> None:
        super().write_text(text.replace("-", _NO_BREAK_HYPHEN))

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = [(first, second.replace("-", _NO_BREAK_HYPHEN)) for first, second in rows]
        super().write_dl(rows, col_max, col_spacing)

    def getvalue(self) -> str:
        return super().getvalue().replace(_NO_BREAK_HYPHEN, "-")


class HelpContext(Context):
    """The context of examprep's group and commands: help through NoHyphenBreakFormatter."""

    formatter_class = NoHyphenBreakFormatter


_TYPE_METAVARS = {"<int>": "INTEGER", "<float>": "NUMBER", "<str>": "TEXT", "<list[str]>": "TEXT",
                  "<Path>": "PATH", "<path>": "PATH"}


def usage_piece(param: Any) -> str:
    """An argument as the usage line shows it, in the POSIX style: KEY when required, [KEY] when
    not, FILES... when it takes several (typer writes {KEY}, {topic}... and [SUBMISSION...]...)."""
    name = (param.metavar or param.name or "arg").upper().removesuffix("...")
    if param.nargs != 1:
        name += "..."
    return name if param.required else f"[{name}]"


def plain_metavar(param: Any) -> None:
    """Help shows INTEGER, NUMBER, TEXT (click's words) instead of typer's <int>, <float>, <str>,
    and nothing for a flag, which takes no value (typer printed <bool>)."""
    kind = getattr(param, "param_type_name", "")
    if kind == "argument":
        shown = param.display_type(None)
        if shown in _TYPE_METAVARS:        # an argument's label is its name; only the type column changes
            param.display_type = lambda ctx, word=_TYPE_METAVARS[shown]: word
        piece = usage_piece(param)
        param.get_usage_pieces = lambda ctx: [piece]
        if param.metavar is None:          # the Arguments section as the usage line: TOPIC..., not topic...
            param.metavar = piece.strip("[]")
        return
    if kind != "option" or param.metavar is not None:
        return
    if getattr(param, "is_flag", False):
        param.metavar = ""
        return
    shown = param.display_type(None)
    if shown in _TYPE_METAVARS:
        param.metavar = _TYPE_METAVARS[shown]
