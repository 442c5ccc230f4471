"""The cluster's read-only views, as Kafka's admin tools would get them from this broker: ACLs
(DescribeAcls), SCRAM users (DescribeUserScramCredentials), transactions (ListTransactions then
DescribeTransactions, open ones first), the broker's configs (DescribeConfigs) and the feature
levels (ApiVersions v3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkito.broker.console import admin, configs

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

OPEN_TRANSACTION_STATES = ("Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence")


def _name(enum: Any, value: int) -> str:
    try:
        return str(enum(value).name)
    except ValueError:
        return str(value)


async def acls(broker: Broker) -> list[dict[str, Any]]:
    """Every ACL binding: the filter that matches any resource, principal, host and operation."""
    from kafkito.broker.security.acls import AclOperation, AclPermissionType, PatternType, ResourceType

    response = await admin.call(
        broker, 29, 3,
        resource_type_filter=ResourceType.ANY, resource_name_filter=None,
        pattern_type_filter=PatternType.ANY, principal_filter=None, host_filter=None,
        operation=AclOperation.ANY, permission_type=AclPermissionType.ANY,
    )  # fmt: skip
    admin.check(response.error_code, response.error_message)
    out = [
        {
            "resource_type": _name(ResourceType, resource.resource_type),
            "resource_name": resource.resource_name,
            "pattern_type": _name(PatternType, resource.pattern_type),
            "principal": acl.principal,
            "host": acl.host,
            "operation": _name(AclOperation, acl.operation),
            "permission_type": _name(AclPermissionType, acl.permission_type),
        }
        for resource in response.resources
        for acl in resource.acls
    ]
    return sorted(out, key=lambda a: (a["resource_type"], a["resource_name"], a["principal"], a["operation"]))


async def scram_users(broker: Broker) -> list[dict[str, Any]]:
    """Each SCRAM user with its mechanisms and iterations (never a salt or a key)."""
    from kafkito.broker.security.scram import ScramMechanism

    response = await admin.call(broker, 50, 0, users=None)
    admin.check(response.error_code, response.error_message)
    users = [
        {
            "user": result.user,
            "credentials": [
                {
                    "mechanism": _name(ScramMechanism, c.mechanism).replace("_", "-"),
                    "iterations": c.iterations,
                }
                for c in result.credential_infos
            ],
        }
        for result in response.results
        if not result.error_code
    ]
    return sorted(users, key=lambda u: u["user"])


async def transactions(broker: Broker) -> list[dict[str, Any]]:
    """Every transactional id the coordinator knows, open transactions first (oldest first), then the
    rest by id."""
    listed = await admin.call(broker, 66, 0, state_filters=[], producer_id_filters=[])
    admin.check(listed.error_code)
    ids = sorted(state.transactional_id for state in listed.transaction_states)
    if not ids:
        return []
    described = await admin.call(broker, 65, 0, transactional_ids=ids)
    out = [
        {
            "transactional_id": state.transactional_id,
            "state": state.transaction_state,
            "open": state.transaction_state in OPEN_TRANSACTION_STATES,
            "producer_id": state.producer_id,
            "producer_epoch": state.producer_epoch,
            "timeout_ms": state.transaction_timeout_ms,
            "start_time_ms": state.transaction_start_time_ms,
            "partitions": [{"topic": t.topic, "partitions": sorted(t.partitions)} for t in state.topics],
            "error": None if not state.error_code else admin.AdminError(state.error_code).name,
        }
        for state in described.transaction_states
    ]
    return sorted(
        out,
        key=lambda t: (not t["open"], t["start_time_ms"] if t["open"] else 0, t["transactional_id"]),
    )


async def features(broker: Broker) -> dict[str, Any]:
    """The finalized feature levels and each feature's supported range (ApiVersions v3)."""
    response = await admin.call(
        broker, 18, 3, client_software_name="kafkito-console", client_software_version="1"
    )
    admin.check(response.error_code)
    supported = {f.name: (f.min_version, f.max_version) for f in response.supported_features}
    finalized = {f.name: f.max_version_level for f in response.finalized_features}
    rows = [
        {
            "name": name,
            "finalized_level": finalized.get(name),
            "supported_min": supported[name][0] if name in supported else None,
            "supported_max": supported[name][1] if name in supported else None,
        }
        for name in sorted(set(supported) | set(finalized))
    ]
    return {"epoch": response.finalized_features_epoch, "features": rows}


async def broker_configs(broker: Broker) -> dict[str, Any]:
    """This broker's configs with their sources and synonyms."""
    node = broker.config.node_id
    return {"broker": node, "configs": await configs.describe(broker, configs.BROKER, str(node))}
