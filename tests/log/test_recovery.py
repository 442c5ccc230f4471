"""Opening a log after a crash or with damaged files: what is valid is served, what is not is cut or
skipped and said so, acknowledged offsets are never handed out again, and the damaged file is kept."""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from kafkito.broker.log.batch import HEADER_SIZE, parse_header
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import GZIP, Rec, batch, config, decode, read_all, records


def fill(path: Path, n: int, **kw: object) -> list[int]:
    """Append n 3-record batches without a clean close; return each batch's end position."""
    plog = PartitionLog(path, config(**kw))
    ends = []
    for i in range(n):
        plog.append(batch(records(3, start=i * 3), compression=GZIP if i % 2 else 0))
        ends.append(plog.segments[-1].size)
    return ends


def fill_and_close(path: Path, n: int, **kw: object) -> list[int]:
    ends = fill(path, n, **kw)
    PartitionLog(path, config(**kw)).close()
    return ends


def reopen(path: Path, **kw: object) -> tuple[PartitionLog, list[dict[str, Any]]]:
    with capture_logs() as logs:
        plog = PartitionLog(path, config(**kw))
    return plog, logs


def active_file(path: Path) -> Path:
    return sorted(path.glob("*.log"))[-1]


def flip(path: Path, position: int, mask: int = 0x01) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        b = f.read(1)
        f.seek(position)
        f.write(bytes([b[0] ^ mask]))


def events(logs: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in logs if e["event"] == name]


def problems(logs: list[dict[str, Any]]) -> list[str]:
    return [e["event"] for e in logs if e["log_level"] in ("warning", "error")]


# -- torn tails: the normal result of a crash ---------------------------------------------------


@pytest.mark.parametrize("cut", [1, 12, 30, 61, 70])
def test_a_cut_tail_is_truncated_to_the_last_whole_batch_and_its_offsets_stay_used(
    tmp_path: Path, cut: int
) -> None:
    ends = fill(tmp_path, 5)
    seg = active_file(tmp_path)
    os.truncate(seg, ends[-1] - cut)
    assert ends[-1] - cut - ends[-2] >= HEADER_SIZE  # the torn batch's header survived
    plog, logs = reopen(tmp_path)
    assert os.path.getsize(seg) == ends[-2]
    assert [r for _, r in read_all(plog)] == records(12)
    assert problems(logs) == ["log.truncated_invalid_tail"]
    (event,) = events(logs, "log.truncated_invalid_tail")
    assert event["log_level"] == "warning"  # unflushed: what a crash leaves
    assert event["path"] == str(seg) and event["position"] == ends[-2]
    assert (event["first_lost_offset"], event["records_lost"], event["quarantined"]) == (12, 3, None)
    # The torn batch's offsets were acknowledged: they are not handed out again.
    assert plog.log_end_offset == 15
    assert plog.append(batch(1)).base_offset == 15
    assert [o for o, _ in read_all(plog)] == [*range(12), 15]


def test_a_tail_torn_inside_its_header_goes_back_to_the_last_whole_batch(tmp_path: Path) -> None:
    ends = fill(tmp_path, 5)
    os.truncate(active_file(tmp_path), ends[-2] + 20)
    plog, logs = reopen(tmp_path)
    assert plog.log_end_offset == 12
    (event,) = events(logs, "log.truncated_invalid_tail")
    assert event["records_lost"] is None and event["bytes_dropped"] == 20
    assert plog.append(batch(1)).base_offset == 12


@pytest.mark.parametrize("garbage", [b"\x00" * 100, b"\xff" * 7, os.urandom(4096)])
def test_garbage_after_the_last_batch_is_truncated(tmp_path: Path, garbage: bytes) -> None:
    ends = fill(tmp_path, 4)
    with open(active_file(tmp_path), "ab") as f:
        f.write(garbage)
    plog, logs = reopen(tmp_path)
    assert plog.log_end_offset == 12
    assert os.path.getsize(active_file(tmp_path)) == ends[-1]
    assert any(e["event"] == "log.truncated_invalid_tail" for e in logs)


