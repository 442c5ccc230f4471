"""`kafkito offsets dump`: the raw records and the latest view per group and partition, from the data dir."""

from __future__ import annotations

import json
from pathlib import Path

from kafkito.broker.coordinator import OffsetAndMetadata, TopicPartition
from kafkito.broker.offsets.dump import records
from kafkito.broker.tools.offsets_view import LatestOffsets
from tests.cli.conftest import Cli, kafkito
from tests.offsets.harness import OffsetsHarness


def test_latest_view_of_a_running_brokers_data_dir(cli: Cli) -> None:
    cli.ok("topics", "create", "od-t", "--partitions", "2")
    cli.ok("produce", "od-t", "--partition", "0", stdin="a\nb\nc\n")
    cli.ok("produce", "od-t", "--partition", "1", stdin="d\n")
    cli.ok("consume", "od-t", "--group", "od-g", "--from-beginning", "--max-messages", "4")
    cli.ok("groups", "reset-offsets", "od-g", "--topic", "od-t:0", "--to-offset", "1", "--execute")
    data = str(cli.broker.data_dir)

    rows = json.loads(
        kafkito("offsets", "dump", "--latest", "--group", "od-g", "--data-dir", data, "--json").stdout
    )
    assert [(r["topic"], r["partition"], r["offset"]) for r in rows] == [("od-t", 0, 1), ("od-t", 1, 1)]
    table = kafkito("offsets", "dump", "--latest", "--group", "od-g", "--data-dir", data).stdout.splitlines()
    assert table[0].split() == ["GROUP", "TOPIC", "PARTITION", "OFFSET", "METADATA", "COMMITTED-AT"]
    assert [line.split()[:5] for line in table[1:]] == [
        ["od-g", "od-t", "0", "1", "-"],
        ["od-g", "od-t", "1", "1", "-"],
    ]

    raw = kafkito("offsets", "dump", "--group", "od-g", "--data-dir", data).stdout.splitlines()
    offsets = [json.loads(line) for line in raw if json.loads(line)["key"]["type"] == "offset"]
    assert len(offsets) >= 3  # every commit, not only the latest


def test_not_a_data_dir_and_unknown_group_fail_in_one_line(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for path, why in (
        (tmp_path / "missing", "does not exist"),
        (tmp_path / "empty", "is not a kafkito data dir"),
    ):
        for mode in ([], ["--latest"]):
            done = kafkito("offsets", "dump", *mode, "--data-dir", str(path))
            assert done.returncode == 1 and done.stdout == ""
            assert (
                done.stderr.startswith(f"kafkito offsets dump: {path} {why}") and done.stderr.count("\n") == 1
            )
    data = str(cli.broker.data_dir)
    for mode in ([], ["--latest"]):
        done = kafkito("offsets", "dump", *mode, "--group", "od-nobody", "--data-dir", data)
        assert done.returncode == 1
        assert done.stderr.startswith(f"kafkito offsets dump: no group 'od-nobody' in {data}: ")


def test_latest_view_counts_committed_transactions_only(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path / "data", partitions=3)
    tp = TopicPartition("t", 0)
    o.h.commit("plain", {tp: OffsetAndMetadata(5)})
    o.h.txn_commit("tx", {tp: OffsetAndMetadata(7)}, producer_id=42)
    o.h.end_txn(42, commit=True, partition=o.partition_of("tx"))
    o.h.txn_commit("tx", {tp: OffsetAndMetadata(9)}, producer_id=42)
    o.h.end_txn(42, commit=False, partition=o.partition_of("tx"))
    o.close()
    latest = LatestOffsets()
    for line in records(tmp_path / "data"):
        latest.add(line)
    assert [row[:4] for row in latest.rows()] == [("plain", "t", 0, 5), ("tx", "t", 0, 7)]
