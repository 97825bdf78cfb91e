#!/usr/bin/env bash
# Sums up one `make test-asan` / `make test-tsan` run (docs/reliability.md, Sanitizers) in lines that
# can be quoted: the tests run and failed, and every sanitizer report — the test runner's and those
# of the hearth servers the tests launched, which write theirs to REPORTS/<tool>.<pid> (log_path)
# because their stderr goes to a log the test deletes.
# Usage: Tests/sanitizer-summary.sh TOOL LOG REPORTS   (TOOL: asan or tsan)
set -u
tool=$1 log=$2 reports=$3

# Swift Testing's last line ("Test run with N tests in M suites passed|failed after S seconds …")
# and XCTest's ("Executed N tests, with F failures").
swift_testing=$(grep -a -E 'Test run with [0-9]+ tests?' "$log" | tail -1 | sed -E 's/^[^A-Za-z]*//')
xctest=$(grep -a -E 'Executed [0-9]+ tests?' "$log" | tail -1 | sed -E 's/^[[:space:]]*//')
# "✘ Test name() failed after …" / "✘ Test name() recorded an issue …" (the mark is multi-byte).
failed=$(grep -a -E '^[^ ]+ Test .* (failed after|recorded an issue)' "$log" | grep -a -v ' Test run with ' | sed -E 's/^[^ ]+ Test (.*) (failed after|recorded an issue).*/\1/' | sort -u)

# Each report file is one process; a file holds every report that process made.
files=$(find "$reports" -maxdepth 1 -type f -name "$tool.*" 2>/dev/null | sort)
count() { cat /dev/null $files "$log" | grep -a -c -E "$1" || true; }
asan_errors=$(count '(^|==)ERROR: AddressSanitizer')
leak_reports=$(count '(^|==)ERROR: LeakSanitizer')
races=$(count '(^|==)WARNING: ThreadSanitizer')
tsan_other=$(count '(^|==)(ERROR|FATAL): ThreadSanitizer')

echo "== sanitizer summary ($tool) =="
echo "swift testing: ${swift_testing:-no summary line (the run did not finish)}"
echo "xctest:        ${xctest:-no summary line}"
if [ -n "$failed" ]; then
  echo "failing tests ($(echo "$failed" | wc -l)):"
  echo "$failed" | sed 's/^/  /'
fi
nfiles=$(echo "$files" | grep -c . || true)
case $tool in
  asan) echo "reports: $asan_errors AddressSanitizer errors, $leak_reports LeakSanitizer reports, in $nfiles process report files ($reports)" ;;
  tsan) echo "reports: $races ThreadSanitizer warnings, $tsan_other ThreadSanitizer errors, in $nfiles process report files ($reports)" ;;
esac
for f in $files; do
  echo "-- $f"
  grep -a -E '^SUMMARY: ' "$f" | sort | uniq -c | sort -rn | sed 's/^/  /'
done
[ $((asan_errors + leak_reports + races + tsan_other)) = 0 ]
