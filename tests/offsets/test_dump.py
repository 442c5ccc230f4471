"""`kafkito offsets dump` decodes `__consumer_offsets` from disk, as Kafka's offsets formatter does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafkito.broker.cli import main
from kafkito.broker.coordinator import LeavingMember, OffsetAndMetadata, TopicPartition
from tests.offsets.harness import WALL_EPOCH, OffsetsHarness


def lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    o = OffsetsHarness(tmp_path / "data", partitions=50)
    o.h.commit("simple", {TopicPartition("t", 0): OffsetAndMetadata(3, "m", 2)})
    leader, follower = o.h.stable_group(2)
    o.h.leave("g", LeavingMember(leader), LeavingMember(follower))
    o.coordinator.delete_groups(["simple"])
    o.close()
    return tmp_path / "data"


def test_dump_of_one_group(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["offsets", "dump", "--data-dir", str(data), "--group", "simple"]) == 0
    commit, tombstone = lines(capsys.readouterr().out)
    assert commit["key"] == {"type": "offset", "group": "simple", "topic": "t", "partition": 0}
    assert commit["value"] == {
        "offset": 3,
        "leader_epoch": 2,
        "metadata": "m",
        "commit_timestamp": WALL_EPOCH,
        "expire_timestamp": None,
    }
    assert (commit["partition"], commit["offset"], commit["timestamp"]) == (
        tombstone["partition"],
        0,
        WALL_EPOCH,
    )
    assert tombstone["key"] == commit["key"] and tombstone["value"] is None


def test_dump_of_everything_through_the_real_command(data: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kafkito", "offsets", "dump", "--data-dir", str(data)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    records = lines(out)
    groups = [r for r in records if r["key"]["type"] == "group"]  # type: ignore[index]
    stable, empty = (r["value"] for r in groups)
    assert stable["generation"] == 1 and stable["protocol"] == "range"  # type: ignore[index]
    assert [m["subscribed_topics"] for m in stable["members"]] == [["t"], ["t"]]  # type: ignore[index]
    assert empty["members"] == [] and empty["generation"] == 2  # type: ignore[index]
    assert sum(r["key"]["group"] == "simple" for r in records) == 2  # type: ignore[index]


def test_dump_of_a_missing_directory_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 18: a path that is not a data dir is an error (it printed nothing and exited 0 before).
    assert main(["offsets", "dump", "--data-dir", str(tmp_path / "none")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "does not exist" in err


def test_dump_shows_transactional_records_and_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    o = OffsetsHarness(tmp_path / "data", partitions=3)
    o.h.txn_commit("tx", {TopicPartition("t", 0): OffsetAndMetadata(9)}, producer_id=42)
    o.h.end_txn(42, commit=False, partition=o.partition_of("tx"))
    o.close()
    assert main(["offsets", "dump", "--data-dir", str(tmp_path / "data"), "--group", "tx"]) == 0
    commit, marker = lines(capsys.readouterr().out)
    assert commit["producer_id"] == 42 and commit["value"]["offset"] == 9  # type: ignore[index]
    assert marker["key"] == {"type": "txn_marker", "result": "ABORT"}
    assert marker["value"] == {"producer_id": 42, "coordinator_epoch": 0}
    assert marker["offset"] == 1
