"""DeleteRecords compared with Kafka 4.4 on topics of each cleanup.policy: a topic that is only
`compact` refuses it (POLICY_VIOLATION, before the offset is checked); `compact,delete` deletes as
`delete` does."""

from __future__ import annotations

from tests.conformance.framework import Side, scenario
from tests.conformance.scenarios_admin import create

DELETE_RECORDS = 21


@scenario("admin")
def delete_records_cleanup_policy(side: Side) -> None:
    for policy in ("compact", "compact,delete", "delete,compact", "delete"):
        t = side.name(policy.replace(",", "-"))
        create(side, t, f"cleanup.policy={policy}", cleanup_policy=policy)
        for offset, what in (
            (0, "before offset 0"),
            (-1, "up to the high watermark"),
            (5, "past the high watermark"),
        ):
            side.request(
                DELETE_RECORDS, 2, f"{policy}: {what}", timeout_ms=5000,
                topics=[{"name": t, "partitions": [{"partition_index": 0, "offset": offset}]}],
            )  # fmt: skip
        side.request(
            DELETE_RECORDS, 2, f"{policy}: an unknown partition", timeout_ms=5000,
            topics=[{"name": t, "partitions": [{"partition_index": 3, "offset": 0}]}],
        )  # fmt: skip
