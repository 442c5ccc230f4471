"""How the share-group APIs refuse a request before any group or session is touched, as Kafka 4.4
answers the same requests: which field is checked first, the error, and whether a message comes with
it (ShareFetch 78, ShareAcknowledge 79, ShareGroupHeartbeat 76, Alter/DeleteShareGroupOffsets 91/92)."""

from __future__ import annotations

from typing import Any

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

MEMBER = "AAAAAAAAAAAAAAAAAAAAAA"


def share_fetch(client: WireClient, group: str, member: str, epoch: int) -> Any:
    return client.request(
        78, 1, group_id=group, member_id=member, share_session_epoch=epoch, max_wait_ms=0, min_bytes=1,
        max_bytes=1000, max_records=10, batch_size=10, topics=[], forgotten_topics_data=[],
    )  # fmt: skip


def share_acknowledge(client: WireClient, group: str, member: str, epoch: int) -> Any:
    return client.request(79, 1, group_id=group, member_id=member, share_session_epoch=epoch, topics=[])


def heartbeat(client: WireClient, group: str, member: str, epoch: int = 0) -> Any:
    return client.request(
        76, 1, group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
        subscribed_topic_names=["t"] if epoch == 0 else None,
    )  # fmt: skip


def answer(response: Any) -> tuple[int, str | None]:
    return response.error_code, response.error_message


def test_share_fetch_and_acknowledge_refuse_an_empty_member_id_whatever_the_group(
    broker: ThreadBroker,
) -> None:
    with WireClient(broker.bootstrap) as client:
        for group in ("", "g"):
            assert answer(share_fetch(client, group, "", 0)) == (ErrorCode.INVALID_REQUEST, None)
            assert answer(share_acknowledge(client, group, "", 1)) == (ErrorCode.INVALID_REQUEST, None)


def test_an_empty_share_group_id_is_a_group_like_any_other(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        assert answer(share_fetch(client, "", MEMBER, 0)) == (ErrorCode.NONE, None)
        assert answer(share_acknowledge(client, "", MEMBER, 1)) == (ErrorCode.NONE, None)
        assert answer(share_fetch(client, "", MEMBER, -1)) == (ErrorCode.NONE, None)


def test_share_session_errors_carry_no_message(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        assert answer(share_acknowledge(client, "g", MEMBER, 0)) == (
            ErrorCode.INVALID_SHARE_SESSION_EPOCH,
            None,
        )
        assert answer(share_acknowledge(client, "g", MEMBER, -1)) == (ErrorCode.SHARE_SESSION_NOT_FOUND, None)
        assert answer(share_fetch(client, "g", MEMBER, 5)) == (ErrorCode.SHARE_SESSION_NOT_FOUND, None)
        assert answer(share_fetch(client, "g", MEMBER, 0)) == (ErrorCode.NONE, None)
        assert answer(share_fetch(client, "g", MEMBER, 5)) == (ErrorCode.INVALID_SHARE_SESSION_EPOCH, None)


def test_share_group_heartbeat_refuses_an_empty_member_id_first_and_without_a_message(
    broker: ThreadBroker,
) -> None:
    with WireClient(broker.bootstrap) as client:
        assert answer(heartbeat(client, "", "")) == (ErrorCode.INVALID_REQUEST, None)
        assert answer(heartbeat(client, "g", "", -2)) == (ErrorCode.INVALID_REQUEST, None)
        # A blank member id passes that check and is the coordinator's, with its message.
        assert answer(heartbeat(client, "g", " ")) == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        assert answer(heartbeat(client, "", MEMBER)) == (ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")


def test_share_group_offsets_alter_and_delete_word_an_empty_group_id(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        altered = client.request(91, 0, group_id="", topics=[])
        deleted = client.request(92, 0, group_id="", topics=[])
    for response in (altered, deleted):
        assert answer(response) == (ErrorCode.INVALID_GROUP_ID, "The group id is invalid.")
