"""GROUP config resources kept across restarts: checked by the group coordinator, saved in the data
dir's dynamic state, then applied; restored into the coordinator at start.

Kafka keeps a group's dynamic configs (`consumer.session.timeout.ms`, `share.auto.offset.reset`...)
as ConfigRecords of its metadata log, apart from the group itself: they outlive the group's deletion
and a broker restart. Here they sit beside the dynamic broker configs in `dynamic-state.json`, as the
text the admin gave; the coordinator's own tables (`coordinator.consumer.group_configs`,
`coordinator.share.group_configs`) hold them in memory and validate them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.dynamic_state import DynamicStateStore
from kafkito.broker.log.errors import KafkaStorageError

if TYPE_CHECKING:
    from kafkito.broker.coordinator.streams.config import GroupConfigsWithStreams as AllGroupConfigs

log = structlog.get_logger("kafkito.config")


class DurableGroupConfigs:
    """The saved overrides of every group, and the one path that changes them."""

    __slots__ = ("store",)

    def __init__(self, store: DynamicStateStore) -> None:
        self.store = store

    @property
    def saved(self) -> dict[str, dict[str, str]]:
        return {group: dict(values) for group, values in self.store.state.group_configs.items()}

    def alter(
        self,
        groups: AllGroupConfigs,
        group_id: str,
        to_set: Mapping[str, str],
        to_delete: Collection[str],
        validate_only: bool = False,
    ) -> None:
        """Check the change (GroupConfigError), save it (KafkaStorageError: nothing changed), apply it."""
        groups.alter(group_id, to_set, to_delete, True)
        if validate_only:
            return
        state = self.store.state
        before = state.group_configs.get(group_id)
        overrides = {k: v for k, v in (before or {}).items() if k not in to_delete} | dict(to_set)
        if overrides:
            state.group_configs[group_id] = overrides
        else:
            state.group_configs.pop(group_id, None)
        try:
            self.store.save()
        except OSError as exc:
            if before is None:
                state.group_configs.pop(group_id, None)
            else:
                state.group_configs[group_id] = before
            log.error("config.group_save_failed", group=group_id, path=str(self.store.path), error=str(exc))
            raise KafkaStorageError(f"could not save the configs of group {group_id}: {exc}") from exc
        groups.alter(group_id, to_set, to_delete, False)
        log.info("config.group_altered", group=group_id, configs=overrides)

    def restore(self, groups: Callable[[], AllGroupConfigs]) -> None:
        """Give the coordinator the saved overrides (at start; nothing is imported when none are saved).
        An override the broker's current bounds refuse is logged and left out, the others apply."""
        saved = self.saved
        if not saved:
            return
        from kafkito.broker.coordinator.consumer.group_configs import GroupConfigError

        configs = groups()
        for group_id, overrides in saved.items():
            try:
                configs.alter(group_id, overrides, (), False)
                continue
            except GroupConfigError:
                pass
            for name, value in overrides.items():  # the ones that still apply, each on its own
                try:
                    configs.alter(group_id, {name: value}, (), False)
                except GroupConfigError as exc:
                    log.warning("config.group_not_restored", group=group_id, config=name, error=exc.message)
        log.info("config.groups_restored", groups=len(saved))
