"""The control endpoint refuses what a web page could send it: a foreign or rebound `Host`, another
site's `Origin`, and writes that are not JSON (CORS "simple requests"); `kafkito control` and plain
clients are unaffected. Real HTTP requests against `kafkito serve --control`."""

from __future__ import annotations

import json

import pytest

from tests.control.support import ControlledBroker, raw_request

JSON = {"Content-Type": "application/json"}
FAR_MS = 86_400_000  # a day: an advance that, had it happened, no later clock reading could miss
# A rebinding attacker's names resolve to 127.0.0.1, but the browser sends them as they are.
FOREIGN_HOSTS = ["evil.example", "evil.example:{port}", "localhost.evil.example:{port}",
                 "127.0.0.1.nip.io:{port}", "10.0.0.1:{port}", "[::2]:{port}"]  # fmt: skip
LOOPBACK_HOSTS = ["localhost:{port}", "LOCALHOST", "kafkito.localhost:{port}", "127.0.0.1:{port}",
                  "127.3.2.1", "[::1]:{port}"]  # fmt: skip


def now_ms(controlled: ControlledBroker) -> int:
    answer = controlled.call("GET", "/clock")
    assert answer.status == 200, answer
    return int(answer.body["now_ms"])


def fault_ids(controlled: ControlledBroker) -> set[int]:
    return {rule["id"] for rule in controlled.call("GET", "/faults").body["faults"]}


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
def test_a_host_that_is_not_loopback_is_refused_on_get_and_post(
    controlled: ControlledBroker, host: str
) -> None:
    host = host.format(port=controlled.control_port)
    got = raw_request(controlled.control_port, "GET", "/faults", {"Host": host})
    assert got.status == 403 and "Host" in got.text and got.headers.get_content_type() == "text/plain"
    before = now_ms(controlled)
    body = json.dumps({"ms": FAR_MS}).encode()
    posted = raw_request(controlled.control_port, "POST", "/clock/advance", {"Host": host, **JSON}, body)
    assert posted.status == 403, posted
    assert now_ms(controlled) < before + FAR_MS  # the clock did not move


@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
def test_loopback_names_and_addresses_are_served(controlled: ControlledBroker, host: str) -> None:
    got = raw_request(
        controlled.control_port, "GET", "/clock", {"Host": host.format(port=controlled.control_port)}
    )
    assert got.status == 200 and "now_ms" in json.loads(got.text)


def test_another_sites_origin_is_refused_and_the_endpoints_own_is_served(
    controlled: ControlledBroker,
) -> None:
    port = controlled.control_port
    own = f"127.0.0.1:{port}"
    fault = json.dumps({"api": "Metadata", "error": "UNKNOWN_SERVER_ERROR", "count": 1}).encode()
    before = fault_ids(controlled)
    for origin in ("http://evil.example", f"http://127.0.0.1:{port + 1}", f"https://{own}", "null"):
        posted = raw_request(port, "POST", "/faults", {"Host": own, "Origin": origin, **JSON}, fault)
        assert posted.status == 403 and "Origin" in posted.text, (origin, posted)
    assert fault_ids(controlled) == before  # no rule was added
    read = raw_request(port, "GET", "/faults", {"Host": own, "Origin": "http://evil.example"})
    assert read.status == 403
    posted = raw_request(port, "POST", "/faults", {"Host": own, "Origin": f"http://{own}", **JSON}, fault)
    assert posted.status == 201, posted
    rule_id = json.loads(posted.text)["id"]
    cleared = raw_request(port, "DELETE", f"/faults/{rule_id}", {"Host": own, **JSON})  # no Origin: curl
    assert cleared.status == 200, cleared


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/x-www-form-urlencoded"},
        {"Content-Type": "multipart/form-data; boundary=x"},
        {},
    ],
    ids=["text-plain", "form", "multipart", "none"],
)
def test_a_write_that_is_not_json_is_refused_with_415(
    controlled: ControlledBroker, headers: dict[str, str]
) -> None:
    port = controlled.control_port
    before = now_ms(controlled)
    posted = raw_request(port, "POST", "/clock/advance", headers, json.dumps({"ms": FAR_MS}).encode())
    assert posted.status == 415 and "application/json" in posted.text, posted
    assert now_ms(controlled) < before + FAR_MS
    rule = controlled.call(
        "POST", "/faults", {"api": "Metadata", "error": "UNKNOWN_SERVER_ERROR", "count": 1}
    )
    assert rule.status == 201
    deleted = raw_request(port, "DELETE", f"/faults/{rule.body['id']}", headers)
    assert deleted.status == 415
    assert rule.body["id"] in fault_ids(controlled)
    assert controlled.call("DELETE", f"/faults/{rule.body['id']}").status == 200


def test_answers_carry_nosniff_grant_no_cors_and_no_get_changes_state(controlled: ControlledBroker) -> None:
    port = controlled.control_port
    for path in ("/clock", "/no-such-route"):
        got = raw_request(port, "GET", path)
        assert got.headers["X-Content-Type-Options"] == "nosniff", path
        assert got.headers["X-Frame-Options"] == "DENY" and "Access-Control-Allow-Origin" not in got.headers
    preflight = raw_request(port, "OPTIONS", "/clock/advance", {
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    })  # fmt: skip
    assert preflight.status >= 400 and not any(
        h.lower().startswith("access-control-") for h in preflight.headers
    )
    before = now_ms(controlled)
    for path in (
        f"/clock/advance?ms={FAR_MS}",
        f"/clock/advance?ms={FAR_MS}&callback=f",
        "/connections/disconnect",
    ):
        assert raw_request(port, "GET", path).status == 405, path
    assert now_ms(controlled) < before + FAR_MS


def test_kafkito_control_sends_json_on_every_write(controlled: ControlledBroker) -> None:
    added = controlled.control("fault", "add", "Metadata", "UNKNOWN_SERVER_ERROR", "--forever")
    assert added.returncode == 0, added.stderr
    rule_id = str(json.loads(added.stdout)["id"])
    for verb in (
        ("fault", "remove", rule_id),
        ("fault", "clear"),
        ("disconnect", "nobody"),
        ("advance", "1"),
    ):
        done = controlled.control(*verb)  # DELETEs with no body, POSTs with one
        assert done.returncode == 0, (verb, done.stderr)


def test_an_endpoint_bound_off_loopback_also_answers_to_its_own_name_and_only_that() -> None:
    from kafkito.broker.control.address import ControlAddress
    from kafkito.broker.control.browser_guard import HostRule

    bound = HostRule(ControlAddress("Build-Box.lan", 9644))  # --control-allow-remote build-box.lan:9644
    assert bound.names == {"build-box.lan"}
    loopback = HostRule(ControlAddress("127.0.0.1", 9644))
    assert loopback.names == set() and not loopback.wildcard  # loopback names only
    assert HostRule(ControlAddress("0.0.0.0", 9644)).wildcard  # and the address a request arrived on
