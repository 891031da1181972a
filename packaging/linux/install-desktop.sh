#!/usr/bin/env bash
# Install (or remove) OSW Studio's desktop integration for the current user, the XDG way:
#   $XDG_DATA_HOME/applications/osw-studio.desktop               (the launcher menus show)
#   $XDG_DATA_HOME/metainfo/io.github.oswstudio.OSWStudio.metainfo.xml  (software centres)
#   $XDG_DATA_HOME/icons/hicolor/<N>x<N>/apps/osw-studio.png and scalable/apps/osw-studio.svg
# XDG_DATA_HOME defaults to ~/.local/share. Nothing outside it is touched; no root needed.
#
# Usage: install-desktop.sh [--exec PROGRAM] [--uninstall]
#   --exec PROGRAM  what the launcher runs (default: `osw-studio` found on PATH, as an absolute path,
#                   so launching works from menus whose PATH lacks a virtualenv or ~/.local/bin)
#   --uninstall     remove exactly the files this script installs
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
program=""
uninstall=0
while [ $# -gt 0 ]; do
  case "$1" in
    --exec) program=${2:?--exec needs a program}; shift 2 ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-desktop: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

desktop="$data/applications/osw-studio.desktop"
metainfo="$data/metainfo/io.github.oswstudio.OSWStudio.metainfo.xml"
icons="$data/icons/hicolor"
sizes=$(cd "$root/resources/icons/app/hicolor" && ls -d ./*x* | sed 's|^\./||')

refresh() {
  # Menus and icon caches pick the change up without a re-login when these tools exist.
  if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database -q "$data/applications" 2>/dev/null || true
  fi
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$icons/index.theme" ]; then
    gtk-update-icon-cache -q -t -f "$icons" 2>/dev/null || true
  fi
}

if [ "$uninstall" -eq 1 ]; then
  rm -f "$desktop" "$metainfo" "$icons/scalable/apps/osw-studio.svg"
  for size in $sizes; do rm -f "$icons/$size/apps/osw-studio.png"; done
  refresh
  echo "install-desktop: removed OSW Studio's launcher, metadata and icons from $data"
  exit 0
fi

if [ -z "$program" ]; then
  program=$(command -v osw-studio || true)
  if [ -z "$program" ]; then
    echo "install-desktop: osw-studio is not on PATH; install it first or pass --exec /path/to/osw-studio" >&2
    exit 1
  fi
fi
case "$program" in
  /*) ;;
  *) program="$(cd "$(dirname "$program")" && pwd)/$(basename "$program")" ;;
esac
if [ ! -x "$program" ]; then
  echo "install-desktop: $program is not an executable file; pass the osw-studio program with --exec" >&2
  exit 1
fi
case "$program" in
  *[[:space:]\"\'\\\`\$]*)
    echo "install-desktop: $program contains spaces or quotes; install it under a plain path" >&2
    exit 1 ;;
esac

mkdir -p "$data/applications" "$data/metainfo" "$icons/scalable/apps"
sed -e "s|^Exec=.*|Exec=$program|" -e "s|^TryExec=.*|TryExec=$program|" \
  "$here/osw-studio.desktop" > "$desktop.tmp"
mv "$desktop.tmp" "$desktop"
install -m 644 "$here/io.github.oswstudio.OSWStudio.metainfo.xml" "$metainfo"
install -m 644 "$root/resources/icons/app/osw-studio.svg" "$icons/scalable/apps/osw-studio.svg"
for size in $sizes; do
  install -D -m 644 "$root/resources/icons/app/hicolor/$size/apps/osw-studio.png" \
    "$icons/$size/apps/osw-studio.png"
done
refresh
echo "install-desktop: OSW Studio is in the applications menu (runs $program); files are under $data"
