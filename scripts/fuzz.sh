#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for SECONDS_PER_TARGET seconds (default 60), two at a
# time (the machine has 2 cores; FUZZ_JOBS to change), with ASan+UBSan.
#
#   ./scripts/fuzz.sh [SECONDS_PER_TARGET]
#   FUZZ_TARGETS="json_request forward" ./scripts/fuzz.sh 600     # a subset
#
# Installs what is missing (install_deps.sh --fuzz: clang, compiler-rt), builds build/fuzz
# (clang++, -DMHA_FUZZ=ON), copies each committed seed corpus (tests/fuzz/corpus/fuzz_<name>)
# into a scratch corpus build/fuzz/corpus/<name> (kept between runs; the repository's corpus
# stays small), fuzzes, and prints per target: executions, exec/s, coverage (cov = edges,
# ft = features), corpus growth, findings. Crashing inputs are written to
# build/fuzz/findings/<name>/ and the script exits non-zero if any target found one.
# Replay one finding: build/fuzz/tests/fuzz/fuzz_<name> build/fuzz/findings/<name>/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "usage: $0 [SECONDS_PER_TARGET]" >&2; exit 2; }
# Every target of tests/fuzz (fuzz_<name>.cpp) unless FUZZ_TARGETS names some.
all_targets=$(cd tests/fuzz && for f in fuzz_*.cpp; do n=${f#fuzz_}; echo "${n%.cpp}"; done)
targets=(${FUZZ_TARGETS:-$all_targets})
jobs="${FUZZ_JOBS:-2}"

./scripts/install_deps.sh --fuzz
cmake -S . -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMHA_FUZZ=ON -DMHA_BUILD_TESTS=OFF -DMHA_WARNINGS_AS_ERRORS=OFF >/dev/null
cmake --build build/fuzz -j "$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}")

run_one() {
  local name="$1" bin="build/fuzz/tests/fuzz/fuzz_$1" corpus="build/fuzz/corpus/$1"
  local findings="build/fuzz/findings/$1" log="build/fuzz/logs/$1.log"
  mkdir -p "$corpus" "$findings" build/fuzz/logs
  touch "build/fuzz/logs/$name.start"  # findings newer than this belong to this run
  cp -n tests/fuzz/corpus/fuzz_"$name"/* "$corpus"/ 2>/dev/null || true
  local dict=()
  [[ -f tests/fuzz/$name.dict ]] && dict=(-dict="tests/fuzz/$name.dict")
  # -max_len: room for inputs a little larger than the biggest seed (at least 8192 bytes; the
  # English model seeds are whole model files). -rss_limit_mb: ASan's shadow memory counts; an
  # input that needs more is reported as a finding (out-of-memory).
  local biggest max_len=8192
  biggest=$(find tests/fuzz/corpus/fuzz_"$name" -type f -printf '%s\n' | sort -n | tail -1)
  ((${biggest:-0} + 1024 > max_len)) && max_len=$((biggest + 1024))
  "$bin" "${dict[@]}" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" >"$log" 2>&1
}

status=0
pids=()
names=()
for name in "${targets[@]}"; do
  echo "== fuzz_$name: ${seconds}s (log build/fuzz/logs/$name.log)"
  run_one "$name" &
  pids+=($!)
  names+=("$name")
  if ((${#pids[@]} >= jobs)); then
    wait "${pids[0]}" || true
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || true; done

printf '\n%-18s %12s %8s %8s %8s %8s %s\n' target executions exec/s cov ft corpus findings
for name in "${names[@]}"; do
  log="build/fuzz/logs/$name.log"
  runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  eps=$(grep -oE '^stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)  # none when it died loading the corpus
  cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")
  ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")
  corp=$(grep -oE 'corp: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")
  found=$(find "build/fuzz/findings/$name" -type f -newer "build/fuzz/logs/$name.start" | wc -l)
  if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |FUZZ FINDING|deadly signal' "$log"; then
    found=$((found > 0 ? found : 1))
  fi
  printf '%-18s %12s %8s %8s %8s %8s %s\n' "fuzz_$name" "$runs" "$eps" "$cov" "$ft" "$corp" "$found"
  if ((found > 0)); then
    status=1
    echo "   finding(s) in build/fuzz/findings/$name/; log: $log"
    grep -m 3 -E 'FUZZ FINDING|^SUMMARY: |ERROR: ' "$log" | sed 's/^/   /' || true
  fi
done
if ((status)); then echo "fuzz.sh: FINDINGS (see above)"; else echo "fuzz.sh: no findings"; fi
exit "$status"
