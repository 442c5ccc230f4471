"""CONFORMANCE.md: what the suite compared and every difference, explained or not (`make conformance`)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from tests.conformance.explained import explanation_of
from tests.conformance.explained import unexplained as unexplained_of
from tests.conformance.framework import Outcome
from tests.conformance.grouping import Folded, fold
from tests.conformance.normalise import Difference

RESULTS: list[Outcome] = []


def write_report(path: Path, outcomes: list[Outcome]) -> None:
    outcomes = sorted(outcomes, key=lambda o: o.scenario)
    requests = sum(o.exchanges for o in outcomes)
    rows: list[tuple[str, str, str, str]] = []
    unexplained = sum(len(unexplained_of(o)) for o in outcomes)
    for o in outcomes:
        for f in fold(o.scenario, o.differences):
            reasons = {_reason(o.scenario, label, f) for label in f.labels}
            why = " / ".join(sorted(r or "**unexplained**" for r in reasons))
            rows.append((o.scenario, f.where(), f.describe(), why))
    lines = [
        "# Conformance with Apache Kafka 4.4",
        "",
        f"{len(outcomes)} scenarios, {requests} requests compared, {unexplained} unexplained differences",
        "",
    ]
    by_area: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_area[o.area].append(o)
    for area, group in sorted(by_area.items()):
        lines += [
            f"## {area}",
            "",
            "| scenario | requests | differences | unexplained |",
            "|---|---|---|---|",
        ]
        for o in group:
            n = sum(explanation_of(o.scenario, lb, d) is None for lb, d in o.differences)
            lines.append(f"| {o.scenario} | {o.exchanges} | {len(o.differences)} | {n} |")
        lines.append("")
    lines += ["## Differences", "", "| scenario | exchange | difference | why |", "|---|---|---|---|"]
    lines += [f"| {s} | {lb} | {_cell(d)} | {_cell(r)} |" for s, lb, d, r in rows]
    path.write_text("\n".join(lines) + "\n")


def _reason(scenario: str, label: str, f: Folded) -> str | None:
    for path in f.paths:
        e = explanation_of(scenario, label, Difference(path, None, None))
        if e is not None:
            return e.reason
    return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
