"""Spark's own Kafka connector (`format("kafka")`, `spark-sql-kafka-0-10`) for the installed PySpark:
its Maven coordinate, and one Ivy resolution into ~/.ivy2 (`make install-spark`,
`python -m kafkito_spark.packages`) so that later sessions start offline.

The connector is published per Spark release; the project pins a PySpark whose connector is on
Maven Central (4.2.0: no 4.2.1 or 4.3.x connector was published as of 2026-12)."""

from __future__ import annotations

import os
import sys

SCALA = "2.13"


def kafka_package(spark_version: str | None = None) -> str:
    """`org.apache.spark:spark-sql-kafka-0-10_2.13:<version>`, for `spark.jars.packages`."""
    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    return f"org.apache.spark:spark-sql-kafka-0-10_{SCALA}:{spark_version}"


def main() -> int:
    """Resolve the connector once (Spark's Ivy against Maven Central) by starting a local session."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    package = kafka_package()
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("kafkito-spark-packages")
        .config("spark.jars.packages", package)
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        try:  # the provider answers a load without a topic option; without the jar, no provider answers
            spark.read.format("kafka").load()
        except Exception as exc:  # Spark's error classes differ by where they rise
            if "DATA_SOURCE_NOT_FOUND" in str(exc) or "Failed to find data source" in str(exc):
                raise RuntimeError(f"{package} did not load: {exc}") from exc
    finally:
        spark.stop()
    print(f"{package}: resolved into Spark's Ivy cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
