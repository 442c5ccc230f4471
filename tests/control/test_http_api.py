"""The control endpoint's JSON API with a real HTTP client (urllib) against `kafkito serve --control`,
and real Kafka clients whose requests the injected faults answer."""

from __future__ import annotations

from typing import Any

from tests.control.support import ControlledBroker
from tests.coordinator.clients import KafkaPythonMember, create_topic


def producer(bootstrap: str, client_id: str) -> Any:
    from kafka import KafkaProducer

    return KafkaProducer(
        bootstrap_servers=bootstrap, client_id=client_id, retries=10, retry_backoff_ms=50, acks="all"
    )


def test_the_index_lists_the_routes(controlled: ControlledBroker) -> None:
    answer = controlled.call("GET", "/")
    assert answer.status == 200
    assert "POST /clock/advance" in answer.body["routes"]
    assert "GET /groups/{group_id}/timeline" in answer.body["routes"]


def test_topology_names_the_one_node_clients_bootstrap_from(controlled: ControlledBroker) -> None:
    answer = controlled.call("GET", "/topology")
    assert answer.status == 200
    node = {"node_id": 1, "host": "127.0.0.1", "port": controlled.port, "live": True}
    assert answer.body["nodes"] == [node]
    assert answer.body["controller_id"] == 1 and answer.body["cluster_id"]


def test_advance_moves_the_broker_clock_forward(controlled: ControlledBroker) -> None:
    first = controlled.call("POST", "/clock/advance", {"ms": 0}).body["now_ms"]
    answer = controlled.call("POST", "/clock/advance", {"ms": 3_600_000})
    assert answer.status == 200 and answer.body["advanced_ms"] == 3_600_000
    assert answer.body["now_ms"] >= first + 3_600_000


def test_the_clock_reads_what_advance_returned(controlled: ControlledBroker) -> None:
    advanced = controlled.call("POST", "/clock/advance", {"ms": 1}).body["now_ms"]
    assert controlled.call("GET", "/clock").body["now_ms"] >= advanced


def test_clearing_the_faults_removes_every_rule_in_force(controlled: ControlledBroker) -> None:
    first = controlled.call(
        "POST", "/faults", {"api": "Metadata", "error": "UNKNOWN_SERVER_ERROR", "count": None}
    )
    second = controlled.call("POST", "/faults", {"api": "Fetch", "error": None, "delay_ms": 50, "count": 5})
    assert first.status == second.status == 201, (first, second)
    cleared = controlled.call("DELETE", "/faults")
    assert {r["id"] for r in cleared.body["removed"]} >= {first.body["id"], second.body["id"]}
    assert controlled.call("GET", "/faults").body["faults"] == []
    assert controlled.call("GET", f"/faults/{first.body['id']}").body["active"] is False


def test_bad_input_gets_a_400_with_one_message_and_changes_nothing(controlled: ControlledBroker) -> None:
    before = controlled.call("GET", "/faults").body["faults"]
    cases: list[tuple[str, str, Any, bytes | None, str]] = [
        ("POST", "/clock/advance", {"ms": "soon"}, None, "'ms' must be an integer"),
        ("POST", "/clock/advance", {"ms": -5}, None, "'ms' must be at least 0"),
        ("POST", "/clock/advance", None, b"{not json", "not JSON"),
        ("POST", "/clock/advance", None, b"[1, 2]", "must be a JSON object"),
        ("POST", "/clock/advance", {}, None, "'ms' is required"),
        ("POST", "/faults", {"api": "Produce"}, None, ""),
        ("POST", "/faults", {"api": "NoSuchApi", "error": "NOT_LEADER_OR_FOLLOWER"}, None, "NoSuchApi"),
        ("POST", "/faults", {"api": "Produce", "error": "NO_SUCH_ERROR"}, None, "NO_SUCH_ERROR"),
        ("POST", "/groups/g/wait", {"timeout": "long"}, None, "'timeout' must be a number"),
    ]
    for method, path, body, raw, message in cases:
        answer = controlled.call(method, path, body, raw=raw)
        assert answer.status == 400, (path, body, raw, answer)
        assert message in answer.body["error"] and "\n" not in answer.body["error"], answer
    assert controlled.call("GET", "/faults").body["faults"] == before


def test_unknown_routes_faults_and_groups_get_a_404(controlled: ControlledBroker) -> None:
    assert controlled.call("GET", "/no/such/route").status == 404
    assert controlled.call("GET", "/faults/999999").body == {"error": "no fault rule 999999"}
    assert controlled.call("DELETE", "/faults/999999").body == {"error": "no fault rule 999999 in force"}
    assert controlled.call("GET", "/groups/never-seen").status == 404
    assert controlled.call("GET", "/groups/never-seen/timeline").body == {"group": "never-seen", "events": []}


