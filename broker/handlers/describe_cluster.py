"""DescribeCluster (60): the live nodes (this one alone, unless it runs a cluster), the cluster id and
the controller.

v1 endpoint type; v2 include_fenced_brokers and each broker's is_fenced (KIP-1073): a live kafkito node
is never fenced, so both answers are the same.

A request for another endpoint type than a broker's (controllers, or an unknown type) is answered as
Kafka's broker answers it: the error with its message and every other field at the schema's default
(endpoint type 1, an empty cluster id, controller -1, no brokers, operations not requested).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.supported_operations import CLUSTER_OPERATIONS
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.services import Cluster

API_KEY = 60
VERSIONS = (0, 2)

_BROKERS_ENDPOINT = 1
_CONTROLLERS_ENDPOINT = 2


class DescribeClusterRequest(Protocol):
    """The fields of kafka-python's DescribeClusterRequest this handler reads."""

    include_cluster_authorized_operations: bool
    endpoint_type: int  # v1+


def _operations(request: DescribeClusterRequest) -> set[int] | None:
    """No authorizer: every cluster operation, when asked for (None: Kafka's "not requested"); with
    one, `authorized_operations.describe_cluster` puts the principal's."""
    if not request.include_cluster_authorized_operations:
        return None
    return {int(op) for op in CLUSTER_OPERATIONS}


def handle(ctx: RequestContext, request: DescribeClusterRequest) -> Any:
    cluster = ctx.cluster
    if ctx.version >= 1 and request.endpoint_type != _BROKERS_ENDPOINT:
        error, message = _endpoint_error(request.endpoint_type)
        return ctx.response(
            throttle_time_ms=0,
            error_code=error,
            error_message=message,
            endpoint_type=_BROKERS_ENDPOINT,
            cluster_id="",
            controller_id=-1,
            brokers=[],
            authorized_operations=None,
        )
    return ctx.response(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        endpoint_type=_BROKERS_ENDPOINT,
        cluster_id=cluster.cluster_id,
        controller_id=cluster.controller_id,
        brokers=[_broker(cluster, node_id, ctx.listener) for node_id in cluster.live_nodes()],
        authorized_operations=_operations(request),
    )


def _broker(cluster: Cluster, node_id: int, listener: str | None) -> dict[str, Any]:
    host, port = cluster.endpoint(node_id, listener)
    return dict(broker_id=node_id, host=host, port=port, rack=None, is_fenced=False)


def _endpoint_error(endpoint_type: int) -> tuple[ErrorCode, str]:
    """As a Kafka broker answers: asking it for controllers is a mismatch, any other type unsupported."""
    if endpoint_type == _CONTROLLERS_ENDPOINT:
        return ErrorCode.MISMATCHED_ENDPOINT_TYPE, "this is a broker endpoint: it does not list controllers"
    return ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, f"unsupported endpoint type {endpoint_type}"
