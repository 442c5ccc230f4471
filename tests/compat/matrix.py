"""The client x scenario result table, collected during the run and written as COMPATIBILITY.md."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import Enum

SCENARIOS: list[tuple[str, str]] = [
    ("bootstrap", "bootstrap + metadata"),
    ("topic-admin", "create / delete topic"),
    ("produce-none", "produce keys, headers, timestamps: uncompressed"),
    ("produce-gzip", "produce keys, headers, timestamps: gzip"),
    ("produce-snappy", "produce keys, headers, timestamps: snappy"),
    ("produce-lz4", "produce keys, headers, timestamps: lz4"),
    ("produce-zstd", "produce keys, headers, timestamps: zstd"),
    ("consume-earliest", "consume from earliest"),
    ("consume-latest", "consume from latest"),
    ("group-rebalance", "group of 3 on 6 partitions, one leaves, one joins: each record once"),
    ("commit-fetch", "commit + fetch committed offsets"),
    ("list-describe-groups", "list / describe groups"),
    ("broker-restart", "broker restart mid-group: members rejoin, offsets kept"),
    ("cross-client-group", "cross-client group (range), default initial rebalance delay"),
]
SCENARIO_IDS = [s for s, _ in SCENARIOS]


class Outcome(Enum):
    PASS = "pass"
    FAIL = "FAIL"
    NOT_APPLICABLE = "n/a"


@dataclass(frozen=True, slots=True)
class Cell:
    outcome: Outcome
    note: str = ""


class Matrix:
    """Results by (scenario, client); complete when every client has every scenario."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.clients: dict[str, str] = {}  # name -> version, in column order
        self.cells: dict[tuple[str, str], Cell] = {}

    def add_client(self, name: str, version: str) -> None:
        with self._lock:
            self.clients.setdefault(name, version)

    def record(self, scenario: str, client: str, outcome: Outcome, note: str = "") -> None:
        assert scenario in SCENARIO_IDS, scenario
        with self._lock:
            self.cells[(scenario, client)] = Cell(outcome, note)

    def missing(self, expected_clients: list[str]) -> list[tuple[str, str]]:
        return [(s, c) for s in SCENARIO_IDS for c in expected_clients if (s, c) not in self.cells]

    def render(self, header_note: str = "") -> str:
        names = list(self.clients)
        lines = [
            "# Compatibility matrix",
            "",
            "Written by the compatibility suite (`make compat`, `tests/compat/`) from its own run;",
            "do not edit by hand. Each client is driven in its own idiom against a kafkito broker;",
            "`n/a` is a scenario the client cannot express, with the reason in the notes.",
        ]
        if header_note:
            lines += ["", header_note]
        lines += [
            "",
            "| scenario | " + " | ".join(f"{n} {self.clients[n]}" for n in names) + " |",
            "|---|" + "---|" * len(names),
        ]
        notes: list[str] = []
        for sid, title in SCENARIOS:
            row = []
            for n in names:
                cell = self.cells.get((sid, n))
                if cell is None:
                    row.append("not run")
                    continue
                text = cell.outcome.value
                if cell.outcome is Outcome.FAIL:
                    text = "**FAIL**"
                if cell.note:
                    note = f"{n}, {sid}: {_one_line(cell.note)}"
                    if note not in notes:
                        notes.append(note)
                    text += f" [{notes.index(note) + 1}]"
                row.append(text)
            lines.append(f"| {title} | " + " | ".join(row) + " |")
        counts = {o: sum(1 for c in self.cells.values() if c.outcome is o) for o in Outcome}
        lines += [
            "",
            f"{counts[Outcome.PASS]} pass, {counts[Outcome.FAIL]} fail, "
            f"{counts[Outcome.NOT_APPLICABLE]} not applicable.",
        ]
        if notes:
            lines += ["", "Notes:", ""] + [f"{i}. {n}" for i, n in enumerate(notes, 1)]
        return "\n".join(lines) + "\n"


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