def test_a_bit_flip_in_the_last_batch_is_caught_by_its_crc(tmp_path: Path) -> None:
    ends = fill(tmp_path, 4)
    flip(active_file(tmp_path), ends[-1] - 5)
    plog, logs = reopen(tmp_path)
    reasons = [e["reason"] for e in logs if e["event"] == "log.truncated_invalid_tail"]
    assert reasons == ["CRC mismatch"]
    assert plog.log_end_offset == 12  # its 3 offsets stay used
    assert [r for _, r in read_all(plog)] == records(9)
    for _, r in decode(plog.read(0, 1 << 20)):
        assert r in records(9)


# -- damage in the middle: skipped, the rest kept, the file quarantined ---------------------------


def test_a_flip_in_an_early_batch_of_the_active_segment_loses_only_that_batch(tmp_path: Path) -> None:
    ends = fill(tmp_path, 5)
    seg = active_file(tmp_path)
    original = seg.read_bytes()
    flip(seg, ends[0] + HEADER_SIZE + 5)  # inside batch 1's records
    plog, logs = reopen(tmp_path)
    assert problems(logs) == ["log.corrupt_data_skipped"]
    (event,) = events(logs, "log.corrupt_data_skipped")
    assert event["log_level"] == "error" and event["path"] == str(seg) and event["reason"] == "CRC mismatch"
    assert (event["position"], event["first_lost_offset"], event["records_lost"]) == (ends[0], 3, 3)
    assert event["resumed_at_offset"] == 6 and event["bytes_dropped"] == ends[1] - ends[0]
    quarantined = Path(event["quarantined"])
    assert quarantined.name == seg.name + ".corrupt"
    assert quarantined.read_bytes()[: ends[0]] == original[: ends[0]]
    assert plog.log_end_offset == 15
    got = read_all(plog)
    assert [o for o, _ in got] == [0, 1, 2, *range(6, 15)]
    assert [r for _, r in got] == records(3) + records(9, start=6)
    assert [s.base_offset for s in plog.segments] == [0, 6]
    assert plog.append(batch(1)).base_offset == 15
    # The consumer that was at offset 3 steps over the gap.
    assert decode(plog.read(3, 1 << 20))[0][0] == 6


def test_the_repair_is_stable_and_survives_a_crash_in_the_middle_of_it(tmp_path: Path) -> None:
    ends = fill(tmp_path, 5)
    seg = active_file(tmp_path)
    flip(seg, ends[1] + HEADER_SIZE + 2)
    damaged = seg.read_bytes()
    plog, _ = reopen(tmp_path)
    want = read_all(plog)
    assert plog.log_end_offset == 15 and [o for o, _ in want] == [*range(6), *range(9, 15)]
    plog.close()
    plog, logs = reopen(tmp_path)
    assert read_all(plog) == want and problems(logs) == []
    plog.close()
    # A crash after the new segment was written but before the damaged one was cut.
    seg.write_bytes(damaged)
    (tmp_path / ".clean-shutdown").unlink(missing_ok=True)
    plog, logs = reopen(tmp_path)
    assert read_all(plog) == want and plog.log_end_offset == 15
    assert problems(logs) == ["log.corrupt_data_skipped"]


def test_a_bad_length_mid_segment_is_skipped_by_scanning_for_the_next_valid_batch(tmp_path: Path) -> None:
    ends = fill(tmp_path, 6)
    with open(active_file(tmp_path), "r+b") as f:
        f.seek(ends[1] + 8)
        f.write(b"\x7f\x00\x00\x00")  # batch 2 claims 2 GB
    plog, logs = reopen(tmp_path)
    (event,) = events(logs, "log.corrupt_data_skipped")
    assert (event["records_lost"], event["resumed_at_offset"]) == (3, 9)
    assert event["resumed_at_position"] == ends[2]
    assert [o for o, _ in read_all(plog)] == [*range(6), *range(9, 18)]


def test_corruption_in_an_older_segment_keeps_every_later_segment(tmp_path: Path) -> None:
    fill(tmp_path, 20, segment_bytes=600)
    files = sorted(tmp_path.glob("*.log"))
    assert len(files) > 3
    second = files[1]
    base = int(second.name[:-4])
    with open(second, "r+b") as f:
        f.seek(8)
        f.write(b"\x00\x00\x00\x01")  # batch length below the minimum
    plog, logs = reopen(tmp_path, segment_bytes=600)
    assert plog.log_end_offset == 60
    (event,) = events(logs, "log.corrupt_data_skipped")
    assert (event["first_lost_offset"], event["records_lost"]) == (base, 3)
    assert "bad batch length" in event["reason"]
    assert (tmp_path / (second.name + ".corrupt")).exists()
    assert not events(logs, "log.deleted_segment_after_corruption")
    assert [o for o, _ in read_all(plog)] == [o for o in range(60) if not base <= o < base + 3]
    assert all(f.exists() for f in files[2:])


