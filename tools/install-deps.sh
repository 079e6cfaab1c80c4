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
  )
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo="sudo"
fi
echo "Installing: ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
