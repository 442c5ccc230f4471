# kafkito: the two commands are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 9092
DATA   ?= ./data
HTTP_PORT ?= 8080
PYTEST_ARGS ?=

.PHONY: install install-dev install-clients install-spark kafka-reference run test test-fast lint bench compat docs-images conformance pipeline clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Editable installs are not byte-compiled by pip; compile once so every start reads cached bytecode
# (even where PYTHONDONTWRITEBYTECODE is set): ~40 ms of `kafkito serve` start-up.
COMPILE = $(BIN)/python -m compileall -q kafkito/*.py protocol purgatory broker

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .
	@$(COMPILE)
	@touch $(STAMP)

install-dev: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,spark]'
	@$(COMPILE)
	@touch $(STAMP)

# PySpark (pinned to a release whose spark-sql-kafka-0-10 is on Maven Central) and, once, Spark's own
# Kafka connector for it, resolved by Spark's Ivy into ~/.ivy2 (kafkito_spark/packages.py).
install-spark: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[spark]'
	@$(BIN)/python -m kafkito_spark.packages 2>$(VENV)/spark-packages.log \
	  || { tail -20 $(VENV)/spark-packages.log >&2; exit 1; }

# Test clients that do not come from PyPI: kcat from Debian, KafkaJS from npm, the Go clients
# (IBM/sarama, segmentio/kafka-go, franz-go) from the Go module proxy as tests/go_clients/go.mod and
# go.sum pin them, built with the machine's Go 1.26+ (/usr/local/go/bin/go before any `go` on PATH;
# Debian's golang-go is too old): the modules are downloaded once into ~/go/pkg/mod and the programs
# built into tests/go_clients/bin, a quick `go build` from Go's cache on a second run; tmux (Debian)
# drives the terminal-session test of docs/cli.md; chromium and chromium-driver (Debian) load the web
# console's pages in tests/console (Selenium, from the dev extras).
install-clients:
	@command -v kcat >/dev/null 2>&1 && command -v tmux >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1 \
	  && command -v chromedriver >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq kcat tmux \
	    chromium chromium-driver >/dev/null; }
	@$(PYTHON) -m tests.go_clients.programs >/dev/null
	@if [ -f tests/compat/node/package-lock.json ]; then \
	  cd tests/compat/node && npm ci --silent --no-audit --no-fund >/dev/null; fi
	@$(MAKE) --no-print-directory kafka-reference
	@if [ -f $(JAVA_DRIVER) ] && [ -z "$$(find $(KAFKA_REFERENCE)/src $(KAFKA_REFERENCE)/pom.xml -newer $(JAVA_DRIVER))" ]; \
	  then :; else cd $(KAFKA_REFERENCE) && { mvn -q -o -B package >/dev/null 2>&1 || mvn -q -B package; } \
	  || { echo "building the Java client driver (tests/kafka_reference/src) failed" >&2; exit 1; }; fi

# The reference Apache Kafka 4.4 (broker, clients, Streams, tools; tests/kafka_reference/pom.xml) in
# ~/.m2, and its classpath for tests/support/kafka_reference.py. Maven runs only when the pom is newer
# than the classpath file or a jar it names is gone: otherwise this is a few file checks.
KAFKA_REFERENCE := tests/kafka_reference
KAFKA_CLASSPATH := $(KAFKA_REFERENCE)/target/classpath.txt
# The Java client driver of the tests (src/main/java, run by tests/compat/jvm.py), packaged by
# install-clients when a source or the pom is newer than its jar: offline once Maven has its plugins.
JAVA_DRIVER := $(KAFKA_REFERENCE)/target/kafka-reference-1.jar
kafka-reference:
	@if [ -f $(KAFKA_CLASSPATH) ] && [ $(KAFKA_CLASSPATH) -nt $(KAFKA_REFERENCE)/pom.xml ] \
	  && tr ':' '\n' < $(KAFKA_CLASSPATH) | xargs ls >/dev/null 2>&1; then :; else \
	  cd $(KAFKA_REFERENCE) && mvn -q -B dependency:build-classpath -Dmdep.outputFile=target/classpath.txt \
	    || { echo "resolving Apache Kafka 4.4 with Maven failed" >&2; exit 1; }; fi

# `make run` installs only when pyproject.toml is newer than the stamp (code edits need no reinstall:
# the install is editable), then serves with no initial rebalance delay (local development) and a
# banner saying where it listens and how to try it.
STAMP := $(VENV)/.kafkito-installed
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	@$(COMPILE)
	@touch $@

run: $(STAMP)
	@$(BIN)/kafkito serve --host $(HOST) --port $(PORT) --data-dir $(DATA) \
	  --set group.initial.rebalance.delay.ms=0 --http 127.0.0.1:$(HTTP_PORT) --banner

# Two runs: the tests that only wait on sockets in FAST_WORKERS processes (as test-fast), then the
# client matrix, Spark and the long crash, JVM and real-client tests one at a time (they load the two
# cores themselves). Together they are the whole suite: every test is in exactly one of the two.
test: install-dev install-clients
	$(BIN)/python -m pytest -m "not compat and not spark and not slow" -n $(FAST_WORKERS) $(PYTEST_ARGS)
	$(BIN)/python -m pytest -m "compat or spark or slow" $(PYTEST_ARGS)

# The edit-test loop: everything but the client matrix, Spark and the long crash/real-client group
# tests (markers applied by location in tests/conftest.py), in FAST_WORKERS processes (pytest-xdist:
# the tests mostly wait on sockets, so more workers than cores pays). Needs no kcat, node or JVM.
FAST_WORKERS ?= 3
test-fast: install-dev
	$(BIN)/python -m pytest -m "not compat and not spark and not slow" -n $(FAST_WORKERS) $(PYTEST_ARGS)

# Only this target rewrites COMPATIBILITY.md (after a full run); `make test` writes its matrix under
# pytest's temporary directory (tests/support/artifacts.py). The framework tests run with the client
# scenarios: their outcomes are the frameworks table (tests/compat/matrix.py, FRAMEWORKS).
FRAMEWORK_TESTS := tests/connect tests/spark/test_connector.py tests/spark/test_source.py \
  tests/spark/test_exactly_once.py $(wildcard tests/streams_groups/test_kafka_streams.py)
compat: install-dev install-clients install-spark
	KAFKITO_COMPAT_MATRIX=$(CURDIR)/COMPATIBILITY.md $(BIN)/python -m pytest tests/compat $(FRAMEWORK_TESTS) $(PYTEST_ARGS)

# The web console's screenshots in docs/images, taken by tests/console/test_browser.py in headless
# chromium; any other run of those tests saves them under pytest's temporary directory.
docs-images: install-dev install-clients
	KAFKITO_DOCS_IMAGES=$(CURDIR)/docs/images $(BIN)/python -m pytest tests/console/test_browser.py tests/console/test_browser_admin.py $(PYTEST_ARGS)

# Kafka 4.4 and kafkito answer the same requests (tests/conformance); CONFORMANCE.md is rewritten
# with every difference, whether the run passes or not. `make test` runs the suite without the report.
conformance: install-dev kafka-reference
	KAFKITO_CONFORMANCE_REPORT=$(CURDIR)/CONFORMANCE.md $(BIN)/python -m pytest tests/conformance -p no:cacheprovider $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check kafkito/*.py protocol purgatory broker tests bench kafkito_spark pipelines
	$(BIN)/mypy kafkito kafkito_spark pipelines

bench: install-dev
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/purgatory.py
	$(BIN)/python bench/coordinator.py
	$(BIN)/python bench/datapath.py
	$(BIN)/python bench/datapath.py --large-fetch
	$(BIN)/python bench/clients.py
	$(BIN)/python bench/latency.py --records 500 --warmup 50 --runs 1  # a Tansu record takes ~250 ms
	$(BIN)/python bench/offsets.py

# The clicks pipeline (generator -> Spark windowed counts -> results topic -> check) on `make run`'s broker,
# through Spark's own Kafka connector; `make pipeline CONNECTOR=kafkito` runs it on kafkito_spark.
CONNECTOR ?= kafka
pipeline: install-spark
	$(BIN)/python -m pipelines.clicks --bootstrap $(HOST):$(PORT) --connector $(CONNECTOR)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
