#!/usr/bin/env bash
# Install the Debian/Ubuntu packages listed in packaging/apt-packages.txt (or the lists given as
# arguments, e.g. packaging/osworld-packages.txt) that are missing.
# As root (or with sudo) it installs them; otherwise it prints the exact command to run.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=("$here/packaging/apt-packages.txt")
mapfile -t wanted < <(cat "${lists[@]}" | grep -vE '^\s*(#|$)' | sed 's/\s*#.*//')
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: not a Debian/Ubuntu system; install the equivalents of: ${wanted[*]}" >&2
  exit 0
fi
missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo"
else
  echo "setup: these system packages are missing; install them with:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Installing docker.io must not start the system Docker daemon: its default bridge and iptables
# networking is not wanted here (the tests start their own engine with networking off). Deny service
# starts for the duration of the install unless the machine already has a policy of its own.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# written by OSW Studio setup for the duration of an install\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  trap '$sudo rm -f "$policy"' EXIT
fi
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
