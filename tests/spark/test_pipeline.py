"""The clicks pipeline on kafkito: Spark's windowed counts equal a pure-Python computation of the windows,
through Spark's own Kafka connector and through kafkito_spark alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pipelines.clicks import check, generator, job
from pipelines.clicks.events import WINDOW_MS, Click, expected_counts, generate

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_expected_counts_close_only_windows_behind_the_watermark() -> None:
    clicks = [
        Click("a", "/home", 60_000, 5),
        Click("b", "/home", 119_999, 7),
        Click("a", "/cart", 120_000, 1),
        Click("a", "/home", 240_000, 0),  # watermark 210_000 closes [60s, 120s) and [120s, 180s)
    ]
    counts = expected_counts(clicks)
    assert sorted((k, (v.clicks, v.dwell_ms)) for k, v in counts.items()) == [
        ((60_000, "/home"), (2, 12)),
        ((120_000, "/cart"), (1, 1)),
    ]


def test_generated_clicks_close_every_window_but_the_last() -> None:
    clicks = generate(500, start_ms=1_000_000_000_000)
    counts = expected_counts(clicks)
    assert sum(c.clicks for c in counts.values()) == 500  # only the closing click's window stays open
    assert len({start for start, _ in counts}) >= 10 * 60_000 // WINDOW_MS


@pytest.mark.spark
@pytest.mark.parametrize("connector", ["kafka", "kafkito"])
def test_windowed_counts_match_a_pure_python_computation(
    connector: str, spark: SparkSession, bootstrap: str, new_topic: Callable[..., str], checkpoint: str
) -> None:
    clicks_topic, counts_topic = new_topic(3, suffix="-clicks"), new_topic(1, suffix="-counts")
    clicks = generate(600, start_ms=1_700_000_000_000, seed=11)
    generator.produce(bootstrap, clicks_topic, clicks)

    query = job.start(
        spark,
        bootstrap,
        checkpoint,
        clicks_topic=clicks_topic,
        counts_topic=counts_topic,
        group_id=f"{clicks_topic}-job",
        max_offsets_per_trigger=301,
        connector=connector,
    )
    query.awaitTermination()

    expected = expected_counts(clicks)
    produced = [check.WindowCount.from_json(v) for v in check.read_topic(bootstrap, counts_topic)]
    assert len(produced) == len(expected) > 30
    assert check.compare(expected, produced) == []
    assert check.check(bootstrap, clicks_topic, counts_topic) == []
    assert [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]] == [300, 301]
