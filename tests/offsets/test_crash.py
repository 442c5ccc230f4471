"""A commit storm with SIGKILLs of the broker: after each restart no acknowledged commit is lost."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from kafkito.protocol.codec import RESPONSES
from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

COMMIT, FETCH, METADATA = 8, 9, 3
KILLS = 20
GROUPS = ("storm-a", "storm-b")
PARTITIONS = 4
WINDOW = 64  # requests in flight per connection


@dataclass
class Ledger:
    """Per group: the offset of the last commit acknowledged, and the highest one ever sent."""

    acked: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GROUPS, -1))
    sent: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GROUPS, -1))
    total_acked: int = 0
    written_unacked: int = 0  # restarts that found a commit that was written but never answered


def commit_request(client: WireClient, group: str, offset: int) -> int:
    # Every commit sets all partitions of the group to the same offset, offsets only ever grow.
    return client.send(
        COMMIT,
        8,
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        topics=[
            dict(
                name="storm",
                partitions=[
                    dict(
                        partition_index=p,
                        committed_offset=offset,
                        committed_leader_epoch=-1,
                        committed_metadata="",
                    )
                    for p in range(PARTITIONS)
                ],
            )
        ],
    )


def committed(client: WireClient, group: str) -> set[int] | None:
    """The committed offsets of the group's partitions, or None while the coordinator is loading."""
    response = client.request(FETCH, 8, groups=[dict(group_id=group, topics=None)], require_stable=True)
    [g] = response.groups
    if g.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        return None
    assert g.error_code == 0, g
    offsets = {p.committed_offset for t in g.topics for p in t.partitions if p.error_code == 0}
    assert len({p.partition_index for t in g.topics for p in t.partitions}) in (0, PARTITIONS)
    return offsets or {-1}


def verify(broker: ProcessBroker, ledger: Ledger) -> None:
    with WireClient(broker.bootstrap, client_id="verifier") as client:
        for group in GROUPS:
            offsets = wait_until(lambda g=group: committed(client, g), 30, f"{group}'s offsets loaded")
            # One offset for all partitions: each commit was written whole, in one batch.
            [offset] = offsets
            # Never behind what was acknowledged; ahead only by commits in flight at the kill.
            assert ledger.acked[group] <= offset <= ledger.sent[group], (group, offset, ledger)
            ledger.written_unacked += offset > ledger.acked[group]
            ledger.acked[group] = ledger.sent[group] = offset


def storm(broker: ProcessBroker, ledger: Ledger, rng: random.Random) -> None:
    """Pipelined commits on one connection per group until the broker is SIGKILLed under them."""
    clients = {g: WireClient(broker.bootstrap, client_id=f"storm-{g}") for g in GROUPS}
    in_flight: dict[str, list[int]] = {g: [] for g in GROUPS}
    kill_after = rng.randint(200, 1_500)  # acknowledgements before the kill
    acked_here = 0
    alive = True
    try:
        while True:
            for group, client in clients.items():
                while alive and len(in_flight[group]) < WINDOW:
                    offset = ledger.sent[group] + 1
                    try:
                        commit_request(client, group, offset)
                    except OSError:
                        break
                    ledger.sent[group] = offset
                    in_flight[group].append(offset)
                if not in_flight[group]:
                    continue
                frame = client.recv_frame()
                if frame is None:
                    in_flight[group].clear()  # the broker is gone: these are unacknowledged
                    continue
                offset = in_flight[group].pop(0)
                response = RESPONSES[COMMIT].decode(frame, version=8, header=True)
                errors = {p.error_code for t in response.topics for p in t.partitions}
                assert errors == {0}, errors
                ledger.acked[group] = offset
                ledger.total_acked += 1
                acked_here += 1
            if alive and acked_here >= kill_after:
                broker.kill()  # SIGKILL with requests in flight; replies already sent still count
                alive = False
            if not alive and not any(in_flight.values()):
                return
    finally:
        for client in clients.values():
            client.close()


def test_commit_storm_with_sigkills_loses_no_acknowledged_commit(tmp_path: Path) -> None:
    rng = random.Random(6)
    # A small load chunk and no inline load: restarts really go through COORDINATOR_LOAD_IN_PROGRESS.
    broker = ProcessBroker(
        tmp_path / "data",
        props={"offsets.load.inline.bytes": "0", "offsets.load.chunk.records": "500", "num.partitions": "4"},
    )
    ledger = Ledger()
    started = time.monotonic()
    try:
        broker.start()
        with WireClient(broker.bootstrap) as client:
            client.request(METADATA, 4, topics=[dict(name="storm")], allow_auto_topic_creation=True)
        for _ in range(KILLS):
            storm(broker, ledger, rng)
            broker.start()
            verify(broker, ledger)
    finally:
        broker.kill()
    elapsed = time.monotonic() - started
    print(
        f"{KILLS} kills, {ledger.total_acked} acknowledged commits in {elapsed:.1f} s, "
        f"{ledger.written_unacked} restarts found an unanswered commit on disk"
    )
    assert ledger.total_acked >= KILLS * 200
