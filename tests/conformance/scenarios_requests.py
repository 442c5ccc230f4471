"""Single requests whose answer hangs on a detail: FindCoordinator at each version and key type (its
messages, the internal topic it creates)."""

from __future__ import annotations

from tests.conformance.framework import Side, scenario

FIND_COORDINATOR = 10


@scenario("sequence")
def find_coordinator_versions(side: Side) -> None:
    g, tid = side.name("group"), side.name("txn")
    side.request(FIND_COORDINATOR, 0, "a group", key=g)
    for v in (1, 3):
        side.request(FIND_COORDINATOR, v, "a group", key=g, key_type=0)
        side.request(FIND_COORDINATOR, v, "a transactional id", key=tid, key_type=1)
        side.request(FIND_COORDINATOR, v, "an unknown key type", key=g, key_type=7)
    side.request(FIND_COORDINATOR, 4, "two group ids", key_type=0,
                 coordinator_keys=[g, tid])  # fmt: skip
    side.request(FIND_COORDINATOR, 4, "transactional ids", key_type=1, coordinator_keys=[tid, ""])
    side.request(FIND_COORDINATOR, 4, "an unknown key type", key_type=7, coordinator_keys=[g])
