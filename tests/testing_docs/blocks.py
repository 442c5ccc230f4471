"""The fenced code blocks of a Markdown page: their language, their code and the line they start on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\s*$")
RUN_LANGUAGES = ("python", "sh")  # `text` blocks are shown, not run


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int  # of the opening fence, 1-based

    @property
    def is_test_module(self) -> bool:
        return re.search(r"^def test_", self.code, re.MULTILINE) is not None

    @property
    def id(self) -> str:
        return f"{self.language}-line-{self.line}"


def fenced_blocks(path: Path) -> list[Block]:
    blocks: list[Block] = []
    language: str | None = None
    start = 0
    lines: list[str] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = FENCE.match(line)
        if language is None:
            if match is not None:
                language, start, lines = match.group(1), number, []
        elif line.strip() == "```":
            blocks.append(Block(language, "\n".join(lines) + "\n", start))
            language = None
        else:
            lines.append(line)
    if language is not None:
        raise ValueError(f"{path}: the block opened on line {start} is never closed")
    return blocks
