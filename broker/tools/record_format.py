"""kcat's `-f` format for `kafkito consume --format`: `%t %p %o %k %s %T %h %K %S`, `\\n`, `\\t`, `%%`.

A format is compiled once (an unknown token is a usage error) and rendered per record, with nothing
added: as with kcat, a format that should end each record with a newline says `\\n`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkito.broker.tools.output import ToolError

Piece = Callable[[Any], str]
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")


def _length(data: bytes | None) -> str:
    return "-1" if data is None else str(len(data))


def _headers(record: Any) -> str:
    """kcat's %h: `name=value` pairs, comma-separated (a null value is the name alone)."""
    return ",".join(k if v is None else f"{k}={_text(v)}" for k, v in record.headers or [])


TOKENS: dict[str, Piece] = {
    "t": lambda r: str(r.topic),
    "p": lambda r: str(r.partition),
    "o": lambda r: str(r.offset),
    "k": lambda r: _text(r.key),
    "s": lambda r: _text(r.value),
    "T": lambda r: str(r.timestamp),
    "h": _headers,
    "K": lambda r: _length(r.key),
    "S": lambda r: _length(r.value),
    "%": lambda r: "%",
}


def compile_format(fmt: str) -> Callable[[Any], str]:
    """The record's rendering by `fmt`; ToolError (usage, 2) for a token kcat does not have."""
    pieces: list[str | Piece] = []
    literal = ""
    i = 0
    while i < len(fmt):
        char = fmt[i]
        if char in "%\\" and i + 1 < len(fmt):
            token = fmt[i + 1]
            table: dict[str, Any] = TOKENS if char == "%" else ESCAPES
            if token not in table:
                known = " ".join(f"%{t}" for t in TOKENS if t != "%")
                raise ToolError(
                    f"--format {fmt!r}: unknown {char}{token} (kcat's tokens: {known}, \\n, \\t)", 2
                )
            found = table[token]
            if isinstance(found, str):
                literal += found
            else:
                if literal:
                    pieces.append(literal)
                    literal = ""
                pieces.append(found)
            i += 2
            continue
        if char == "%":
            raise ToolError(f"--format {fmt!r}: a lone % at the end (write %% for a percent sign)", 2)
        literal += char
        i += 1
    if literal:
        pieces.append(literal)

    def render(record: Any) -> str:
        return "".join(p if isinstance(p, str) else p(record) for p in pieces)

    return render
