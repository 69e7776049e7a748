"""The `examprep` command line: a typer app composed from one small module per command group.

    app.py        the app, its group (commands imported when they run or show their help) and the
                  one error handler; main, the console script
    usage.py      one line for a value typer rejected; plain help metavars; help texts from the
                  recipe and format tables (examprep.bundled, examprep.render.exports)
    solve.py      solve                      problems.py   topics, generate
    grade.py      grade                      sheet.py      sheet, secret
    quiz.py       quiz, stats, review        train.py      train, translate, attention-map
    verify.py     verify                     anki.py       anki
    lm.py         fill-mask, finetune

Each command parses its options, calls one function of its feature and renders what it returns;
heavy modules (numpy, sympy, torch, the generators and renderers) are imported inside the commands,
so `examprep --help` imports typer, app.py and usage.py (with the recipe and format tables) only:
the commands it lists are app.COMMANDS, the one table of commands (a command's module and its
summary). A command module never imports this package's names: the app imports the command
modules, not the reverse.
"""
from __future__ import annotations

from examprep.cli.app import app, main

__all__ = ["app", "main"]
