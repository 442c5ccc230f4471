"""Offset arithmetic and option parsing of the Kafka data source (no Spark, no broker)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkito_spark.errors import KafkaOptionError
from kafkito_spark.offsets import (
    EARLIEST,
    LATEST,
    OffsetRange,
    from_json,
    parse_offsets_spec,
    plan_ranges,
    rate_limit,
    resolve,
    to_json,
)
from kafkito_spark.options import parse_read_options, parse_write_options

BOOT = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_offsets_json_is_sparks_form_and_round_trips() -> None:
    offsets = {("b", 1): 7, ("a", 0): 23, ("b", 0): 0}
    assert to_json(offsets) == {"a": {"0": 23}, "b": {"0": 0, "1": 7}}
    assert json.dumps(to_json(offsets)) == '{"a": {"0": 23}, "b": {"0": 0, "1": 7}}'
    assert from_json(to_json(offsets)) == offsets


def test_offsets_spec_accepts_words_and_json_with_sentinels() -> None:
    assert parse_offsets_spec(None, default=LATEST) == LATEST
    assert parse_offsets_spec(" Earliest ", default=LATEST) == EARLIEST
    assert parse_offsets_spec('{"t":{"0":-2,"1":-1,"2":5}}', default=LATEST) == {
        ("t", 0): -2,
        ("t", 1): -1,
        ("t", 2): 5,
    }
    for bad in ("soonest", "[1]", '{"t":{"0":-3}}', '{"t":[0]}'):
        with pytest.raises(KafkaOptionError):
            parse_offsets_spec(bad, default=LATEST)


def test_resolve_replaces_sentinels_and_requires_every_partition() -> None:
    tps = [("t", 0), ("t", 1), ("t", 2)]
    earliest = {tp: 10 for tp in tps}
    latest = {tp: 50 for tp in tps}
    spec = {("t", 0): -2, ("t", 1): -1, ("t", 2): 33}
    assert resolve(spec, tps, earliest, latest, "startingOffsets") == {
        ("t", 0): 10,
        ("t", 1): 50,
        ("t", 2): 33,
    }
    assert resolve(EARLIEST, tps, earliest, latest, "x") == earliest
    assert resolve(LATEST, tps, earliest, latest, "x") == latest
    with pytest.raises(KafkaOptionError, match="every assigned partition"):
        resolve({("t", 0): 1}, tps, earliest, latest, "startingOffsets")


def test_rate_limit_shares_the_limit_in_proportion_to_backlog() -> None:
    start = {("t", 0): 0, ("t", 1): 100, ("t", 2): 5}
    latest = {("t", 0): 60, ("t", 1): 130, ("t", 2): 5}
    # backlogs 60, 30, 0: a limit of 30 gives 20 and 10
    assert rate_limit(start, latest, 30) == {("t", 0): 20, ("t", 1): 110, ("t", 2): 5}
    assert rate_limit(start, latest, 1000) == latest


@given(
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 500)), min_size=1, max_size=8),
    st.integers(1, 2_000),
)
def test_rate_limit_shares_as_sparks_connector_and_stays_within_each_partition(
    parts: list[tuple[int, int]], limit: int
) -> None:
    start = {("t", i): s for i, (s, _) in enumerate(parts)}
    latest = {("t", i): s + n for i, (s, n) in enumerate(parts)}
    end = rate_limit(start, latest, limit)
    backlog = sum(n for _, n in parts)
    taken = sum(end[tp] - start[tp] for tp in start)
    assert all(start[tp] <= end[tp] <= latest[tp] for tp in start)
    if backlog <= limit:
        assert end == latest
    else:  # floored shares, and a share below one offset rounded up to one
        assert limit - len(parts) < taken <= limit + len(parts)
        assert all(end[tp] > start[tp] for tp in start if latest[tp] > start[tp])


def test_rate_limit_floors_shares_as_sparks_connector_does() -> None:
    start = {("t", p): 0 for p in range(3)}
    latest = {("t", p): 200 for p in range(3)}
    # 301 over three equal backlogs: Spark's connector takes 100 from each (its first batch of the
    # clicks pipeline is 300 records), never 101 from one
    assert rate_limit(start, latest, 301) == {("t", p): 100 for p in range(3)}
    # a backlog whose share is below one offset still moves by one
    assert rate_limit({("t", 0): 0, ("t", 1): 0}, {("t", 0): 1000, ("t", 1): 1}, 10) == {
        ("t", 0): 9,
        ("t", 1): 1,
    }


@given(
    st.lists(st.tuples(st.integers(0, 1_000), st.integers(0, 300)), min_size=1, max_size=6),
    st.integers(1, 200),
)
def test_repeated_rate_limited_batches_cover_every_offset_once(
    parts: list[tuple[int, int]], limit: int
) -> None:
    start = {("t", i): s for i, (s, _) in enumerate(parts)}
    latest = {("t", i): s + n for i, (s, n) in enumerate(parts)}
    seen: list[tuple[tuple[str, int], int]] = []
    position = dict(start)
    for _ in range(10_000):
        end = rate_limit(position, latest, limit)
        if end == position:
            break
        for rng in plan_ranges(position, end):
            seen.extend(((rng.topic, rng.partition), o) for o in range(rng.start, rng.until))
        position = end
    expected = [(tp, o) for tp in sorted(start) for o in range(start[tp], latest[tp])]
    assert sorted(seen) == expected


def test_plan_ranges_skips_partitions_without_new_offsets() -> None:
    start = {("a", 0): 5, ("a", 1): 9, ("b", 0): 0}
    end = {("a", 0): 8, ("a", 1): 9, ("b", 0): 2}
    assert plan_ranges(start, end) == [OffsetRange("a", 0, 5, 8), OffsetRange("b", 0, 0, 2)]


def test_read_options_follow_sparks_kafka_source() -> None:
    opts = parse_read_options(
        {
            **BOOT,
            "subscribePattern": "clicks-.*",
            "maxOffsetsPerTrigger": "100",
            "includeHeaders": "true",
            "failOnDataLoss": "false",
            "kafka.group.id": "g",
            "kafka.security.protocol": "PLAINTEXT",
        },
        streaming=True,
    )
    assert opts.subscription.matches("clicks-1") and not opts.subscription.matches("xclicks-1")
    assert opts.starting == LATEST and opts.max_offsets_per_trigger == 100
    assert opts.include_headers and not opts.fail_on_data_loss and opts.group_id == "g"
    assert opts.client == {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "PLAINTEXT"}
    batch = parse_read_options({**BOOT, "assign": '{"a":[1,0],"b":[2]}'}, streaming=False)
    assert batch.starting == EARLIEST and batch.ending == LATEST
    assert batch.subscription.assigned == (("a", 0), ("a", 1), ("b", 2))


@pytest.mark.parametrize(
    ("options", "streaming", "message"),
    [
        ({"subscribe": "t"}, True, "kafka.bootstrap.servers"),
        ({**BOOT}, True, "exactly one of"),
        ({**BOOT, "subscribe": "t", "assign": '{"t":[0]}'}, True, "exactly one of"),
        ({**BOOT, "subscribe": "t", "startingOffsets": "latest"}, False, "cannot be latest"),
        ({**BOOT, "subscribe": "t", "endingOffsets": '{"t":{"0":-2}}'}, False, "cannot be earliest"),
        ({**BOOT, "subscribe": "t", "endingOffsets": "latest"}, True, "batch queries only"),
        ({**BOOT, "subscribe": "t", "maxOffsetsPerTrigger": "0"}, True, "positive"),
        ({**BOOT, "subscribe": "t", "kafka.enable.auto.commit": "true"}, True, "manages it"),
        ({**BOOT, "assign": "t:0"}, True, "assign"),
        ({**BOOT, "subscribe": "t", "includeHeaders": "yes"}, True, "true or false"),
        ({**BOOT, "subscribe": "t", "startingTimestamp": "1700000000000"}, True, "not supported"),
    ],
)
def test_bad_read_options_are_refused(options: dict[str, str], streaming: bool, message: str) -> None:
    with pytest.raises(KafkaOptionError, match=message):
        parse_read_options(options, streaming=streaming)


def test_write_options_take_the_default_topic() -> None:
    assert parse_write_options({**BOOT, "topic": "out"}).topic == "out"
    assert parse_write_options(BOOT).topic is None
