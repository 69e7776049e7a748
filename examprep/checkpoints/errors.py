"""Errors the trainer's user can cause. Each message is one line: what, where, how to fix it.

All are `examprep.errors.ExamprepError`s, so the CLI prints them without a traceback.
"""
from __future__ import annotations

from examprep.errors import ExamprepError


class TrainError(ExamprepError):
    """Base class of the trainer's user errors."""


class ConfigError(TrainError, ValueError):
    """A model or training option has an impossible value or does not fit another option."""


class CorpusError(TrainError):
    """A parallel corpus that cannot be read: missing, empty, not UTF-8, or without any pair."""


class CheckpointError(TrainError):
    """A checkpoint directory that is missing files or whose parts do not fit together."""


class DeviceError(TrainError):
    """A device or precision that this machine does not have."""


class DivergedError(TrainError):
    """The loss became NaN or infinite; training stopped and the last good checkpoint was kept."""

    exit_code = 3


class WriteError(TrainError):
    """A checkpoint could not be written; the previous one is untouched."""

    exit_code = 4
