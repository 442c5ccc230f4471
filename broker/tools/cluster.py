"""`kafkito cluster describe`: the cluster id, the controller, each node's host and port (DescribeCluster)
and the finalized feature levels with the range each supports (ApiVersions), as
kafka-cluster.sh cluster-id, kafka-broker-api-versions.sh and kafka-features.sh describe show them."""

from __future__ import annotations

import argparse

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.output import print_json, table


def run_describe(args: argparse.Namespace) -> int:
    client = admin(args)
    with kafka_errors():
        cluster = client.describe_cluster()
        features = client.describe_features()
    nodes = sorted(cluster["brokers"], key=lambda b: b["broker_id"])
    levels = {
        name: {
            "finalized": f["finalized"][1] if f.get("finalized") else None,
            "supported_min": f["supported"][0],
            "supported_max": f["supported"][1],
        }
        for name, f in sorted(features.items())
    }
    if args.json:
        print_json(
            {
                "cluster_id": cluster["cluster_id"],
                "controller": cluster["controller_id"],
                "nodes": [
                    {"id": b["broker_id"], "host": b["host"], "port": b["port"], "rack": b["rack"]}
                    for b in nodes
                ],
                "features": levels,
            }
        )
        return 0
    print(f"Cluster ID: {cluster['cluster_id']}")
    print(f"Controller: {cluster['controller_id']}")
    print()
    print(
        table(
            ("NODE", "HOST", "PORT", "RACK"),
            [(b["broker_id"], b["host"], b["port"], b["rack"]) for b in nodes],
        )
    )
    print()
    rows = [(name, f["finalized"], f["supported_min"], f["supported_max"]) for name, f in levels.items()]
    print(table(("FEATURE", "FINALIZED", "SUPPORTED-MIN", "SUPPORTED-MAX"), rows))
    return 0
