"""DescribeGroups, ListGroups and DeleteGroups over every group type (classic, consumer, share, streams)."""

from __future__ import annotations

from collections.abc import Collection, Iterable

import structlog

from kafkito.broker.coordinator.classic.group import ClassicGroup
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.offset_manager import OffsetManager
from kafkito.broker.coordinator.parts import GroupTypeParts
from kafkito.broker.coordinator.results import (
    DEAD_GROUP_SUMMARY,
    EMPTY_GROUP_SUMMARY,
    DescribedGroup,
    GroupOverview,
    GroupSummary,
)
from kafkito.broker.coordinator.runtime import Runtime
from kafkito.protocol.errors import ErrorCode

log = structlog.get_logger("kafkito.coordinator")


class GroupAdmin:
    """The admin requests that look at, list or remove whole groups."""

    def __init__(self, rt: Runtime, offsets: OffsetManager, parts: GroupTypeParts) -> None:
        self._rt = rt
        self._offsets = offsets
        self._parts = parts

    def describe_groups(self, group_ids: Iterable[str]) -> list[DescribedGroup]:
        described = []
        for group_id in group_ids:
            error = self._rt.validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                described.append(DescribedGroup(group_id, error, EMPTY_GROUP_SUMMARY))
                continue
            group = self._rt.groups.get(group_id)
            summary = DEAD_GROUP_SUMMARY if group is None else _summary(group)
            described.append(DescribedGroup(group_id, ErrorCode.NONE, summary))
        return described

    def list_groups(
        self, states: Collection[str] = (), types: Collection[str] = ()
    ) -> tuple[ErrorCode, list[GroupOverview]]:
        """Groups whose state and type match the filters (case-insensitive; empty filter = all)."""
        rt = self._rt
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if rt.sink.is_any_loading() else ErrorCode.NONE
        kinds = {t.lower() for t in types}
        wanted = {s.lower() for s in states}
        overviews = []
        if not kinds or "classic" in kinds:
            overviews = [
                GroupOverview(g.group_id, g.protocol_type or "", g.state.value)
                for g in rt.groups.values()
                if not wanted or g.state.value.lower() in wanted
            ]
        typed = (("consumer", rt.consumer_groups), ("share", rt.share_groups), ("streams", rt.streams_groups))
        for kind, groups in typed:
            if not kinds or kind in kinds:
                overviews += [
                    GroupOverview(g.group_id, kind, g.state.value, kind)
                    for g in groups.values()
                    if not wanted or g.state.value.lower() in wanted
                ]
        return error, overviews

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        rt = self._rt
        errors: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            error = rt.validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                errors[group_id] = error
            elif group_id in rt.consumer_groups:
                errors[group_id] = self._offsets.delete_consumer_group(rt.consumer_groups[group_id])
            elif group_id in rt.share_groups:
                errors[group_id] = self._parts.share.delete_group(rt.share_groups[group_id])
            elif group_id in rt.streams_groups:
                errors[group_id] = self._offsets.delete_consumer_group(rt.streams_groups[group_id])
            else:
                errors[group_id] = self._delete_classic(group_id)
        return errors

    def _delete_classic(self, group_id: str) -> ErrorCode:
        group = self._rt.groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.GROUP_ID_NOT_FOUND
        if not group.is_(GroupState.EMPTY):
            return ErrorCode.NON_EMPTY_GROUP
        self._rt.transition(group, GroupState.DEAD, "deleted by DeleteGroups")
        del self._rt.groups[group_id]
        partitions = {*group.offsets, *self._rt.txn_offsets.pending_partitions(group_id)}
        removed = self._offsets.delete_offsets(
            group, list(partitions), group_tombstone=group.generation_id > 0
        )
        log.info("group.deleted", group=group_id, offsets_removed=removed)
        return ErrorCode.NONE


def _summary(group: ClassicGroup) -> GroupSummary:
    if group.is_(GroupState.STABLE) and group.protocol_name is not None:
        protocol = group.protocol_name
        return GroupSummary(
            group.state.value,
            group.protocol_type or "",
            protocol,
            tuple(m.summary(protocol) for m in group.members()),
        )
    return GroupSummary(
        group.state.value,
        group.protocol_type or "",
        "",
        tuple(m.summary_without_metadata() for m in group.members()),
    )
