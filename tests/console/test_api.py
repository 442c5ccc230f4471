"""The console's JSON API (`/api/...`) against a real `kafkito serve --http` and real clients, its
read-only default, `--http-write`, one server shared with `--control`, and its start-up cost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.console.support import ConsoleBroker, PollingConsumer, produce, wait_until
from tests.support.net import free_port, wait_for_port


def test_overview_counts_topics_groups_and_rates(console: ConsoleBroker) -> None:
    produce(console.bootstrap, "ov-a", [(None, b"x", [])])
    before = console.get("/api/overview")
    assert before["node_id"] == 1 and before["topics"] >= 1 and before["partitions"] >= 1
    assert before["bootstrap"] == console.bootstrap and before["uptime_s"] >= 0
    produce(console.bootstrap, "ov-a", [(None, b"y%d" % i, []) for i in range(50)])
    consumer = PollingConsumer(console.bootstrap, "ov-readers", "ov-a", "ov-reader")
    try:
        wait_until(lambda: len(consumer.consumed) == 51, what="the consumer reading everything")
        after = console.get("/api/overview")
        assert after["produce_messages_per_s"] > 0
        assert after["fetch_requests_per_s"] > 0
        assert after["groups"] >= 1 and after["connections"] >= 1
    finally:
        consumer.close()


def test_topics_and_a_topic_with_partitions_offsets_sizes_and_configs(console: ConsoleBroker) -> None:
    produce(console.bootstrap, "tp-a", [(b"k", b"value %d" % i, []) for i in range(4)])
    topics = {t["name"]: t for t in console.get("/api/topics")["topics"]}
    assert topics["tp-a"]["partitions"] == 1 and topics["tp-a"]["messages"] == 4
    assert topics["tp-a"]["size_bytes"] > 0 and not topics["tp-a"]["internal"]
    assert not any(name.startswith("__") for name in topics)
    internal = {t["name"] for t in console.get("/api/topics?internal=true")["topics"]}
    assert "__consumer_offsets" in internal or not any(n.startswith("__") for n in internal)
    detail = console.get("/api/topics/tp-a")
    (partition,) = detail["partitions"]
    assert (partition["log_start_offset"], partition["high_watermark"], partition["messages"]) == (0, 4, 4)
    configs = {c["name"]: c for c in detail["configs"]}
    assert configs["cleanup.policy"]["value"] == "delete" and configs["cleanup.policy"]["default"]
    status, body = console.call("GET", "/api/topics/no-such-topic")
    assert status == 404 and "no-such-topic" in body["error"]


def test_messages_from_an_offset_or_a_time_as_text_json_or_hex(console: ConsoleBroker) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=console.bootstrap)
    base = int(time.time() * 1000) - 60_000
    for i in range(6):
        value = b'{"n": %d}' % i if i % 2 == 0 else b"text %d" % i
        producer.send("msg-a", key=b"key-%d" % i, value=value, timestamp_ms=base + i * 1000,
                      headers=[("i", str(i).encode())])  # fmt: skip
    producer.flush()
    producer.close()
    page = console.get("/api/topics/msg-a/partitions/0/messages?limit=2")
    assert [r["offset"] for r in page["records"]] == [0, 1] and page["next_offset"] == 2
    first = page["records"][0]
    assert first["key"]["text"] == "key-0" and first["timestamp"] == base
    assert first["value"]["format"] == "json" and first["value"]["shown"] == '{\n  "n": 0\n}'
    assert first["headers"] == [{"key": "i", "value": first["headers"][0]["value"]}]
    assert first["headers"][0]["value"]["text"] == "0"
    from_offset = console.get("/api/topics/msg-a/partitions/0/messages?offset=4")
    assert [r["offset"] for r in from_offset["records"]] == [4, 5]
    from_time = console.get(f"/api/topics/msg-a/partitions/0/messages?time={base + 2500}")
    assert [r["offset"] for r in from_time["records"]] == [3, 4, 5]
    iso = (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((base + 4000) / 1000))
        + f".{(base + 4000) % 1000:03d}Z"
    )
    assert console.get(f"/api/topics/msg-a/partitions/0/messages?time={iso}")["records"][0]["offset"] == 4
    hexed = console.get("/api/topics/msg-a/partitions/0/messages?offset=1&limit=1&format=hex")
    assert hexed["records"][0]["value"]["shown"] == b"text 1".hex(" ")
    status, body = console.call("GET", "/api/topics/msg-a/partitions/0/messages?format=xml")
    assert status == 400 and "format" in body["error"]
    status, body = console.call("GET", "/api/topics/msg-a/partitions/0/messages?offset=abc")
    assert status == 400
    status, body = console.call("GET", "/api/topics/msg-a/partitions/7/messages")
    assert status == 404 and "partition 7" in body["error"]


def test_groups_with_members_assignment_committed_offsets_lag_and_timeline(console: ConsoleBroker) -> None:
    produce(console.bootstrap, "grp-a", [(None, b"v%d" % i, []) for i in range(5)])
    consumer = PollingConsumer(console.bootstrap, "grp-readers", "grp-a", "grp-app")
    try:
        wait_until(lambda: len(consumer.consumed) == 5, what="five records read")
        consumer.commit_up_to(3)
        wait_until(lambda: console.get("/api/groups/grp-readers")["lag"] == 2, what="the commit")
        group = console.get("/api/groups/grp-readers")
        assert group["state"] == "Stable" and group["protocol_kind"] == "classic"
        (member,) = group["members"]
        assert member["client_id"] == "grp-app" and member["client_host"]
        assert member["assignment"] == [{"topic": "grp-a", "partitions": [0]}]
        assert group["offsets"] == [{"topic": "grp-a", "partition": 0, "committed_offset": 3, "end_offset": 5,
                                     "lag": 2, "member_id": member["member_id"]}]  # fmt: skip
        listed = {g["group_id"]: g for g in console.get("/api/groups")["groups"]}
        assert listed["grp-readers"]["lag"] == 2 and listed["grp-readers"]["members"] == 1
        timeline = console.get("/api/groups/grp-readers/timeline")
        kinds = {e["event"] for e in timeline["events"]}
        assert {"member_joined", "rebalance_started", "rebalance_completed"} <= kinds
        assert timeline["generations"][-1]["members"] == [member["member_id"]]
        assert {m["kind"] for m in timeline["marks"]} >= {"join", "sync"}
    finally:
        consumer.close()
    assert console.call("GET", "/api/groups/no-such-group")[0] == 404
    assert console.call("GET", "/api/groups/no-such-group/timeline")[0] == 404


def test_the_console_is_read_only_by_default(console: ConsoleBroker) -> None:
    produce(console.bootstrap, "ro-a", [(None, b"x", [])])
    status, body = console.call("DELETE", "/api/topics/ro-a")
    assert status == 403 and "--http-write" in body["error"]
    status, body = console.call("POST", "/api/groups/g/reset-offsets", {"topic": "ro-a", "to": "earliest"})
    assert status == 403
    assert console.get("/api/topics/ro-a")["name"] == "ro-a"


def test_http_write_and_one_server_shared_with_the_control_endpoint(tmp_path: Path) -> None:
    broker = ConsoleBroker(tmp_path / "data", "--http-write", control_same_port=True).start()
    try:
        assert "now_ms" in broker.get("/clock")  # the control endpoint, on the console's port
        produce(broker.bootstrap, "rw-a", [(None, b"v%d" % i, []) for i in range(4)])
        # A subscribed member (not assign()): the reset must be refused while the group has one.
        consumer = PollingConsumer(broker.bootstrap, "rw-group", "rw-a", "rw-app")
        try:
            wait_until(lambda: len(consumer.consumed) == 4, what="four records read")
            consumer.commit_up_to(4)
            wait_until(lambda: broker.get("/api/groups/rw-group")["lag"] == 0, what="the commit")
            status, body = broker.call(
                "POST", "/api/groups/rw-group/reset-offsets", {"topic": "rw-a", "to": "earliest"}
            )
            assert status == 400 and "active members" in body["error"]
        finally:
            consumer.close()
        wait_until(lambda: broker.get("/api/groups/rw-group")["members"] == [], what="the member leaving")
        status, body = broker.call(
            "POST", "/api/groups/rw-group/reset-offsets", {"topic": "rw-a", "to": "earliest"}
        )
        assert status == 200
        assert body["partitions"] == {"0": {"current": 4, "offset": 0, "lag_after": 4, "error": "NONE"}}
        assert broker.get("/api/groups/rw-group")["lag"] == 4
        status, body = broker.call("DELETE", "/api/topics/rw-a")
        assert status == 200 and body == {"deleted": "rw-a", "partitions": 1}
        assert broker.call("GET", "/api/topics/rw-a")[0] == 404
    finally:
        assert broker.stop() == 0, broker.log_path.read_text()[-4000:]


def test_a_non_loopback_address_is_refused_unless_allowed(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "kafkito", "serve", "--port", "0", "--data-dir", str(tmp_path / "d"),
           "--http", "0.0.0.0:0"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--http-allow-remote" in done.stderr


def _imports_of_serve(tmp_path: Path, *extra: str) -> str:
    """`python -X importtime -m kafkito serve ...` up to listening, then stopped: its import log."""
    port = free_port()
    cmd = [sys.executable, "-X", "importtime", "-m", "kafkito", "serve", "--port", str(port),
           "--data-dir", str(tmp_path / "d"), *extra]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    try:
        wait_for_port("127.0.0.1", port, 60)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    return err


@pytest.mark.parametrize("http", [False, True])
def test_serve_imports_the_console_only_with_http(tmp_path: Path, http: bool) -> None:
    extra = ("--http", f"127.0.0.1:{free_port()}") if http else ()
    imports = _imports_of_serve(tmp_path, *extra)
    assert ("kafkito.broker.console" in imports) is http
    assert ("aiohttp" in imports) is http


def test_a_busy_http_port_fails_before_the_broker_starts(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        cmd = [sys.executable, "-m", "kafkito", "serve", "--port", "0", "--data-dir", str(tmp_path / "d"),
               "--http", f"127.0.0.1:{busy}"]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"--http 127.0.0.1:{busy}" in done.stderr
    assert "broker.started" not in done.stderr


def test_a_consumer_protocol_group_with_its_assignment_lag_and_epochs(console: ConsoleBroker) -> None:
    from confluent_kafka import Consumer

    produce(console.bootstrap, "kip848-a", [(None, b"v%d" % i, []) for i in range(6)])
    config = {
        "bootstrap.servers": console.bootstrap, "group.id": "kip848-group", "group.protocol": "consumer",
        "client.id": "kip848-app", "enable.auto.commit": False, "auto.offset.reset": "earliest",
    }  # fmt: skip
    consumer = Consumer(config)
    consumer.subscribe(["kip848-a"])
    read: list[int | None] = []
    try:
        deadline = time.monotonic() + 60
        while len(read) < 6 and time.monotonic() < deadline:
            read += [m.offset() for m in consumer.consume(num_messages=10, timeout=0.2) if m.error() is None]
        assert len(read) == 6
        consumer.commit(asynchronous=False)  # everything read: offset 6
        group = console.get("/api/groups/kip848-group")
        assert group["protocol_kind"] == "consumer" and group["state"] == "Stable"
        (member,) = group["members"]
        assert member["client_id"] == "kip848-app" and member["member_epoch"] >= 1
        assert member["assignment"] == [{"topic": "kip848-a", "partitions": [0]}]
        assert group["offsets"][0]["committed_offset"] == 6 and group["lag"] == 0
        produce(console.bootstrap, "kip848-a", [(None, b"more", [])])
        assert console.get("/api/groups/kip848-group")["lag"] == 1
        listed = {g["group_id"]: g for g in console.get("/api/groups")["groups"]}
        assert listed["kip848-group"]["protocol"] == "consumer"
        timeline = console.get("/api/groups/kip848-group/timeline")
        assert {m["kind"] for m in timeline["marks"]} >= {"join"}
        assert timeline["generations"]
    finally:
        consumer.close()


def test_http_write_without_http_is_refused(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "kafkito", "serve", "--port", "0", "--data-dir", str(tmp_path / "d"),
           "--http-write"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "need --http HOST:PORT" in done.stderr
    assert not (tmp_path / "d").exists()  # refused before anything was created
