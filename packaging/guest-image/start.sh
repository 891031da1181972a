#!/bin/sh
# The guest image's entry point: a desktop on Xvfb (openbox, a session D-Bus with AT-SPI) and the
# OSW Studio guest server on it. The server prints its ready line to stdout (the container's log), which
# the docker provider waits for. Settings come from the environment:
#   OSW_SCREEN       WIDTHxHEIGHT of the screen (default 1920x1080)
#   OSW_GUEST_HOST   address the guest server binds (default 127.0.0.1)
#   OSW_GUEST_PORT   its port (default 5000; 0 picks a free one and the ready line tells which)
#   OSW_GUEST_TOKEN  the token every request must carry (the server generates one when unset)
#   OSW_GUEST_SOCKET a Unix socket to listen on instead of a port (a container with a network of its
#                    own, reached through a folder mounted from the host)
set -eu
screen="${OSW_SCREEN:-1920x1080}"
runtime="${XDG_RUNTIME_DIR:-/tmp/runtime-$(id -u)}"
mkdir -p "$runtime" "$HOME/Desktop"
chmod 700 "$runtime"
export XDG_RUNTIME_DIR="$runtime"

# -displayfd picks a free display number: with host networking the container shares the host's
# abstract X sockets, so a fixed :0 could clash with a display already running there.
fifo="$runtime/displayfd"
rm -f "$fifo"
mkfifo "$fifo"
# -noreset: without it Xvfb resets when its last client disconnects and drops connections meanwhile.
Xvfb -displayfd 3 -screen 0 "${screen}x24" -nolisten tcp -noreset 3>"$fifo" &
read -r number <"$fifo"
rm -f "$fifo"
export DISPLAY=":$number"

openbox --sm-disable &
eval "$(dbus-launch --sh-syntax)"
export DBUS_SESSION_BUS_ADDRESS
if [ -x /usr/libexec/at-spi-bus-launcher ]; then
    /usr/libexec/at-spi-bus-launcher --launch-immediately &
fi
if [ -n "${OSW_GUEST_SOCKET:-}" ]; then
    set -- --unix-socket "$OSW_GUEST_SOCKET"
else
    set -- --host "${OSW_GUEST_HOST:-127.0.0.1}" --port "${OSW_GUEST_PORT:-5000}"
fi
exec /opt/osw-studio/venv/bin/python -m osw_studio.guest --display "$DISPLAY" "$@"
