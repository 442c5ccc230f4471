"""Differences folded for reading: the same difference at many entries (every partition, every
version of an API) is one line, with its path's keys starred and the exchanges it was seen in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tests.conformance.normalise import Difference, _show

_KEY = re.compile(r"\[[^\[\]]*\]")
_VERSION = re.compile(r" v(\d+)")


@dataclass(slots=True)
class Folded:
    scenario: str
    path: str
    kafka: str
    kafkito: str
    labels: list[str] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)

    def describe(self) -> str:
        if len(self.paths) == 1:
            return f"{next(iter(self.paths))}: Kafka {self.kafka}, kafkito {self.kafkito}"
        if len(self.paths) <= LISTED_PATHS:
            return f"{', '.join(sorted(self.paths))}: Kafka {self.kafka}, kafkito {self.kafkito}"
        return f"{self.path}: Kafka {self.kafka}, kafkito {self.kafkito} ({len(self.paths)} entries)"

    def where(self) -> str:
        """The exchanges, their versions folded: `Metadata v0-v12 defaults`."""
        return "; ".join(fold_labels(self.labels))


LISTED_PATHS = 6  # a folded difference names its entries up to this many


def fold_labels(labels: list[str]) -> list[str]:
    """Exchange labels with the versions of the same request folded: `Metadata v0-v12 defaults`."""
    by_stem: dict[str, list[int]] = {}
    for label in labels:
        m = _VERSION.search(label)
        stem = _VERSION.sub(" v#", label, count=1) if m else label
        by_stem.setdefault(stem, []).append(int(m.group(1)) if m else -1)
    parts = []
    for stem, versions in by_stem.items():
        vs = sorted(set(versions))
        span = (
            f"v{vs[0]}"
            if len(vs) == 1
            else f"v{vs[0]}-v{vs[-1]}"
            if _contiguous(vs)
            else "v" + ",".join(map(str, vs))
        )
        parts.append(stem.replace("v#", span))
    return parts


def _contiguous(vs: list[int]) -> bool:
    return vs == list(range(vs[0], vs[-1] + 1))


def fold(scenario: str, diffs: list[tuple[str, Difference]]) -> list[Folded]:
    folded: dict[tuple[str, str, str], Folded] = {}
    for label, d in diffs:
        path = _KEY.sub("[*]", d.path) if _KEY.findall(d.path) else d.path
        key = (path, _show(d.kafka), _show(d.kafkito))
        f = folded.get(key)
        if f is None:
            f = folded[key] = Folded(scenario, path, key[1], key[2])
        f.paths.add(d.path)
        if label not in f.labels:
            f.labels.append(label)
    return list(folded.values())
