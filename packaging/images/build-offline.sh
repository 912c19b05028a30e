#!/usr/bin/env bash
# Builds a Sandtray sandbox image without any container registry: debootstrap a
# minimal Debian bookworm with python3, bash, nodejs, gcc and a model's first
# tools (curl, git, jq, unzip) from Debian's mirror,
# then `docker import` it. Used by the tests and by `make image` when the
# recommended Dockerfile cannot pull its base image.
#
# usage: build-offline.sh [image] (default sandtray/sandbox:latest)
set -euo pipefail

image=${1:-sandtray/sandbox:latest}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=python3,python-is-python3,nodejs,gcc,libc6-dev,ca-certificates,procps,curl,git,jq,unzip

if [ "$(id -u)" -ne 0 ]; then
	echo "build-offline.sh: debootstrap needs root; run it with sudo" >&2
	exit 1
fi
if ! command -v debootstrap >/dev/null; then
	apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
fi

root=$(mktemp -d /var/tmp/sandtray-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT

echo "building $image from $mirror (a few minutes)" >&2
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
	{ tail -20 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
mkdir -p "$root/workspace"

tar --numeric-owner -C "$root" -c . | docker import \
	--change 'WORKDIR /workspace' \
	--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
	--change 'CMD ["/bin/bash"]' \
	--message "sandtray offline sandbox image (debian bookworm)" \
	- "$image" >/dev/null
echo "built $image" >&2