def test_a_fault_rule_is_added_listed_waited_for_and_answers_a_real_producer(
    controlled: ControlledBroker,
) -> None:
    create_topic(controlled.bootstrap, "http-orders")
    added = controlled.call(
        "POST",
        "/faults",
        {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "count": 3, "topic": "http-orders"},
    )
    assert added.status == 201, added
    rule = added.body
    assert rule["fired"] == 0
    listed = controlled.call("GET", "/faults").body["faults"]
    assert rule["id"] in [r["id"] for r in listed]
    not_yet = controlled.call("POST", f"/faults/{rule['id']}/wait", {"timeout": 0.2})
    assert not_yet.status == 408 and not_yet.body["rule"]["fired"] == 0, not_yet

    p = producer(controlled.bootstrap, "http-producer")
    try:
        metadata = p.send("http-orders", b"kept").get(timeout=60)  # retried through the three errors
    finally:
        p.close()
    waited = controlled.call("POST", f"/faults/{rule['id']}/wait", {"fired": 3, "timeout": 30})
    assert waited.status == 200 and waited.body["fired"] == 3, waited
    assert waited.body["remaining"] == 0 and not waited.body["active"]
    assert rule["id"] not in [r["id"] for r in controlled.call("GET", "/faults").body["faults"]]
    assert metadata.offset == 0  # the faulted attempts appended nothing


def test_a_fault_rule_removed_is_no_longer_listed(controlled: ControlledBroker) -> None:
    rule = controlled.call("POST", "/faults", {"api": "Fetch", "error": 6, "count": None}).body
    assert controlled.call("DELETE", f"/faults/{rule['id']}").status == 200
    assert rule["id"] not in [r["id"] for r in controlled.call("GET", "/faults").body["faults"]]


def test_disconnect_drops_a_clients_connections(controlled: ControlledBroker) -> None:
    create_topic(controlled.bootstrap, "http-disconnect")
    p = producer(controlled.bootstrap, "http-dropped")
    try:
        p.send("http-disconnect", b"before").get(timeout=60)
        answer = controlled.call("POST", "/connections/disconnect", {"client_id": "http-dropped"})
        assert answer.status == 200 and answer.body["dropped"] >= 1, answer
        p.send("http-disconnect", b"after").get(timeout=60)  # the producer reconnects
    finally:
        p.close()
    assert controlled.call("POST", "/connections/disconnect", {"client_id": "nobody"}).body["dropped"] == 0


def test_a_blackholed_member_is_evicted_by_an_advance_and_the_timeline_tells_it(
    controlled: ControlledBroker,
) -> None:
    create_topic(controlled.bootstrap, "http-events")
    # A 15 s session (kafka-python's heartbeats can stall that long on a loaded machine), advanced past.
    member = KafkaPythonMember(
        controlled.bootstrap, "http-events", "http-group", "http-member", session_timeout_ms=15_000
    )
    try:
        stable = controlled.call(
            "POST", "/groups/http-group/wait", {"state": "Stable", "members": 1, "timeout": 50}
        )
        assert stable.status == 200, stable
        assert [m["client_id"] for m in stable.body["members"]] == ["http-member"]
        described = controlled.call("GET", "/groups/http-group").body
        assert described["state"] == "Stable" and described["generation"] >= 1

        controlled.call("POST", "/connections/blackhole", {"client_id": "http-member"})
        advanced = controlled.call("POST", "/clock/advance", {"ms": 15_001})  # its session timeout
        assert advanced.status == 200
        empty = controlled.call(
            "POST", "/groups/http-group/wait", {"state": "Empty", "members": 0, "timeout": 30}
        )
        assert empty.status == 200, empty
    finally:
        controlled.call("POST", "/connections/unblackhole", {"client_id": "http-member"})
        member.close()

    events = controlled.call("GET", "/groups/http-group/timeline").body["events"]
    kinds = [e["event"] for e in events]
    member_id = stable.body["members"][0]["member_id"]
    assert "member_joined" in kinds and "rebalance_completed" in kinds
    evicted = [e for e in events if e["event"] == "member_evicted"]
    assert evicted and evicted[0]["member"] == member_id
    assert "heartbeat expiration" in evicted[0]["reason"]
    assert kinds.index("rebalance_completed") < kinds.index("member_evicted")


def test_a_group_wait_that_times_out_answers_408_with_the_last_state_seen(
    controlled: ControlledBroker,
) -> None:
    answer = controlled.call("POST", "/groups/http-nobody/wait", {"timeout": 0.1})
    assert answer.status == 408
    assert answer.body["last_seen"] is None and "http-nobody" in answer.body["error"]
