"""`kafkito control ...` from a subprocess against `kafkito serve --control`, and the serve flags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafkito.broker.control.address import ControlAddressError, parse_control_address
from tests.control.support import ControlledBroker
from tests.coordinator.clients import KafkaPythonMember, create_topic
from tests.support.net import free_port


def kafkito(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kafkito", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_advance_topology_and_the_fault_verbs(controlled: ControlledBroker) -> None:
    advanced = controlled.control("advance", "1000")
    assert advanced.returncode == 0, advanced.stderr
    assert json.loads(advanced.stdout)["advanced_ms"] == 1000
    topology = json.loads(controlled.control("topology").stdout)
    assert topology["nodes"][0]["port"] == controlled.port

    added = controlled.control(
        "fault", "add", "Produce", "NOT_LEADER_OR_FOLLOWER", "--count", "2", "--topic", "cli-t"
    )
    assert added.returncode == 0, added.stderr
    rule = json.loads(added.stdout)
    listed = [json.loads(line) for line in controlled.control("fault", "list").stdout.splitlines()]
    assert rule["id"] in [r["id"] for r in listed]
    waited = controlled.control("fault", "wait", str(rule["id"]), "--timeout", "0.2")
    assert waited.returncode == 1 and "fired 0 of 1 times" in one_line_error(waited)
    removed = controlled.control("fault", "remove", str(rule["id"]))
    assert removed.returncode == 0, removed.stderr
    again = controlled.control("fault", "remove", str(rule["id"]))
    assert (
        again.returncode == 1
        and one_line_error(again) == f"kafkito control: no fault rule {rule['id']} in force"
    )


def test_group_wait_describe_and_timeline_of_a_real_group(controlled: ControlledBroker) -> None:
    create_topic(controlled.bootstrap, "cli-events")
    member = KafkaPythonMember(controlled.bootstrap, "cli-events", "cli-group", "cli-member")
    try:
        waited = controlled.control("group", "wait", "cli-group", "--members", "1", "--timeout", "60")
        assert waited.returncode == 0, waited.stderr
        assert json.loads(waited.stdout)["state"] == "Stable"
        described = json.loads(controlled.control("group", "describe", "cli-group").stdout)
        assert [m["client_id"] for m in described["members"]] == ["cli-member"]
    finally:
        member.close()  # leaves the group
    empty = controlled.control("group", "wait", "cli-group", "--state", "Empty", "--timeout", "30")
    assert empty.returncode == 0, empty.stderr
    events = [json.loads(line) for line in controlled.control("timeline", "cli-group").stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds.index("member_joined") < kinds.index("rebalance_completed") < kinds.index("member_left")


MEMBER = """
import sys
from confluent_kafka import Consumer

consumer = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "cli-killed", "client.id": "cli-killed-1"})
consumer.subscribe(["cli-killed"])
while True:
    consumer.poll(0.2)
"""


def test_a_killed_member_is_evicted_by_kafkito_control_advance(controlled: ControlledBroker) -> None:
    create_topic(controlled.bootstrap, "cli-killed")
    member = subprocess.Popen([sys.executable, "-c", MEMBER, controlled.bootstrap])
    try:
        joined = controlled.control("group", "wait", "cli-killed", "--members", "1", "--timeout", "60")
        assert joined.returncode == 0, joined.stderr
    finally:
        member.kill()  # SIGKILL: no LeaveGroup
        member.wait()
    still = json.loads(controlled.control("group", "describe", "cli-killed").stdout)
    assert still["state"] == "Stable" and len(still["members"]) == 1  # nothing happens on its own
    assert controlled.control("advance", "45000").returncode == 0  # librdkafka's session.timeout.ms
    empty = controlled.control(
        "group", "wait", "cli-killed", "--state", "Empty", "--members", "0", "--timeout", "30"
    )
    assert empty.returncode == 0, empty.stderr
    events = [json.loads(line) for line in controlled.control("timeline", "cli-killed").stdout.splitlines()]
    evicted = [e for e in events if e["event"] == "member_evicted"]
    assert [e["member"] for e in evicted] == [m["member_id"] for m in still["members"]]


def test_a_group_wait_that_times_out_fails_with_the_last_state(controlled: ControlledBroker) -> None:
    result = controlled.control("group", "wait", "cli-nobody", "--timeout", "0.1")
    assert result.returncode == 1
    assert one_line_error(result).startswith("kafkito control: group cli-nobody is unknown")


def test_an_endpoint_that_is_not_there_is_one_line_and_status_1() -> None:
    result = kafkito("control", "--url", f"127.0.0.1:{free_port()}", "topology")
    assert result.returncode == 1
    assert "cannot reach the control endpoint" in one_line_error(result)


def test_no_endpoint_and_bad_usage_are_status_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kafkito", "control", "topology"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 2 and "KAFKITO_CONTROL" in one_line_error(result)
    assert kafkito("control", "--url", "127.0.0.1:1", "advance", "soon").returncode == 2


def test_clock_and_fault_clear(controlled: ControlledBroker) -> None:
    now = json.loads(controlled.control("clock").stdout)["now_ms"]
    assert json.loads(controlled.control("advance", "5").stdout)["now_ms"] >= now + 5
    added = json.loads(
        controlled.control("fault", "add", "Metadata", "NONE", "--delay-ms", "10", "--forever").stdout
    )
    assert added["count"] is None and added["error"] == "NONE"
    cleared = [json.loads(line) for line in controlled.control("fault", "clear").stdout.splitlines()]
    assert added["id"] in [r["id"] for r in cleared]
    assert controlled.control("fault", "list").stdout == ""


def test_allow_remote_without_an_address_is_a_usage_error(tmp_path: Path) -> None:
    result = kafkito("serve", "--data-dir", str(tmp_path), "--control-allow-remote")
    assert result.returncode == 2 and "needs --control" in one_line_error(result)


def test_serve_refuses_a_control_address_off_loopback(tmp_path: Path) -> None:
    result = kafkito("serve", "--data-dir", str(tmp_path), "--control", "192.0.2.1:9644")
    assert result.returncode == 2
    assert "not a loopback address" in one_line_error(result) and "--control-allow-remote" in result.stderr
    assert not (tmp_path / "meta.properties").exists()  # the broker did not start


def test_serve_refuses_a_control_port_in_use(tmp_path: Path, controlled: ControlledBroker) -> None:
    result = kafkito(
        "serve",
        "--port",
        "0",
        "--data-dir",
        str(tmp_path),
        "--control",
        f"127.0.0.1:{controlled.control_port}",
    )
    assert result.returncode == 2
    assert f"--control 127.0.0.1:{controlled.control_port}" in one_line_error(result)


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("127.0.0.1:9644", "127.0.0.1", 9644),
        (":0", "127.0.0.1", 0),
        ("[::1]:80", "::1", 80),
        ("localhost:1", "localhost", 1),
    ],
)
def test_loopback_addresses_parse(text: str, host: str, port: int) -> None:
    address = parse_control_address(text)
    assert (address.host, address.port) == (host, port)


@pytest.mark.parametrize(
    "text", ["127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000", "0.0.0.0:9644", "192.0.2.1:1"]
)
def test_bad_or_remote_addresses_are_refused(text: str) -> None:
    with pytest.raises(ControlAddressError):
        parse_control_address(text)


def test_a_remote_address_is_accepted_when_allowed() -> None:
    assert parse_control_address("0.0.0.0:9644", allow_remote=True).host == "0.0.0.0"
