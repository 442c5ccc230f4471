"""Kafka's `uniform` server-side assignor: sticky and balanced; one builder when every member
subscribes to the same topics, another when subscriptions differ."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from kafkito.broker.coordinator.consumer.assignors.common import effective_subscriptions
from kafkito.broker.coordinator.consumer.assignors.spec import GroupAssignment, MemberSpec, TopicSpec
from kafkito.broker.coordinator.consumer.assignors.uniform_heterogeneous import assign_heterogeneous
from kafkito.broker.coordinator.consumer.assignors.uniform_homogeneous import assign_homogeneous


class UniformAssignor:
    name = "uniform"

    def assign(
        self, members: Mapping[str, MemberSpec], topics: Mapping[uuid.UUID, TopicSpec]
    ) -> GroupAssignment:
        subscriptions = effective_subscriptions(members, topics)
        distinct = set(subscriptions.values())
        if not distinct:
            return {}
        if len(distinct) == 1:
            return assign_homogeneous(members, distinct.pop(), topics)
        return assign_heterogeneous(members, subscriptions, topics)
