#!/usr/bin/env bash
# Create the side environment that runs OSWorld's own guest server (kept unmodified in
# ../shared/osworld/server/, see its SOURCE.md) beside ours: the system Python (it has pyatspi) with
# --system-site-packages, plus packaging/osworld-server-requirements.txt.
# Usage: scripts/setup-osworld-server.sh [VENV] (default .venv-osworld-server beside this checkout).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$here/.venv-osworld-server}
python=${OSWORLD_SERVER_PYTHON:-/usr/bin/python3}
test -x "$venv/bin/python" || "$python" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q -r "$here/packaging/osworld-server-requirements.txt"
echo "osworld server environment: $venv"
