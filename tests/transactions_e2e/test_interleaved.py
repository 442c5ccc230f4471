"""Two transactions interleaved on the same partitions: the one that commits first cannot be read past
the other's first record until that one ends (the last stable offset is the earliest open
transaction's first offset), and when the other aborts, read_committed readers skip its batches
from among the committed ones (the aborted-transactions list), as Kafka's consumers do."""

from __future__ import annotations

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S, wait_until
from tests.transactions_e2e.logview import high_watermarks, stable_offsets, wait_settled
from tests.transactions_e2e.producers import make_producer, txn_id
from tests.transactions_e2e.readers import CLIENTS, ISOLATIONS, append_sentinels, read, values_of

PARTITIONS = 2


def recs(name: str, round_: int) -> list[Rec]:
    return [Rec(p, None, f"{name}-{round_}-p{p}".encode()) for p in range(PARTITIONS)]


def test_interleaved_transactions_commit_and_abort_in_any_order(broker: ThreadBroker) -> None:
    bootstrap, topic = broker.bootstrap, "interleaved"
    create_topic(bootstrap, topic, PARTITIONS)
    aborting = make_producer("confluent-kafka", bootstrap, txn_id())
    committing = make_producer("kafka-python", bootstrap, txn_id())
    sent: list[Rec] = []
    try:
        aborting.init()
        committing.init()
        aborting.begin()
        committing.begin()
        for round_ in range(3):  # a batch of each in turn, in both partitions
            for name, producer in (("aborted", aborting), ("committed", committing)):
                batch = recs(name, round_)
                producer.send(topic, batch)
                sent += batch

        committing.commit()
        committed_ends = dict.fromkeys(range(PARTITIONS), 7)  # 6 records and a COMMIT marker each
        wait_until(  # the markers may follow EndTxn's answer, as in Kafka
            lambda: high_watermarks(bootstrap, topic, PARTITIONS) == committed_ends,
            DEADLINE_S,
            "the COMMIT markers",
            detail=lambda: f"HW {high_watermarks(bootstrap, topic, PARTITIONS)}",
        )
        stable = stable_offsets(bootstrap, topic, PARTITIONS)
        assert stable == dict.fromkeys(range(PARTITIONS), 0), f"LSO passed the open transaction: {stable}"

        aborting.abort()
        assert wait_settled(bootstrap, topic, PARTITIONS) == dict.fromkeys(range(PARTITIONS), 8)
    finally:
        aborting.close()
        committing.close()

    append_sentinels(bootstrap, topic, PARTITIONS, "end")
    committed = [r for r in sent if (r.value or b"").startswith(b"committed")]
    want = {
        "read_committed": values_of(committed, PARTITIONS),
        "read_uncommitted": values_of(sent, PARTITIONS),
    }
    wrong = []
    for client in CLIENTS:
        for isolation in ISOLATIONS:
            got = read(client, bootstrap, topic, PARTITIONS, isolation, "end").values()
            if got != want[isolation]:
                wrong.append(f"{client} {isolation}: got {got}")
    assert not wrong, "readers saw the wrong records:\n  " + "\n  ".join(wrong)
