#!/usr/bin/env bash
# Builds the Sandtray sandbox image: the recommended Dockerfile when its base
# image can be pulled, else the offline Debian builder.
# usage: build.sh [image] (default sandtray/sandbox:latest)
set -euo pipefail
image=${1:-sandtray/sandbox:latest}
here=$(cd "$(dirname "$0")" && pwd)
if docker build -q -t "$image" "$here" >/dev/null 2>/tmp/sandtray-image-build.log; then
	echo "built $image from $here/Dockerfile" >&2
	exit 0
fi
echo "could not build from the Dockerfile (no registry? see /tmp/sandtray-image-build.log); building offline from Debian's mirror" >&2
exec "$here/build-offline.sh" "$image"
