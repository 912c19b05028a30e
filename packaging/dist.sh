#!/bin/sh
# Build the release archives into dist/ (see `make dist`):
#   sandtray-VERSION-linux-amd64.tar.gz   tray app (cgo), shim, icon, .desktop, install.sh
#   sandtray-VERSION-linux-arm64.tar.gz   the same, cross-built with aarch64-linux-gnu-gcc
#   sandtray-VERSION-windows-amd64.zip    tray app (mingw-w64, GUI subsystem, icon), shim
#   sandtray-VERSION-darwin-amd64.tar.gz  engine without the window (no cgo), shim, how to make Sandtray.app
#   sandtray-VERSION-darwin-arm64.tar.gz
# DIST_TARGETS="linux/amd64 windows/amd64" builds only some.
set -eu
cd "$(dirname "$0")/.."

version=$(sed -n 's/^Version *= *"\(.*\)"/\1/p' FyneApp.toml)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain 2>/dev/null)" ] || commit="$commit-dirty"
targets=${DIST_TARGETS:-"linux/amd64 linux/arm64 windows/amd64 darwin/amd64 darwin/arm64"}
ldflags="-s -w -X main.commit=$commit"
winres="github.com/tc-hib/go-winres@v0.3.3" # pinned: writes the Windows icon and manifest resource
out=$(pwd)/dist
mkdir -p "$out"
stage= syso=
trap 'rm -rf "$stage" ${syso:+"$syso"}' EXIT

# build GOOS GOARCH CGO OUTDIR: both binaries of one target into OUTDIR.
build() {
	goos=$1 goarch=$2 cgo=$3 dir=$4 exe=
	[ "$goos" = windows ] && exe=.exe
	flags=$ldflags
	[ "$goos" = windows ] && [ "$cgo" = 1 ] && flags="$flags -H=windowsgui"
	echo "  sandtray$exe ($goos/$goarch, cgo=$cgo)"
	GOOS=$goos GOARCH=$goarch CGO_ENABLED=$cgo go build -ldflags "$flags" -o "$dir/sandtray$exe" ./app/cmd/sandtray
	echo "  sandtray-mcp$exe"
	GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build -ldflags "$ldflags" -o "$dir/sandtray-mcp$exe" ./app/cmd/sandtray-mcp
}

for target in $targets; do
	goos=${target%/*} goarch=${target#*/}
	name="sandtray-$version-$goos-$goarch"
	stage=$(mktemp -d)
	dir="$stage/$name"
	mkdir -p "$dir"
	echo "$name"
	case "$goos" in
	linux)
		cc=gcc
		[ "$goarch" = arm64 ] && [ "$(go env GOHOSTARCH)" != arm64 ] && cc=aarch64-linux-gnu-gcc
		[ "$goarch" = arm64 ] && export PKG_CONFIG_PATH=/usr/lib/aarch64-linux-gnu/pkgconfig
		CC=$cc build linux "$goarch" 1 "$dir"
		unset PKG_CONFIG_PATH
		cp assets/icon.png "$dir/sandtray.png"
		cp packaging/linux/sandtray.desktop packaging/linux/install.sh "$dir/"
		;;
	windows)
		# The .syso next to main.go is linked into sandtray.exe only: the icon
		# Explorer shows and a manifest for the GUI subsystem.
		syso=app/cmd/sandtray/rsrc_windows_$goarch.syso
		go run "$winres" simply --arch "$goarch" --out app/cmd/sandtray/rsrc --manifest gui \
			--icon assets/icon.png --product-name Sandtray --file-description Sandtray \
			--product-version "$version" --file-version "$version" --original-filename sandtray.exe
		CC=x86_64-w64-mingw32-gcc build windows "$goarch" 1 "$dir"
		rm -f "$syso"
		syso=
		sed 's/$/\r/' packaging/windows/README.txt > "$dir/README.txt"
		;;
	darwin)
		build darwin "$goarch" 0 "$dir"
		cp packaging/macos/README.txt "$dir/"
		;;
	esac
	cp LICENSE "$dir/"
	rm -f "$out/$name.tar.gz" "$out/$name.zip"
	if [ "$goos" = windows ]; then
		(cd "$stage" && zip -qr "$out/$name.zip" "$name")
	else
		tar -C "$stage" --owner=0 --group=0 -czf "$out/$name.tar.gz" "$name"
	fi
	rm -rf "$stage"
done
ls -l "$out"
