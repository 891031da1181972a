#!/usr/bin/env bash
# Create the consumers side environment: the trainers that read our exports (TRL, LLaMA-Factory's data
# code) with a CPU torch, pinned in packaging/consumers-requirements.txt, in their own venv so the
# project's pins stay ours. Usage: scripts/setup-consumers.sh [VENV] (default .venv-consumers beside this
# checkout). About 1.5 GB; tests/trajectory/test_consumers.py uses it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$here/.venv-consumers}
python=${PYTHON:-python3}
LLAMAFACTORY_VERSION=0.9.5
test -x "$venv/bin/python" || "$python" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q -r "$here/packaging/consumers-requirements.txt"
# Only its data code is used (dataset_info.json parser, sharegpt converter); its full requirements pull
# gradio, torchaudio and more, and a torch of their choosing.
"$venv/bin/pip" install -q --no-deps "llamafactory==$LLAMAFACTORY_VERSION"
"$venv/bin/python" -c "import torch; print('consumers:', torch.__version__)"
