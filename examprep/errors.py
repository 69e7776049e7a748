"""Errors a user can cause. The CLI prints their message (one line) and exits non-zero.

Each message says what was wrong, where (parameter, file, line, question) and what was expected.
"""
from importlib.util import find_spec


class ExamprepError(Exception):
    """Base class of every error caused by user input. ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class Interrupted(ExamprepError):
    """Ctrl-C stopped a command: printed as it is ("interrupted: nothing was written"), exit 130
    (the shell's convention for a command stopped by Ctrl-C)."""

    exit_code = 130


class ParamError(ExamprepError, ValueError):
    """A parameter is missing, unknown, of the wrong type, or has an impossible value."""


MAX_SEED = 2**63 - 1       # the largest seed a sheet draws for itself (sheets.build.FRESH_SEED_BITS: 63 bits)


def check_seed(seed: int | None) -> None:
    """The one check of every command's --seed (None: not given): a whole number from 0 to MAX_SEED,
    the same bound for every command (torch.manual_seed, which the trainer's seeds reach, overflows
    past 2**64 − 1; a sheet's own seeds have 63 bits)."""
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise ParamError(f"--seed: expected a non-negative integer below 2**63, got {seed}")


class ShapeError(ParamError):
    """An array parameter has the wrong shape or does not fit another parameter's shape."""


class UnknownTopicError(ParamError):
    """A topic (solve topic or generator) that does not exist; the message suggests close names."""


# The optional packages of `pip install -e '.[train]'` (the reference model, `verify`, reading checkpoints)
TRAIN_PACKAGES = ("torch", "safetensors", "sacrebleu")
INSTALL_TRAIN = "pip install -e '.[train]'"


class MissingExtraError(ExamprepError):
    """A command that needs the trainer's packages, run on the base install."""


def missing_extra(err: ImportError, what: str) -> MissingExtraError | None:
    """The one-line error for ``what`` when ``err`` is one of the trainer's packages failing to
    import (detected by the ImportError itself, so a package that is present but broken is named
    too); None for any other ImportError (a bug of ours: its traceback is worth seeing)."""
    name = (getattr(err, "name", None) or "").split(".")[0]
    if name not in TRAIN_PACKAGES:
        return None
    return _missing(name, what)


def _missing(name: str, what: str) -> MissingExtraError:
    return MissingExtraError(f"{what} needs {name} ({name} is missing): install the trainer's packages with "
                             f"{INSTALL_TRAIN}")


def require_train(what: str) -> None:
    """MissingExtraError for ``what`` where one of the trainer's packages is not installed, found
    without importing it (torch's import takes seconds: a command checks this before it says it is
    loading anything)."""
    for name in TRAIN_PACKAGES:
        try:
            found = find_spec(name) is not None
        except ImportError as err:
            missing = missing_extra(err, what)
            if missing is None:
                raise
            raise missing from err
        if not found:
            raise _missing(name, what)
