#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, build/fuzz) and fuzzes each for a bounded
# time, starting from its seed corpus in tests/fuzz/corpus/. Exits non-zero on the first
# crash, leak, sanitizer report or timeout, naming the reproducer it wrote.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 30 s, every target)
#
# New inputs libFuzzer finds go to build/fuzz/corpus/<target>/, not into the repository; a
# reproducer worth keeping is copied into tests/fuzz/corpus/<target>/ with the fix.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-30}
[ $# -gt 0 ] && shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(pgwire_fuzzer sql_fuzzer json_decoder_fuzzer checkpoint_fuzzer)
fi

# ccache keys on paths relative to the checkout, so clones in other folders share hits.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
echo "=== fuzz: configure and build"
CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTAVE_FUZZ=ON \
  -DSTAVE_BUILD_TESTS=OFF -DSTAVE_BUILD_BENCH=OFF >/dev/null
cmake --build build/fuzz -j "$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p build/fuzz/artifacts
for target in "${targets[@]}"; do
  echo "=== fuzz: ${target} for ${seconds} s"
  work=build/fuzz/corpus/${target}
  mkdir -p "${work}"
  dictionary=()
  if [ -f "tests/fuzz/${target%_fuzzer}.dict" ]; then
    dictionary=(-dict="tests/fuzz/${target%_fuzzer}.dict")
  fi
  # -timeout: an input that takes 10 s is a finding (a hang); -rss_limit_mb: so is one that
  # makes the process grow past 2 GB.
  if ! "build/fuzz/tests/fuzz/${target}" -max_total_time="${seconds}" -timeout=10 \
    -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 "${dictionary[@]}" \
    -artifact_prefix="build/fuzz/artifacts/${target}-" "${work}" "tests/fuzz/corpus/${target}"; then
    echo "=== fuzz: ${target} found a failure; reproducer: build/fuzz/artifacts/${target}-*" >&2
    echo "    replay it with build/fuzz/tests/fuzz/${target} <file>" >&2
    exit 1
  fi
done
echo "=== fuzz: no failures"
