#!/usr/bin/env bash
# Runs each libFuzzer target of .build/fuzz/debug/hearth-fuzz for SECONDS, from the committed seeds
# (Fuzz/seeds/TARGET), the inputs that once broke it (Fuzz/regressions/TARGET) and the corpus earlier
# runs grew (.build/fuzz/corpus/TARGET), and prints one
# row per target: executions, corpus size, crashes. Exits 1 if any target crashed; the input that
# did is kept in .build/fuzz/crashes/ (replay: HEARTH_FUZZ_TARGET=T .build/fuzz/debug/hearth-fuzz FILE).
# Usage: Fuzz/run.sh SECONDS TARGET...
set -u
seconds=$1
shift
bin=.build/fuzz/debug/hearth-fuzz
mkdir -p .build/fuzz/crashes
failed=0
summary=".build/fuzz/summary.md"
{
  echo "| target | seconds | executions | corpus | crashes |"
  echo "| --- | --- | --- | --- | --- |"
} > "$summary"
for target in "$@"; do
  corpus=.build/fuzz/corpus/$target
  mkdir -p "$corpus"
  log=.build/fuzz/$target.log
  # Leak checks stay off: the Swift runtime's caches read as leaks to LeakSanitizer.
  HEARTH_FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=0 "$bin" -max_total_time="$seconds" -timeout=20 \
    -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1 -artifact_prefix=".build/fuzz/crashes/$target-" \
    "$corpus" "Fuzz/seeds/$target" $([ -d "Fuzz/regressions/$target" ] && echo "Fuzz/regressions/$target") > "$log" 2>&1
  status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  files=$(find "$corpus" -type f | wc -l)
  crashes=0
  if [ $status -ne 0 ]; then
    crashes=1
    failed=1
    echo "CRASH in $target (exit $status); log: $log" >&2
    grep -m5 -E 'ERROR|Fatal error|SUMMARY|Test unit written' "$log" >&2 || true
  fi
  printf '%-12s %4ss  %10s executions  corpus %5s  crashes %s\n' "$target" "$seconds" "${runs:-?}" "$files" "$crashes"
  echo "| $target | $seconds | ${runs:-?} | $files | $crashes |" >> "$summary"
done
echo "table: $summary"
exit $failed
