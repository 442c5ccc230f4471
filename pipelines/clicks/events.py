"""Click events: a deterministic generator and the pure-Python truth of their windowed counts."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from dataclasses import asdict, dataclass

PAGES = ("/home", "/search", "/product", "/cart", "/checkout")
WINDOW_MS = 60_000
WATERMARK_DELAY_MS = 30_000
# Events arrive at most this late relative to the latest one before them: well inside the watermark delay,
# so no event is dropped as late whatever the micro-batch boundaries are.
MAX_DISORDER_MS = 10_000


@dataclass(frozen=True, slots=True)
class Click:
    """One page view: who, where, when (epoch ms, event time) and how long they stayed."""

    user: str
    page: str
    ts_ms: int
    dwell_ms: int

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @staticmethod
    def from_json(raw: bytes) -> Click:
        return Click(**json.loads(raw))


@dataclass(frozen=True, slots=True)
class WindowCount:
    """The aggregate of one page in one window, as the job writes it to the results topic."""

    window_start_ms: int
    window_end_ms: int
    page: str
    clicks: int
    dwell_ms: int

    @staticmethod
    def from_json(raw: bytes) -> WindowCount:
        return WindowCount(**json.loads(raw))


def generate(
    count: int, *, start_ms: int, seed: int = 7, users: int = 50, span_ms: int = 600_000
) -> list[Click]:
    """`count` clicks spread over `span_ms` of event time, slightly out of order, then one closing click.

    The closing click lies far enough ahead that the watermark it raises closes every other window.
    """
    rng = random.Random(seed)
    clicks = []
    for i in range(count):
        ts = start_ms + i * span_ms // count - rng.randrange(MAX_DISORDER_MS)
        clicks.append(
            Click(
                f"u{rng.randrange(users)}", rng.choice(PAGES), max(start_ms, ts), rng.randrange(100, 30_000)
            )
        )
    closing = start_ms + span_ms + 2 * WINDOW_MS + WATERMARK_DELAY_MS
    clicks.append(Click("u0", PAGES[0], closing, 0))
    return clicks


def window_start(ts_ms: int) -> int:
    return ts_ms - ts_ms % WINDOW_MS


def expected_counts(clicks: Iterable[Click]) -> dict[tuple[int, str], WindowCount]:
    """What append mode emits: the windows the final watermark (max event time - delay) has closed."""
    clicks = list(clicks)
    if not clicks:
        return {}
    watermark = max(c.ts_ms for c in clicks) - WATERMARK_DELAY_MS
    totals: dict[tuple[int, str], list[int]] = {}
    for c in clicks:
        acc = totals.setdefault((window_start(c.ts_ms), c.page), [0, 0])
        acc[0] += 1
        acc[1] += c.dwell_ms
    return {
        (start, page): WindowCount(start, start + WINDOW_MS, page, n, dwell)
        for (start, page), (n, dwell) in sorted(totals.items())
        if start + WINDOW_MS <= watermark
    }
