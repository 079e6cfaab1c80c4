#!/usr/bin/env bash
# Installs what is missing, checks that the C++ sources are formatted (.clang-format), then
# builds and runs every test twice: a Release build, and a build with AddressSanitizer +
# UndefinedBehaviorSanitizer. Unit tests (GoogleTest) and the
# end-to-end tests (the real staved driven by the real psql) run under CTest in both. Then the
# fuzzers run for a bounded time (clang, tests/fuzz/run.sh), and the engine's, storage's and
# the servers' tests run once more under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh --tests

echo "=== format: clang-format-14 --dry-run over the C++ sources"
git ls-files -z '*.cc' '*.h' | xargs -0 clang-format-14 --dry-run --Werror

jobs=$(nproc)
# ccache keys on paths relative to the checkout, so clones in other folders share hits.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

# run_suite NAME [CMAKE_ARGS...]: builds build/NAME and runs its tests. TARGETS and
# TEST_REGEX, when set, narrow what is built and run.
run_suite() {
  local name=$1
  shift
  echo "=== ${name}: configure and build"
  # Tests on explicitly: tools/start-server.sh configures build/release without them.
  cmake -S . -B "build/${name}" -G Ninja -DSTAVE_BUILD_TESTS=ON "$@" >/dev/null
  if [ -n "${TARGETS:-}" ]; then
    # shellcheck disable=SC2086
    cmake --build "build/${name}" -j "${jobs}" --target ${TARGETS}
  else
    cmake --build "build/${name}" -j "${jobs}"
  fi
  echo "=== ${name}: tests"
  ctest --test-dir "build/${name}" --output-on-failure --no-tests=error -j "${jobs}" --timeout 600 \
    ${TEST_REGEX:+--tests-regex "${TEST_REGEX}"}
}

run_suite release -DCMAKE_BUILD_TYPE=Release
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite asan -DCMAKE_BUILD_TYPE=Debug -DSTAVE_SANITIZE=address
# The libFuzzer targets (tests/fuzz/), built with clang, each fuzzed for a bounded time from
# its seed corpus; STAVE_FUZZ_SECONDS=0 skips them.
fuzz_seconds=${STAVE_FUZZ_SECONDS:-20}
if [ "${fuzz_seconds}" != 0 ]; then
  tests/fuzz/run.sh "${fuzz_seconds}"
fi
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tools/tsan.supp" \
  TARGETS="executor_test storage_test server_test" \
  TEST_REGEX="^(Database|Parallelism|Scheduler|Partitioner|OperatorTask|HashAggregate|Datagen|SinkProtocol|Store|StateTable|PgServer|PgConnection|HttpServer)" \
  run_suite tsan -DCMAKE_BUILD_TYPE=Debug -DSTAVE_SANITIZE=thread -DSTAVE_BUILD_BENCH=OFF