def test_a_payload_flip_in_a_closed_unflushed_segment_is_found_by_its_crc(tmp_path: Path) -> None:
    fill(tmp_path, 20, segment_bytes=600)  # a crash: nothing flushed, recovery from offset 0
    first = sorted(tmp_path.glob("*.log"))[0]
    flip(first, HEADER_SIZE + 10)
    plog, logs = reopen(tmp_path, segment_bytes=600)
    (event,) = events(logs, "log.corrupt_data_skipped")
    assert (event["reason"], event["first_lost_offset"], event["records_lost"]) == ("CRC mismatch", 0, 3)
    assert plog.log_start_offset == 3 and plog.log_end_offset == 60


# -- base offsets: outside the CRC, checked for order ------------------------------------------


def test_a_flipped_base_offset_is_proven_by_its_neighbours_and_repaired(tmp_path: Path) -> None:
    ends = fill(tmp_path, 5)
    seg = active_file(tmp_path)
    flip(seg, ends[1] + 7, 0x10)  # batch 2's base offset: 6 -> 22
    plog, logs = reopen(tmp_path)
    (event,) = events(logs, "log.batch_offset_repaired")
    assert event["log_level"] == "error" and event["path"] == str(seg)
    assert (event["stored_base_offset"], event["repaired_base_offset"], event["records_lost"]) == (22, 6, 0)
    assert "skips ahead" in event["reason"]
    assert Path(event["quarantined"]).exists()
    assert [r for _, r in read_all(plog)] == records(15)
    assert [o for o, _ in read_all(plog)] == list(range(15))


def test_a_base_offset_flipped_backwards_is_detected(tmp_path: Path) -> None:
    ends = fill(tmp_path, 5)
    flip(active_file(tmp_path), ends[2] + 7, 0x08)  # batch 3's base offset: 9 -> 1
    plog, logs = reopen(tmp_path)
    (event,) = events(logs, "log.batch_offset_repaired")
    assert "goes back" in event["reason"]
    assert [o for o, _ in read_all(plog)] == list(range(15))


def test_a_flipped_base_offset_in_the_last_batch_cannot_be_proven_and_is_dropped(tmp_path: Path) -> None:
    ends = fill_and_close(tmp_path, 5)
    flip(active_file(tmp_path), ends[3] + 7, 0x20)
    plog, logs = reopen(tmp_path)
    (event,) = events(logs, "log.truncated_invalid_tail")
    assert event["log_level"] == "error" and event["below_recovery_point"] is True
    assert (event["first_lost_offset"], event["records_lost"]) == (12, 3)
    assert plog.log_end_offset == 15  # flushed and acknowledged: never below the recovery point
    assert [o for o, _ in read_all(plog)] == list(range(12))


def test_a_flipped_base_offset_in_a_trusted_segment_is_found_without_a_crc_check(tmp_path: Path) -> None:
    fill_and_close(tmp_path, 20, segment_bytes=600)
    first = sorted(tmp_path.glob("*.log"))[0]
    data = first.read_bytes()
    second_batch = parse_header(data, 0).size
    flip(first, second_batch + 7, 0x40)
    plog, logs = reopen(tmp_path, segment_bytes=600)
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["log.batch_offset_repaired"]
    assert [o for o, _ in read_all(plog)] == list(range(60))


# -- clean shutdowns and the recovery point -------------------------------------------------------


def test_a_clean_shutdown_is_reopened_without_warnings(tmp_path: Path) -> None:
    fill(tmp_path, 3)
    PartitionLog(tmp_path, config()).close()
    assert (tmp_path / ".clean-shutdown").exists()
    assert (tmp_path / "recovery-point").read_text() == "9\n"
    plog, logs = reopen(tmp_path)
    assert not (tmp_path / ".clean-shutdown").exists()
    assert plog.log_end_offset == 9 and plog.recovery_point == 9
    assert not [e for e in logs if e["log_level"] == "warning"]


