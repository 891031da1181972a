#!/usr/bin/env bash
# Build the OSW Studio guest image locally, with no registry: debootstrap a Debian base holding the
# packages of apt-packages.txt (cached as a tarball keyed by that list), `docker import` it, then
# `docker build` this folder's Dockerfile on it with the osw_studio source.
#
#   packaging/guest-image/build.sh [--desktop studio|osworld] [--cache DIR] [--tag NAME]
#
# Uses the Docker daemon that the docker CLI finds (DOCKER_HOST, else the default socket). Needs root
# (debootstrap) the first time and whenever apt-packages.txt changes. Prints the image tag on the last
# line. Re-running with the same content does nothing: images are tagged NAME:<content hash> (and
# NAME:latest), and one that exists is reused.
#   --desktop D   the applications: studio (the default) or osworld, which adds the packages of
#                 packaging/osworld-packages.txt (LibreOffice, GIMP, VLC, Thunderbird, Chromium; about
#                 1.5 GB, apt-get installed in a container of the base with host networking, then cached
#                 as a second tarball) and arranges HOME as the local sandbox's osworld desktop does
#   --cache DIR   where the base tarball is kept (default: $OSW_IMAGE_CACHE, else ~/.cache/osw-studio/guest-image)
#   --tag NAME    image name (default: osw-studio-guest, or osw-studio-guest-osworld)
# The Debian mirror is the one this machine's apt uses (override with OSW_DEBIAN_MIRROR=URL). The
# guest server's Python wheels are built with this project's .venv (or $PYTHON, else python3: it must be
# the image's Python version, 3.11 for bookworm) and cached next to the base tarball.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
suite=bookworm
name=""
desktop=studio
cache="${OSW_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/osw-studio/guest-image}"
while [ $# -gt 0 ]; do
    case "$1" in
        --desktop) desktop="$2"; shift 2 ;;
        --cache) cache="$2"; shift 2 ;;
        --tag) name="$2"; shift 2 ;;
        -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$desktop" in
    studio) name="${name:-osw-studio-guest}" ;;
    osworld) name="${name:-osw-studio-guest-osworld}" ;;
    *) echo "build.sh: --desktop $desktop: use studio or osworld" >&2; exit 2 ;;
esac
export DOCKER_BUILDKIT=0  # the classic builder: no buildx plugin needed, --network host works

log() { printf '[build.sh %s] %s\n' "$(date +%T)" "$*" >&2; }

command -v docker >/dev/null || { echo "build.sh: the docker CLI is not installed (apt-get install docker.io)" >&2; exit 1; }
docker version --format '{{.Server.Version}}' >/dev/null || {
    echo "build.sh: cannot reach the Docker daemon (${DOCKER_HOST:-default socket}); start it or set DOCKER_HOST" >&2
    exit 1
}

# The mirror this machine's apt already uses: the first URI serving $suite that is not a security one.
mirror() {
    if [ -n "${OSW_DEBIAN_MIRROR:-}" ]; then echo "$OSW_DEBIAN_MIRROR"; return; fi
    local found
    found="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
        /^URIs:/ {uri=$2} /^Suites:/ {for (i = 2; i <= NF; i++) if ($i == "'"$suite"'") print uri}' | grep -v security | head -n1 || true)"
    if [ -z "$found" ]; then
        found="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            awk '$1 == "deb" && $0 ~ / '"$suite"' / {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; break}}' |
            grep -v security | head -n1 || true)"
    fi
    [ -n "$found" ] || { echo "build.sh: no Debian $suite mirror in /etc/apt; set OSW_DEBIAN_MIRROR=URL" >&2; exit 1; }
    echo "$found"
}

packages="$(grep -v '^#' "$here/apt-packages.txt" | grep -v '^$' | sort -u)"
base_key="$(printf '%s minbase\n%s\n' "$suite" "$packages" | sha256sum | cut -c1-16)"
base_image="osw-studio-base:$suite-$base_key"
if docker image inspect "$base_image" >/dev/null 2>&1; then
    log "base image $base_image exists"
