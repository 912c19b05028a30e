#!/bin/sh
# Install Sandtray from this folder: the tray app, the MCP shim, the icon and
# a menu entry. By default into ~/.local (no root needed); as root, or with
# --system, into /usr/local; or anywhere with --prefix DIR.
#
#   ./install.sh              install for this user
#   ./install.sh --system     install for every user (run as root)
#   ./install.sh --uninstall  remove what install.sh installed (same prefix options)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
prefix="$HOME/.local"
[ "$(id -u)" = 0 ] && prefix=/usr/local
action=install
while [ $# -gt 0 ]; do
	case "$1" in
	--system) prefix=/usr/local ;;
	--prefix) prefix=${2:?--prefix needs a folder}; shift ;;
	--uninstall) action=uninstall ;;
	-h|--help) sed -n '2,9p' "$0"; exit 0 ;;
	*) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

case "$prefix" in
*'
'*) echo "install.sh: the prefix has a line break; choose another folder" >&2; exit 2 ;;
esac
bin="$prefix/bin"
apps="$prefix/share/applications"
icons="$prefix/share/icons/hicolor/256x256/apps"

refresh_menus() {
	command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$apps" 2>/dev/null || true
	command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor" 2>/dev/null || true
}

if [ "$action" = uninstall ]; then
	rm -f "$bin/sandtray" "$bin/sandtray-mcp" "$apps/sandtray.desktop" "$icons/sandtray.png"
	refresh_menus
	echo "Removed Sandtray from $prefix."
	echo "Your settings, sandboxes' state and assistants' configs are untouched;"
	echo "disconnect assistants first (Connect assistants… in the app) if you want their entries gone."
	exit 0
fi

mkdir -p "$bin" "$apps" "$icons"
# Copy to a temporary name and rename, so a running Sandtray keeps its binary.
for f in sandtray sandtray-mcp; do
	cp "$here/$f" "$bin/.$f.new"
	chmod 755 "$bin/.$f.new"
	mv -f "$bin/.$f.new" "$bin/$f"
done
cp "$here/sandtray.png" "$icons/sandtray.png"
# The menu entry names the binary by its absolute path: ~/.local/bin is not
# in every desktop session's PATH. The path is quoted as the Desktop Entry
# spec asks (\ " ` $ escaped inside the quotes, then every \ doubled for the
# string value, and % doubled), and the shell writes the line: in a sed
# replacement, a prefix's & | or \ would be read as sed's own.
exec_path=$(printf '%s\n' "$bin/sandtray" | sed -e 's/[\\"`$]/\\&/g' -e 's/\\/\\\\/g' -e 's/%/%%/g')
while IFS= read -r line || [ -n "$line" ]; do
	case "$line" in
	Exec=*) printf 'Exec="%s"\n' "$exec_path" ;;
	*) printf '%s\n' "$line" ;;
	esac
done <"$here/sandtray.desktop" >"$apps/sandtray.desktop"
chmod 644 "$apps/sandtray.desktop" "$icons/sandtray.png"
refresh_menus

echo "Installed Sandtray $("$bin/sandtray" version 2>/dev/null | cut -d' ' -f2) into $prefix."
if ! command -v docker >/dev/null 2>&1 && [ ! -S /var/run/docker.sock ]; then
	echo "Note: Docker was not found. Sandtray runs sandboxes with Docker (or Podman): install it first."
fi
case ":$PATH:" in
*":$bin:"*) ;;
*) echo "Note: $bin is not in your PATH; the menu entry works anyway." ;;
esac
echo "Start Sandtray from your applications menu (or run $bin/sandtray), then choose"
echo "\"Connect assistants…\" in its tray menu to connect Claude, Cursor or VS Code."
