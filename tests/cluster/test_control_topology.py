"""The cluster's topology steered from another process: `kafkito serve --nodes 3 --control ...`, the
`kafkito control` topology verbs and the JSON API over HTTP, checked with a real client."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from tests.cluster.support import ControlledCluster
from tests.support.waiting import wait_until
from tests.support.wire import WireClient


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[ControlledCluster]:
    controlled = ControlledCluster(tmp_path / "data").start()
    try:
        yield controlled
    finally:
        assert controlled.stop() == 0


def _ok(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_kafkito_control_stops_starts_nodes_and_moves_a_leader(cluster: ControlledCluster) -> None:
    topology = _ok(cluster.control("topology"))
    assert [(n["node_id"], n["live"]) for n in topology["nodes"]] == [(1, True), (2, True), (3, True)]
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        admin.create_topics([NewTopic("ledger", 1, 3)])
        moved = _ok(cluster.control("leader", "move", "ledger", "0", "2"))
        assert (moved["leader"], moved["replicas"][0]) == (2, 2)
        described = admin.describe_topics(["ledger"])[0]["partitions"][0]
        assert described["leader_id"] == 2 and sorted(described["replica_nodes"]) == [1, 2, 3]

        stopped = _ok(cluster.control("node", "stop", "2"))
        assert [n["live"] for n in stopped["nodes"]] == [True, False, True]
        assert stopped["topics"]["ledger"][0]["leader"] in (1, 3)
        wait_until(lambda: sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"]) == [1, 3],
                   what="node 2 gone from DescribeCluster")  # fmt: skip

        started = _ok(cluster.control("node", "start", "2"))
        assert started["topics"]["ledger"][0]["leader"] == 2
        wait_until(lambda: len(admin.describe_cluster()["brokers"]) == 3, what="node 2 back")
    finally:
        admin.close()
    refused = cluster.control("node", "stop", "9")
    assert refused.returncode == 1 and "no node 9" in refused.stderr and "Traceback" not in refused.stderr


def test_the_http_api_moves_a_coordinator_and_find_coordinator_follows(cluster: ControlledCluster) -> None:
    before = cluster.call("GET", "/groups/billing/coordinator")
    assert before.status == 200
    target = 3 if before.body["node_id"] != 3 else 1
    moved = cluster.call("POST", "/groups/billing/coordinator", {"node": target})
    assert moved.status == 200 and moved.body["node_id"] == target and moved.body["leader"] == target
    assert _ok(cluster.control("coordinator", "show", "billing"))["node_id"] == target

    nodes = cluster.nodes()
    with WireClient(f"127.0.0.1:{nodes[1]['port']}") as wire:
        found = wire.request(10, 1, key="billing", key_type=0)
    assert (found.error_code, found.node_id, found.port) == (0, target, nodes[target]["port"])

    txn = _ok(cluster.control("coordinator", "move", "--transaction", "tx-1", "2"))
    assert txn["topic"] == "__transaction_state" and txn["leader"] == 2
    with WireClient(f"127.0.0.1:{nodes[3]['port']}") as wire:
        found = wire.request(10, 1, key="tx-1", key_type=1)
    assert (found.error_code, found.node_id) == (0, 2)

    assert cluster.call("POST", "/nodes/7/stop").status == 404
    assert cluster.call("POST", "/groups/billing/coordinator", {"node": 12}).status == 404
    cluster.call("POST", "/nodes/2/stop")
    refused = cluster.call("POST", "/topics/__consumer_offsets/partitions/0/leader", {"node": 2})
    assert refused.status == 400 and "stopped" in refused.body["error"]