else
    tarball="$cache/base-$suite-$base_key.tar"
    if [ ! -s "$tarball" ]; then
        command -v debootstrap >/dev/null || { echo "build.sh: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
        [ "$(id -u)" = 0 ] || { echo "build.sh: debootstrap needs root the first time (no cached $tarball)" >&2; exit 1; }
        mkdir -p "$cache"
        root="$(mktemp -d "$cache/rootfs.XXXXXX")"
        trap 'rm -rf "$root"' EXIT
        log "debootstrap $suite (minbase + $(echo "$packages" | wc -l) packages) into $root"
        debootstrap --variant=minbase --include="$(echo "$packages" | paste -sd,)" \
            "$suite" "$root" "$(mirror)" >"$root.log" 2>&1 || {
            tail -n 20 "$root.log" >&2; echo "build.sh: debootstrap failed (log: $root.log)" >&2; exit 1; }
        rm -f "$root.log"
        rm -rf "$root"/var/cache/apt/archives/*.deb
        tar --numeric-owner -C "$root" -cf "$tarball.partial" .
        mv "$tarball.partial" "$tarball"
        rm -rf "$root"
        trap - EXIT
        log "cached the base rootfs as $tarball ($(du -h "$tarball" | cut -f1))"
    fi
    log "docker import $tarball $base_image"
    docker import "$tarball" "$base_image" >/dev/null
fi

# The OSWorld desktop: its packages on top of the base, installed by apt (which resolves what debootstrap's
# --include cannot: alternatives, virtual packages) in a throwaway container, exported as a tarball keyed
# by the base and the package list, and imported as the base of the image.
if [ "$desktop" = osworld ]; then
    apps="$(grep -v '^#' "$repo/packaging/osworld-packages.txt" | grep -v '^$' | sort -u)"
    sources="deb $(mirror) $suite main
deb $(mirror) $suite-updates main"
    security="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
        /^URIs:/ {uri=$2} /^Suites:/ {for (i = 2; i <= NF; i++) if ($i == "'"$suite"'-security") print uri}' | head -n1 || true)"
    [ -z "$security" ] || sources="$sources
deb $security $suite-security main"
    apps_key="$(printf '%s\n%s\n%s\n' "$base_key" "$apps" "$sources" | sha256sum | cut -c1-16)"
    apps_image="osw-studio-base:$suite-osworld-$apps_key"
    if docker image inspect "$apps_image" >/dev/null 2>&1; then
        log "base image $apps_image exists"
    else
        tarball="$cache/base-$suite-osworld-$apps_key.tar"
        if [ ! -s "$tarball" ]; then
            mkdir -p "$cache"
            box="osw-build-osworld-$$"
            trap 'docker rm -f "$box" >/dev/null 2>&1 || true' EXIT
            log "apt-get install the OSWorld desktop's $(echo "$apps" | wc -l) packages in a container of $base_image"
            docker run --name "$box" --network host -e DEBIAN_FRONTEND=noninteractive \
                -e SOURCES="$sources" -e APPS="$(echo "$apps" | paste -sd' ')" "$base_image" sh -ec '
                    printf "%s\n" "$SOURCES" >/etc/apt/sources.list
                    apt-get update -q
                    apt-get install -y -q --no-install-recommends $APPS
                    apt-get clean
                    rm -rf /var/lib/apt/lists/*' >"$cache/osworld-apt.log" 2>&1 || {
                tail -n 20 "$cache/osworld-apt.log" >&2
                echo "build.sh: installing the OSWorld desktop's packages failed (log: $cache/osworld-apt.log)" >&2
                exit 1; }
            docker export "$box" >"$tarball.partial"
            mv "$tarball.partial" "$tarball"
            docker rm "$box" >/dev/null
            trap - EXIT
            log "cached the OSWorld desktop's rootfs as $tarball ($(du -h "$tarball" | cut -f1))"
        fi
        log "docker import $tarball $apps_image"
        docker import "$tarball" "$apps_image" >/dev/null
    fi
    base_image="$apps_image"
fi

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$here/Dockerfile" "$here/apt-packages.txt" "$here/requirements.txt" "$here/start.sh" "$context/"
# The guest server's wheels, built here (where pip is configured to reach an index) and cached by the
# requirements' hash: the image build itself then needs no network for Python packages.
python="${PYTHON:-$repo/.venv/bin/python}"
# A venv made by uv has no pip: then the system's Python 3 (with python3-pip) builds the wheels.
{ [ -x "$python" ] && "$python" -m pip --version >/dev/null 2>&1; } || python=python3
"$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || {
    echo "build.sh: $python is not Python 3.11 (the image's); set PYTHON to a Python 3.11 with pip" >&2; exit 1; }
wheels_key="$( (cat "$here/requirements.txt"; "$python" -c 'import sys; print(sys.version_info[:2])') | sha256sum | cut -c1-16)"
wheels="$cache/wheels-$wheels_key"
if [ ! -f "$wheels/.complete" ]; then
    log "pip wheel -r requirements.txt into $wheels"
    mkdir -p "$wheels"
    "$python" -m pip wheel -q --disable-pip-version-check -w "$wheels" -r "$here/requirements.txt" >&2
    touch "$wheels/.complete"
fi
mkdir -p "$context/wheels"
cp "$wheels"/*.whl "$context/wheels/"
mkdir -p "$context/src"
(cd "$repo" && find osw_studio -name '*.py' -o -name py.typed | grep -v __pycache__ | sort) >"$context/files"
(cd "$repo" && tar -cf - -T "$context/files") | tar -C "$context/src" -xf -
content="$( (echo "$base_image $desktop"; cd "$context" && find . -type f ! -name files | sort | xargs sha256sum) |
    sha256sum | cut -c1-16)"
rm "$context/files"
image="$name:$content"
if docker image inspect "$image" >/dev/null 2>&1; then
    log "image $image is up to date"
else
    log "docker build $image"
    docker build --force-rm --network host --build-arg "BASE=$base_image" --build-arg "DESKTOP=$desktop" \
        --label "org.osw-studio.content-hash=$content" -t "$image" "$context" >&2
fi
docker tag "$image" "$name:latest"
echo "$image"
