"""The differences kafkito has on purpose, from explained.toml: each entry names where a difference
is (scenario, exchange label and field path, as globs) and why it is there."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.conformance.framework import Outcome
from tests.conformance.normalise import Difference

EXPLAINED = Path(__file__).with_name("explained.toml")


@dataclass(frozen=True, slots=True)
class Explanation:
    scenario: str
    where: str
    path: str
    reason: str

    def covers(self, scenario: str, label: str, diff: Difference) -> bool:
        return (
            fnmatchcase(scenario, self.scenario)
            and fnmatchcase(label, self.where)
            and fnmatchcase(diff.path, self.path)
        )


@cache
def explanations() -> tuple[Explanation, ...]:
    entries = tomllib.loads(EXPLAINED.read_text()).get("explained", [])
    return tuple(
        Explanation(e.get("scenario", "*"), e.get("where", "*"), e.get("path", "*"), e["reason"])
        for e in entries
    )


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    """`*` matches anything (brackets and dots are literal: paths are full of them)."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def fnmatchcase(text: str, pattern: str) -> bool:
    return _glob(pattern).fullmatch(text) is not None


def explanation_of(scenario: str, label: str, diff: Difference) -> Explanation | None:
    return next((e for e in explanations() if e.covers(scenario, label, diff)), None)


def unexplained(outcome: Outcome) -> list[tuple[str, Difference]]:
    """The differences no entry covers, and a stop the scenario did not declare (never explained)."""
    return outcome.stopped + [
        (label, d) for label, d in outcome.differences if explanation_of(outcome.scenario, label, d) is None
    ]
