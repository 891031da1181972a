#!/usr/bin/env bash
# Create the reference side environment: OSWorld's `desktop-env` (pinned, --no-deps) plus the light
# libraries listed in packaging/reference-requirements.txt, in its own venv so the project's pins stay
# ours. Usage: scripts/setup-reference.sh [VENV] (default .venv-ref beside this checkout).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$here/.venv-ref}
python=${PYTHON:-python3}
version=$(grep -E '^DESKTOP_ENV_VERSION=' "$here/scripts/reference-version" | cut -d= -f2)
test -x "$venv/bin/python" || "$python" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q --no-deps "desktop-env==$version"
"$venv/bin/pip" install -q -r "$here/packaging/reference-requirements.txt"
echo "reference: desktop-env $version in $venv"
