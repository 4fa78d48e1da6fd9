#!/usr/bin/env bash
# Install the system packages that memgit's server tests need (tests/servers.py):
# nginx + fcgiwrap (smart HTTP), gitolite3, git (git daemon, http-backend) and
# openssh-client (ssh-keygen for gitolite's admin key); chromium and chromium-driver
# (memgit serve's dashboard opened in a real headless browser, tests/serve/test_browser.py)
# with a font to draw its text.
#
# Idempotent: does nothing when everything is installed.  Uses sudo only when not
# root.  The tests run their own nginx/fcgiwrap on 127.0.0.1 with configs in temp
# dirs, so the system services must not run: a temporary policy-rc.d keeps the
# packages' postinst from starting them, and any that run anyway are stopped.
set -euo pipefail

PACKAGES=(nginx fcgiwrap gitolite3 git openssh-client chromium chromium-driver fonts-dejavu-core)

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    SUDO=()
fi

installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
    installed "$pkg" || missing+=("$pkg")
done

stop_system_services() {
    # no systemd in containers: stop through the init scripts / pid files
    local svc
    for svc in nginx fcgiwrap; do
        if [ -x "/etc/init.d/$svc" ]; then
            "${SUDO[@]}" "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
        fi
    done
    if [ -s /run/nginx.pid ] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then
        "${SUDO[@]}" nginx -s quit >/dev/null 2>&1 \
            || "${SUDO[@]}" kill "$(cat /run/nginx.pid)" 2>/dev/null || true
    fi
}

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-system-deps: already installed: ${PACKAGES[*]}"
    exit 0
fi

echo "install-system-deps: installing ${missing[*]}"
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
    # exit 101 = "action forbidden": postinst scripts do not start services
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
    "${SUDO[@]}" chmod 755 "$policy"
    made_policy=1
fi
cleanup() {
    if [ "$made_policy" -eq 1 ]; then
        "${SUDO[@]}" rm -f "$policy"
    fi
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"

stop_system_services

for exe in nginx fcgiwrap gitolite git ssh-keygen chromium chromedriver; do
    PATH="$PATH:/usr/sbin:/sbin" command -v "$exe" >/dev/null \
        || { echo "install-system-deps: $exe still missing" >&2; exit 1; }
done
echo "install-system-deps: done"
