#!/usr/bin/env bash
# Installs what is missing, builds Stave (Release) and starts staved with its embedded
# defaults: state in ./stave-data, PostgreSQL protocol on 127.0.0.1:4566, HTTP admin on
# 127.0.0.1:4567. Extra arguments go to staved (e.g. --pg-port 5433).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAVE_BUILD_TESTS=OFF >/dev/null
cmake --build build/release --target staved stave-kafka-dev
echo
echo "Starting staved; it prints the psql command to connect with once it is ready."
echo "Stop it with Ctrl-C (a clean stop: the last changes are checkpointed)."
exec build/release/server/staved --data-dir stave-data "$@"
