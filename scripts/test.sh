#!/usr/bin/env bash
# `make test`: the whole suite, in two lanes that run at the same time (most tests wait on subprocesses,
# so one lane leaves the second core idle):
#   - everything outside tests/ui in one pytest process, printed as it runs;
#   - the Qt window tests, one file per process (a PySide6 process that has created and destroyed many
#     windows can crash, a segfault in Qt's event loop, though every file passes on its own), then every
#     bundled task through F5 in one window (the `qt_many_windows` sweep); printed when the lane ends.
# A few tests run alone once both lanes are done: the Ray test runs in a PID namespace of its own, where
# the owners of other X servers' lock files do not exist, so its desktops would take their display
# numbers; the bundle's PyInstaller build and the kill -9 test's timed kills are slowed past their limits
# by a second lane (the bundle's build then took over its 300 s; most kills landed before any step).
# Arguments go to every pytest run. The exit status is the first failing run's.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.venv/bin}

ui_lane() {
  local status=0 code
  for file in tests/ui/test_*.py; do
    "$bin/pytest" "$file" -m "not qt_many_windows" "$@" || {
      code=$?
      # a file with no test left after the caller's own selection is no failure; without one it is
      [ "$code" -eq 5 ] && [ $# -gt 0 ] || status=$code
    }
  done
  "$bin/pytest" tests/ui -m qt_many_windows "$@" || {
    code=$?
    [ "$code" -eq 5 ] && [ $# -gt 0 ] || status=$code
  }
  return "$status"
}

ui_log=$(mktemp "${TMPDIR:-/tmp}/osw-studio-ui-tests.XXXXXX")
trap 'rm -f "$ui_log"' EXIT
ui_lane "$@" >"$ui_log" 2>&1 &
ui_pid=$!

alone=(
  tests/batch/test_ray.py::test_the_ray_tests_pass_in_a_private_network_namespace
  tests/packaging/test_bundle.py
  tests/reliability/test_crash_safety.py::test_kill_9_at_random_points_then_every_store_reads_back_and_the_batch_resumes
)
deselect=()
for test in "${alone[@]}"; do deselect+=(--deselect "$test"); done
status=0
"$bin/pytest" --ignore=tests/ui "${deselect[@]}" "$@" || status=$?

ui_status=0
wait "$ui_pid" || ui_status=$?
echo "=== the Qt window tests (tests/ui), run beside the others ==="
cat "$ui_log"
[ "$status" -ne 0 ] || status=$ui_status
alone_status=0
"$bin/pytest" "${alone[@]}" "$@" || {
  code=$?
  [ "$code" -eq 5 ] && [ $# -gt 0 ] || alone_status=$code
}
[ "$status" -ne 0 ] || status=$alone_status
exit "$status"
