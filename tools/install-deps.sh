#!/usr/bin/env bash
# Installs the Debian packages Stave needs to build and run, and only those missing; with
# --tests also what the tests drive (a PostgreSQL server among them). Idempotent; uses sudo
# when not run as root.
set -euo pipefail

packages=(
  # Toolchain.
  g++ cmake ninja-build ccache pkg-config git
  # Libraries (see README.md, "Dependencies", for why each is here).
  libantlr4-runtime-dev antlr4 librocksdb-dev librdkafka-dev libpqxx-dev
  libboost-dev libboost-system-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libsimdjson-dev libssl-dev libre2-dev
  libmpfr-dev libjemalloc-dev libabsl-dev
  # psql, to connect.
  postgresql-client
)
if [ "${1:-}" = "--tests" ]; then
  packages+=(
    # The end-to-end test driver, and a real PostgreSQL server for the sink tests and
    # benchmarks (tests/e2e/postgres_harness.py starts its own, on a free port).
    python3 postgresql
    # The Kafka tests' client (tests/e2e/kafka_harness.py produces and reads with
    # confluent_kafka, over the same librdkafka as Stave), and kcat to look at the
    # tools/kafka-dev cluster by hand. No Kafka broker is packaged: the tests use librdkafka's
    # mock cluster.
    python3-confluent-kafka kcat
    # The drivers of the extended-protocol tests (tests/e2e/extended_protocol_test.py):
    # psycopg 3, pgJDBC and a JDK to run it, and Node.js for node-postgres (its npm package
    # comes from tests/package.json, below). libpqxx is a build dependency already.
    python3-psycopg libpostgresql-jdbc-java
    # A headless browser for the dashboard's test (tests/e2e/dashboard_browser_test.py).
    chromium
    # The openssl command makes the self-signed certificate of the TLS test
    # (tests/e2e/authentication_test.py).
    openssl
    # SQLAlchemy's inspector over psycopg2 (tests/e2e/sqlalchemy_inspect_test.py).
    python3-sqlalchemy python3-psycopg2
    # The Nexmark harness's chart (bench/nexmark/run.py).
    python3-matplotlib
    # The fuzzers (tests/fuzz/run.sh): clang, and libFuzzer's runtime (libclang_rt.fuzzer),
    # which Debian ships in libclang-rt-14-dev, only a recommendation of clang.
    clang libclang-rt-14-dev
    # The format check that tools/run-tests.sh runs first (.clang-format).
    clang-format-14
    # pgcli, whose completion queries tests/e2e/pgcli_completion_test.py runs.
    pgcli
  )
  # A JDK and Node.js may come from elsewhere (another JDK, NodeSource's nodejs, which
  # bundles npm and conflicts with Debian's npm): Debian's only when there is none.
  command -v javac >/dev/null || packages+=(default-jdk-headless)
  command -v npm >/dev/null || packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -ne 0 ]; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    sudo="sudo"
  fi
  echo "Installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "${1:-}" = "--tests" ] && [ ! -d "$(dirname "$0")/../tests/node_modules/pg" ]; then
  # node-postgres at the version tests/package-lock.json pins.
  (cd "$(dirname "$0")/../tests" && npm ci --no-audit --no-fund)
fi
