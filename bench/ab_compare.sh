#!/usr/bin/env bash
# Compares commands that print BENCH lines by running them alternately, round
# after round, and printing each one's median and range per BENCH figure.
#
# Usage: bench/ab_compare.sh [-n ROUNDS] LABEL='COMMAND' [LABEL='COMMAND' ...]
#   e.g. bench/ab_compare.sh -n 8 old='/tmp/api_scale.old --watchers 0' \
#                                 new='build/bench/api_scale --watchers 0'
#
# Why alternate: on a shared 2-core VM the same binary's figures move by 15-25 %
# within minutes (docs/performance.md), more than most changes do. Runs taken
# back to back, A B A B ..., meet the same spells, so the medians compare; runs
# of A then runs of B do not. Each command's whole output goes to
# ${AB_LOG:-/tmp/ab_compare.log}.
set -euo pipefail

rounds=6
if [[ "${1:-}" == "-n" ]]; then
  rounds="$2"
  shift 2
fi
if [[ $# -lt 1 ]]; then
  echo "usage: $0 [-n ROUNDS] LABEL='COMMAND' [LABEL='COMMAND' ...]" >&2
  exit 2
fi
labels=()
commands=()
for arg in "$@"; do
  if [[ "${arg}" != *=* ]]; then
    echo "$0: '${arg}' is not LABEL='COMMAND'" >&2
    exit 2
  fi
  labels+=("${arg%%=*}")
  commands+=("${arg#*=}")
done

log="${AB_LOG:-/tmp/ab_compare.log}"
: > "${log}"
results="$(mktemp)"
trap 'rm -f "${results}"' EXIT
for ((round = 1; round <= rounds; ++round)); do
  for i in "${!labels[@]}"; do
    echo "=== round ${round} ${labels[$i]}: ${commands[$i]}" >> "${log}"
    if ! output="$(bash -c "${commands[$i]}" 2>&1)"; then
      echo "$0: ${labels[$i]} failed in round ${round}; its output is in ${log}" >&2
      echo "${output}" >> "${log}"
      exit 1
    fi
    echo "${output}" >> "${log}"
    # One line per figure: label name value.
    awk -v label="${labels[$i]}" '$1 == "BENCH" { print label, $2, $3 }' <<< "${output}" >> "${results}"
  done
  echo "round ${round}/${rounds} done" >&2
done

# Per figure, then label: the median (the mean of the middle two for an even
# count), min and max.
sort -k2,2 -k1,1 -k3,3g "${results}" | awk '
  function flush() {
    if (n == 0) return
    median = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    printf "%-36s %-12s median %12.3f   min %12.3f   max %12.3f   (%d runs)\n", key_name, key_label, median, v[1], v[n], n
    n = 0
  }
  { if ($1 != key_label || $2 != key_name) { flush(); key_label = $1; key_name = $2 } v[++n] = $3 }
  END { flush() }'
