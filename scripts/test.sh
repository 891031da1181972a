#!/usr/bin/env bash
# `make test`: the whole suite. The Qt window tests run one file per process: a PySide6 process that has
# created and destroyed many windows can crash (a segfault in Qt's event loop) though every file passes
# on its own, so no file shares a process with another. Arguments go to every pytest run.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.venv/bin}
status=0
"$bin/pytest" --ignore=tests/ui "$@" || status=$?
for file in tests/ui/test_*.py; do
  "$bin/pytest" "$file" -m "not qt_many_windows" "$@" || {
    code=$?
    [ "$code" -eq 5 ] && [ $# -gt 0 ] || status=$code
  }
done
exit "$status"
