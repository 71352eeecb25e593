#!/usr/bin/env bash
# Runs every benchmark program built under <build-dir>/bench, then prints all the
# `BENCH <name> <value> <unit>` lines they printed, together, as the last lines.
#
# Usage: bench/run_all.sh [build-dir]     (default: build; `make bench` calls it)
#
# Programs named *_bench are Google Benchmark programs: they run with a short
# --benchmark_min_time so that the whole run stays within a few minutes on
# 2 cores. Every other executable is run without arguments and is expected to
# end with its BENCH lines (DESIGN.md section 11).
# Exits non-zero when a program fails or none is found.
set -euo pipefail

build_dir="${1:-build}"
bench_dir="${build_dir}/bench"
min_time="${BENCH_MIN_TIME:-0.5}"  # seconds per benchmark; libbenchmark 1.7 takes a plain number

if [[ ! -d "${bench_dir}" ]]; then
  echo "run_all.sh: ${bench_dir} does not exist; configure and build first:" >&2
  echo "  cmake -S . -B ${build_dir} -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build ${build_dir}" >&2
  exit 1
fi

programs=()
while IFS= read -r -d '' p; do programs+=("$p"); done \
  < <(find "${bench_dir}" -maxdepth 1 -type f -perm -u+x -print0 | sort -z)
if [[ ${#programs[@]} -eq 0 ]]; then
  echo "run_all.sh: no benchmark programs in ${bench_dir}; build them first: cmake --build ${build_dir}" >&2
  exit 1
fi

log="$(mktemp)"
trap 'rm -f "${log}"' EXIT
failed=0
for p in "${programs[@]}"; do
  name="$(basename "$p")"
  args=()
  [[ "${name}" == *_bench ]] && args=("--benchmark_min_time=${min_time}")
  echo "=== ${name} ${args[*]}"
  start=$(date +%s)
  if ! "$p" "${args[@]}" 2>&1 | tee -a "${log}"; then
    echo "run_all.sh: ${name} failed" >&2
    failed=1
  fi
  echo "=== ${name}: $(( $(date +%s) - start )) s"
  echo
done

echo "=== BENCH summary ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //'), $(nproc) cores)"
grep '^BENCH ' "${log}" || echo "(no BENCH lines)"
exit "${failed}"