def test_the_active_segment_is_crc_checked_even_after_a_clean_shutdown(tmp_path: Path) -> None:
    ends = fill_and_close(tmp_path, 4)
    flip(active_file(tmp_path), ends[-1] - 1, 0x80)
    plog, logs = reopen(tmp_path)
    (event,) = events(logs, "log.truncated_invalid_tail")
    assert event["reason"] == "CRC mismatch" and event["log_level"] == "error"
    assert Path(event["quarantined"]).exists()
    assert plog.log_end_offset == 12  # flushed: its offsets stay used
    assert [o for o, _ in read_all(plog)] == list(range(9))


def test_the_log_end_never_goes_below_the_recovery_point(tmp_path: Path) -> None:
    fill_and_close(tmp_path, 4)
    os.truncate(active_file(tmp_path), 0)  # acknowledged, fsynced data gone without a trace
    plog, logs = reopen(tmp_path)
    (event,) = events(logs, "log.end_below_recovery_point")
    assert (event["log_end_offset"], event["recovery_point"]) == (0, 12)
    assert plog.log_end_offset == 12
    assert plog.append(batch(1)).base_offset == 12


# -- any single flipped byte ------------------------------------------------------------------------


def _batch_starts(path: Path) -> list[int]:
    data, out, pos = path.read_bytes(), [], 0
    while pos < len(data):
        out.append(pos)
        pos += parse_header(data, pos).size
    return out


@pytest.mark.parametrize("clean", [True, False], ids=["clean", "crash"])
@pytest.mark.parametrize("seed", range(40))
def test_any_flipped_byte_keeps_offsets_in_order_and_the_log_end(
    tmp_path: Path, seed: int, clean: bool
) -> None:
    """Whatever byte flips, batches come out in strictly increasing offsets and the log end stays
    (after a crash, a batch whose own base offset broke may take its offsets back with it). Damage
    the open must find (everything after a crash; after a clean shutdown, anything in the active
    segment and framing or base offsets elsewhere) is reported, and what is served is original."""
    rng = random.Random(seed)
    fill(tmp_path, 15, segment_bytes=700)
    first = PartitionLog(tmp_path, config(segment_bytes=700))
    before = read_all(first)
    if clean:
        first.close()
    files = sorted(tmp_path.glob("*.log"))
    victim = rng.choice(files)
    position = rng.randrange(victim.stat().st_size)
    within = position - max(s for s in _batch_starts(victim) if s <= position)
    flip(victim, position, 1 << rng.randrange(8))
    plog, logs = reopen(tmp_path, segment_bytes=700)
    headers = plog.batch_headers(0)
    assert all(a.next_offset <= b.base_offset for a, b in itertools.pairwise(headers))
    assert plog.log_end_offset == 45 or (not clean and plog.log_end_offset == 42)
    epoch = 12 <= within < 16  # the leader epoch is checked by nothing, as in Kafka
    if not epoch and (not clean or victim == files[-1] or within < 17):
        assert problems(logs), f"{victim.name} byte {position} ({within} into its batch)"
        assert set(read_all(plog)) <= set(before)
    for opened in (first, plog):
        for segment in opened.segments:
            segment.close()


# -- compacted logs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lose_cleaner_offset", [False, True])
def test_gaps_left_by_compaction_are_not_damage(tmp_path: Path, lose_cleaner_offset: bool) -> None:
    from kafkito.broker.log.cleaner import compact

    cfg = dict(cleanup_policy=frozenset({"compact"}), segment_bytes=600)
    plog = PartitionLog(tmp_path, config(**cfg))
    for i in range(20):  # keys repeat every other batch: compaction drops whole batches
        plog.append(batch([Rec(b"k%d" % (i % 2), b"v%d" % i, 1_700_000_000_000 + i)]))
    assert compact(plog, 1_800_000_000_000, force=True) is not None
    before = read_all(plog)
    assert [o for o, _ in before] != list(range(20))  # there are gaps now
    plog.close()
    if lose_cleaner_offset:  # e.g. its rename lost to a power cut
        (tmp_path / "cleaner-offset").unlink()
    (tmp_path / ".clean-shutdown").unlink()
    (tmp_path / "recovery-point").unlink()
    reopened, logs = reopen(tmp_path, **cfg)
    assert problems(logs) == []
    assert read_all(reopened) == before and reopened.log_end_offset == 20
