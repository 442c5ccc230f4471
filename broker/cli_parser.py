"""The `kafkito` command's argument parser: usage that helps a person who mistyped.

A mistyped flag or command gets the usage of the subcommand it was meant for and the nearest
known name ("did you mean --from-beginning?"); a missing verb lists the verbs; no message shows a
Python attribute name.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing shutil (with bz2, lzma and zlib: ~1.5 ms
    of every start, as argparse builds a help formatter for each argument it adds)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = 0 if stdout is None else os.get_terminal_size(stdout.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, as wide as the terminal as argparse measures it (`_terminal_columns`)."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        width = _terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class KafkitoParser(argparse.ArgumentParser):
    """argparse with suggestions for unknown flags and commands, and verb lists for missing ones."""

    # The words being parsed (main sets them): a mistyped flag may surface as a missing required one.
    command_line: list[str] = []

    def __init__(self, **kw: Any) -> None:
        kw.setdefault("formatter_class", HelpFormatter)
        super().__init__(**kw)

    def error(self, message: str) -> NoReturn:
        message = _readable(message) + self._suggestion(message)
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} --help` shows every option)\n")

    def _suggestion(self, message: str) -> str:
        import difflib  # only for a mistyped command line: its imports cost every start a few ms

        known = [s for a in self._actions for s in a.option_strings] + _choices(self)
        words = _unknown_words(message) or [
            w for w in self.command_line if w.startswith("--") and w.split("=")[0] not in known
        ]
        for word in words:
            close = difflib.get_close_matches(word.split("=")[0], known, n=1, cutoff=0.6)
            if close:
                return f"; did you mean {close[0]}?"
        return ""


def _readable(message: str) -> str:
    prefix = "the following arguments are required: {"
    if message.startswith(prefix):
        verbs = message[len(prefix) :].split("}")[0].replace(",", ", ")
        return f"missing a command: one of {verbs}"
    return message


def _unknown_words(message: str) -> list[str]:
    if message.startswith("unrecognized arguments: "):
        return message.split(": ", 1)[1].split()
    if "invalid choice: " in message:
        return [message.split("invalid choice: ", 1)[1].split("'")[1]]
    return []


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    return [name for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices]


def walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser and every subcommand's parser under it."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from walk(child)


def finish(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Name each subcommand slot by its choices (not its dest) and let each parser know itself, so an
    unrecognized flag is reported with the usage of the subcommand it followed."""
    for each in walk(parser):
        each.set_defaults(cli_parser=each)
        for action in each._actions:
            if isinstance(action, argparse._SubParsersAction) and action.metavar is None:
                action.metavar = "{" + ",".join(action.choices) + "}"
    return parser


class VersionAction(argparse.Action):
    """`--version`: the installed distribution's version, looked up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("kafkito")
        except PackageNotFoundError:  # pragma: no cover - run from a checkout that was never installed
            found = "unknown (not installed)"
        print(f"kafkito {found}")
        parser.exit(0)
