#!/usr/bin/env bash
# `make test`: the whole suite, in two lanes that run at the same time (most tests wait on subprocesses,
# so one lane leaves the second core idle):
#   - everything outside tests/ui in one pytest process, printed as it runs;
#   - the Qt window tests, one file per process (a PySide6 process that has created and destroyed many
#     windows can crash, a segfault in Qt's event loop, though every file passes on its own), then every
#     bundled task through F5 in one window (the `qt_many_windows` sweep); printed when the lane ends.
# The Ray test runs alone once both lanes are done: it runs in a PID namespace of its own, where the
# owners of other X servers' lock files do not exist, so its desktops would take their display numbers.
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

alone=tests/batch/test_ray.py::test_the_ray_tests_pass_in_a_private_network_namespace
status=0
"$bin/pytest" --ignore=tests/ui --deselect "$alone" "$@" || status=$?

ui_status=0
wait "$ui_pid" || ui_status=$?
echo "=== the Qt window tests (tests/ui), run beside the others ==="
cat "$ui_log"
[ "$status" -ne 0 ] || status=$ui_status
alone_status=0
"$bin/pytest" "$alone" "$@" || {
  code=$?
  [ "$code" -eq 5 ] && [ $# -gt 0 ] || alone_status=$code
}
[ "$status" -ne 0 ] || status=$alone_status
exit "$status"
