"""How the tools print: aligned tables as Kafka's tools print them, JSON for scripts, one-line errors."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO


class ToolError(Exception):
    """A failure to report as one line (what is wrong and what to do); the tool exits with `status`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def cell(value: Any) -> str:
    """A table cell: `-` for a value that is not there, as kafka-consumer-groups.sh prints it."""
    if value is None or value == "":
        return "-"
    return str(value)


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Columns padded to their widest cell, two spaces apart (the last column is not padded)."""
    cells = [list(columns)] + [[cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = []
    for row in cells:
        padded = [value.ljust(widths[i]) for i, value in enumerate(row[:-1])] + [row[-1]]
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)


def print_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], out: TextIO | None = None) -> None:
    print(table(columns, rows), file=out)


def print_json(value: Any, out: TextIO | None = None) -> None:
    print(json.dumps(value, default=str), file=out)


def records_as_dicts(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
    """Table rows as JSON objects keyed by the column names, lower-case with underscores."""
    keys = [c.lower().replace("-", "_").lstrip("#") for c in columns]
    return [dict(zip(keys, row, strict=True)) for row in rows]


def emit(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], as_json: bool, out: TextIO | None = None
) -> None:
    """A table for a person, or (`--json`) one JSON array of objects."""
    if as_json:
        print_json(records_as_dicts(columns, rows), out)
    else:
        print_table(columns, rows, out)
