"""Where a session reads and writes: the prompt (rich on a terminal, plain and echoed when piped),
the exam's deadline as an alarm, and the commands a student may type at a prompt."""
from __future__ import annotations

import re
import signal
import sys
import threading
from typing import Any

from rich.text import Text

from examprep.render import terminal

class TimeUp(Exception):
    """The exam's time ran out while a prompt was waiting."""


class Quit(Exception):
    """The student typed q (or the input ended)."""


COMMANDS = {"?": "hint", "hint": "hint", "s": "solution", "solution": "solution", "skip": "skip",
            "q": "quit", "quit": "quit", "exit": "quit"}


def command_or_answer(line: str) -> tuple[str | None, str]:
    """A line typed at an answer prompt: (its command, "") for a command word in any case, else
    (None, the answer), which grade's reader reads as it reads an answer file's text. A command
    word after "=" is an answer: "=s" answers "s" (a choice, or a variable named so), "= Skip"
    answers "Skip"; "=" before anything else stays in the answer, as in an answer file."""
    command = COMMANDS.get(line.lower())
    if command:
        return command, ""
    escaped = line[1:].strip()
    if line.startswith("=") and escaped.lower() in COMMANDS:
        return None, escaped
    return None, line


class Terminal:
    """Where a session reads and writes. On a TTY: rich prompts with line editing; otherwise
    plain prompts, and each answer read is echoed so a piped transcript reads like a session."""

    def __init__(self, *, no_color: bool = False, interactive: bool | None = None, width: int | None = None):
        self.console = terminal.console(no_color, markup=False)     # the text shown is questions' and students'
        if width is not None:
            self.console.width = width
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        if self.interactive:
            try:
                import readline  # noqa: F401  (line editing and history for input())
            except ImportError:  # pragma: no cover - not on every platform
                pass

    def show(self, *renderables: Any, **kw: Any) -> None:
        self.console.print(*renderables, **kw)

    def ask(self, prompt: str, *, timeout: float | None = None) -> str:
        """One line from the student (stripped). Raises EOFError at the end of input,
        TimeUp when ``timeout`` seconds pass first (an exam's deadline)."""
        if timeout is not None and timeout <= 0:
            raise TimeUp()
        with _alarm(timeout):
            if self.interactive:
                line = input(self._readline_prompt(prompt))
            else:
                self.console.print(prompt, end="", markup=False, highlight=False)
                raw = sys.stdin.readline()
                if raw == "":
                    self.console.print()
                    raise EOFError
                line = raw.rstrip("\r\n")
                # the echo shows control characters escaped: piped text must not drive the terminal
                shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in line)
                self.console.print(shown, markup=False, highlight=False)
        return line.strip()


    def _readline_prompt(self, prompt: str) -> str:
        """The prompt as the terminal shows it (bold, unless colour is off), given to input() itself.

        rich's console.input prints the prompt and then calls input(""), so readline believed
        the cursor was at the start of the line: Enter on an empty line then printed no newline
        and the next message or panel began on the prompt's line. The escape codes are wrapped
        in \\001…\\002 so readline does not count them as columns."""
        with self.console.capture() as captured:
            self.console.print(Text(prompt, style="bold"), end="", markup=False, highlight=False)
        shown = captured.get()
        if "readline" in sys.modules:
            shown = re.sub(r"(\x1b\[[0-9;]*[A-Za-z])", "\x01\\1\x02", shown)
        return shown


class _alarm:
    """Raise TimeUp in the main thread after ``seconds`` (SIGALRM); a no-op where there is no
    SIGALRM or off the main thread (the deadline is then checked after each answer)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.armed = False

    def __enter__(self) -> "_alarm":
        if (self.seconds is not None and hasattr(signal, "setitimer")
                and threading.current_thread() is threading.main_thread()):
            def fire(signum: int, frame: Any) -> None:
                raise TimeUp()
            self.previous = signal.signal(signal.SIGALRM, fire)
            signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 0.001))
            self.armed = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
