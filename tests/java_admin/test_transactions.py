"""Admin transaction and producer calls of kafka-clients 4.4: describeProducers, describeTransactions,
listTransactions, abortTransaction, fenceProducers."""

from __future__ import annotations

import base64

from kafkito.broker.handlers import served_versions
from tests.java_admin.conftest import JavaAdmin, unique
from tests.support.waiting import wait_until

WRITE_TXN_MARKERS = 27


def _records(n: int) -> list[dict[str, object]]:
    values = [base64.b64encode(b"x%d" % i).decode() for i in range(n)]
    return [dict(partition=0, key=None, value=v, headers=[], timestamp=None) for v in values]


def test_an_open_transaction_described_listed_and_aborted(admin: JavaAdmin) -> None:
    topic, txn = admin.topic(), unique("txn")
    admin.client("produce", topic=topic, records=_records(2), codec="none")  # an idempotent producer first
    admin.client("txn-open", key=txn, transactionalId=txn, topic=topic, records=_records(3))
    try:
        described = admin("describeTransactions", ids=[txn])[txn]
        assert described["state"] == "Ongoing" and described["started"] is True
        assert (described["partitions"], described["timeoutMs"], described["coordinator"]) == (
            [f"{topic}-0"], 60000, 1,
        )  # fmt: skip
        producers = admin("describeProducers", topic=topic, partitions=[0])[f"{topic}-0"]
        assert len(producers) == 2
        idempotent, transactional = sorted(producers, key=lambda p: p["txnStartOffset"])
        assert (idempotent["lastSequence"], idempotent["txnStartOffset"], idempotent["coordinatorEpoch"]) == (
            1, -1, -1,
        )  # fmt: skip
        assert transactional["producerId"] == described["producerId"]
        assert (transactional["lastSequence"], transactional["txnStartOffset"]) == (2, 2)
        listed = admin("listTransactions", states=["Ongoing"])
        assert listed[txn] == {"producerId": described["producerId"], "state": "Ongoing"}
        assert txn in admin("listTransactions", producerIds=[described["producerId"]])
        assert txn not in admin("listTransactions", states=["CompleteCommit"])
        assert txn in admin("listTransactions", pattern=f"{txn[:8]}.*")
        assert txn in admin("listTransactions", durationMs=0)
        _abort(admin, topic, transactional)
    finally:
        admin.client("txn-close", key=txn)


def _abort(admin: JavaAdmin, topic: str, producer: dict[str, int]) -> None:
    """abortTransaction writes an abort marker with WriteTxnMarkers: while kafkito does not serve it, the
    client must refuse the call cleanly with UnsupportedVersionException."""
    spec = dict(topic=topic, partition=0, producerId=producer["producerId"], epoch=producer["epoch"],
                coordinatorEpoch=producer["coordinatorEpoch"])  # fmt: skip
    if admin.kind == "kafkito" and WRITE_TXN_MARKERS not in served_versions():
        assert admin.refused("abortTransaction", **spec).error_class == "UnsupportedVersionException"
        return
    admin("abortTransaction", **spec)

    def stable() -> int:
        return int(
            admin("listOffsets", topic=topic, specs={"0": "latest"}, readCommitted=True)[f"{topic}-0"][
                "offset"
            ]
        )

    wait_until(lambda: stable() == 6, 60, "the partition's transaction aborted by its marker")


def test_fence_producers_and_unknown_transactions(admin: JavaAdmin) -> None:
    topic, txn = admin.topic(), unique("fenced")
    admin.client("txn-open", key=txn, transactionalId=txn, topic=topic, records=_records(1))
    try:
        before = admin("describeTransactions", ids=[txn])[txn]
        fenced = admin("fenceProducers", ids=[txn])[txn]
        assert fenced["producerId"] == before["producerId"] and fenced["epoch"] > before["epoch"]
        # The open transaction is aborted, then the new epoch is the id's, with nothing open.
        after = admin("describeTransactions", ids=[txn])[txn]
        assert (after["state"], after["epoch"], after["partitions"]) == ("Empty", fenced["epoch"], []), after
    finally:
        admin.client("txn-close", key=txn)
    missing = unique("missing")
    assert (
        admin("describeTransactions", ids=[missing])[missing]["error"] == "TransactionalIdNotFoundException"
    )
    new = admin("fenceProducers", ids=[missing])[missing]
    assert new["epoch"] == 0 and new["producerId"] >= 0
