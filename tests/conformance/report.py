"""CONFORMANCE.md: what the suite compared, every difference (the unexplained ones first, then each
explanation once with the differences it covers in every scenario), and the waits and retries the
framework made on each broker (`make conformance`)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from tests.conformance.explained import explanation_of
from tests.conformance.explained import unexplained as unexplained_of
from tests.conformance.framework import Outcome
from tests.conformance.grouping import Folded, fold, fold_labels
from tests.conformance.normalise import Difference

RESULTS: list[Outcome] = []


def write_report(path: Path, outcomes: list[Outcome]) -> None:
    path.write_text("\n".join(report_lines(outcomes)) + "\n")


def report_lines(outcomes: list[Outcome]) -> list[str]:
    outcomes = sorted(outcomes, key=lambda o: o.scenario)
    requests = sum(o.exchanges for o in outcomes)
    unexplained = sum(len(unexplained_of(o)) for o in outcomes)
    lines = [
        "# Conformance with Apache Kafka 4.4",
        "",
        f"{len(outcomes)} scenarios, {requests} requests compared, {unexplained} unexplained differences",
        "",
        "Each scenario sends the same requests to a Kafka 4.4 node and to kafkito and compares the answers "
        "field by field (tests/conformance; generated ids, times, ports and the text of error messages are "
        "compared by presence). A difference fails the suite unless tests/conformance/explained.toml "
        "gives its reason; a scenario that stops on an exception fails it too.",
        "",
    ]
    lines += _scenario_tables(outcomes)
    lines += _unexplained(outcomes)
    lines += _explained(outcomes)
    lines += _steps(outcomes)
    lines += _compared(outcomes)
    return lines


def _scenario_tables(outcomes: list[Outcome]) -> list[str]:
    by_area: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_area[o.area].append(o)
    lines: list[str] = []
    for area, group in sorted(by_area.items()):
        lines += [
            f"## {area}",
            "",
            "| scenario | requests | differences | unexplained |",
            "|---|---|---|---|",
        ]
        for o in group:
            n = len(unexplained_of(o))
            lines.append(f"| {o.scenario} | {o.exchanges} | {len(o.differences)} | {n} |")
        lines.append("")
    return lines


def _unexplained(outcomes: list[Outcome]) -> list[str]:
    rows = []
    for o in outcomes:
        left = unexplained_of(o)
        rows += [(o.scenario, f.where(), f.describe()) for f in fold(o.scenario, left)]
    lines = ["## Unexplained differences", ""]
    if not rows:
        return [*lines, "None.", ""]
    lines += ["| scenario | exchange | difference |", "|---|---|---|"]
    lines += [f"| {s} | {_cell(w)} | {_cell(d)} |" for s, w, d in rows]
    return [*lines, ""]


def _explained(outcomes: list[Outcome]) -> list[str]:
    """Each explanation once, with the differences it covers folded across scenarios: the same field
    with the same two values is one line whatever the scenario, entry or version it was seen in."""
    by_reason: dict[str, list[tuple[str, Folded]]] = defaultdict(list)
    for o in outcomes:
        covered: dict[str, list[tuple[str, Difference]]] = defaultdict(list)
        for label, d in o.differences:
            e = explanation_of(o.scenario, label, d)
            if e is not None:
                covered[e.reason].append((f"{o.scenario}: {label}", d))
        for reason, diffs in covered.items():
            by_reason[reason] += [(o.scenario, f) for f in fold(o.scenario, diffs)]
    lines = ["## Explained differences", ""]
    if not by_reason:
        return [*lines, "None.", ""]
    for reason, found in by_reason.items():
        merged: dict[tuple[str, str, str], Folded] = {}
        for _, f in found:
            key = (f.path, f.kafka, f.kafkito)
            m = merged.setdefault(key, Folded("", f.path, f.kafka, f.kafkito))
            m.paths |= f.paths
            m.labels += [lb for lb in f.labels if lb not in m.labels]
        lines.append(f"- **{_cell(reason)}**")
        lines += [f"  - {_cell(line)}" for line in _entry_lines(list(merged.values()))]
    return [*lines, ""]


def _entry_lines(found: list[Folded]) -> list[str]:
    """The differences of one explanation: when they are fields of one entry of one exchange (a
    config's value, source and synonyms), one line for the entry; otherwise one line each."""
    where = {m.where() for m in found}
    paths = [next(iter(m.paths)) for m in found if len(m.paths) == 1]
    prefix = _common_entry(paths) if len(where) == 1 and len(paths) == len(found) > 1 else ""
    if not prefix:
        return [f"{m.where()}: {m.describe()}" for m in found]
    fields = [
        f"{p[len(prefix) :].lstrip('.')}: Kafka {m.kafka}, kafkito {m.kafkito}"
        for p, m in zip(paths, found, strict=True)
    ]
    return [f"{where.pop()}: {prefix}: " + "; ".join(fields)]


def _common_entry(paths: list[str]) -> str:
    """The longest prefix of every path that ends an entry's key (`results[1].configs[listeners]`)."""
    first = min(paths, key=len)
    for end in range(len(first), 0, -1):
        prefix = first[:end]
        if prefix.endswith("]") and all(p.startswith(prefix) and p != prefix for p in paths):
            return prefix
    return ""


def _steps(outcomes: list[Outcome]) -> list[str]:
    rows = [
        (o.scenario, broker, step.what, step.describe())
        for o in outcomes
        for broker, steps in o.steps.items()
        for step in steps
    ]
    lines = [
        "## Waits and retries",
        "",
        "What the framework waited for (more than one poll) or resent after an error clients retry (a "
        "coordinator not available, not the coordinator or loading; a partition without its leader yet), "
        "before the step it compared. They are not compared: each broker may need its own.",
        "",
    ]
    if not rows:
        return [*lines, "None.", ""]
    lines += ["| scenario | broker | step | what |", "|---|---|---|---|"]
    lines += [f"| {s} | {b} | {_cell(w)} | {d} |" for s, b, w, d in rows]
    return [*lines, ""]


def _compared(outcomes: list[Outcome]) -> list[str]:
    lines = ["## Exchanges compared", ""]
    lines += [f"- **{o.scenario}**: {_cell('; '.join(fold_labels(o.labels)))}" for o in outcomes]
    return [*lines, ""]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
