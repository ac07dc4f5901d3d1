#!/usr/bin/env bash
# Build dist/numi_<version>_<arch>.deb from the PyInstaller one-folder app in build/out/numi.
# Layout: the app under /opt/numi, /usr/bin/numi -> /opt/numi/numi, a desktop entry and icons.
# WebKitGTK, GTK and the appindicator are the distribution's (Depends), as the window needs them.
# bubblewrap (Recommends) confines the shell tool; without it every shell command asks first.
# espeak-ng (Recommends) is the offline voice that reads replies aloud; without it, a provider's voice.
set -euo pipefail
cd "$(dirname "$0")/../.."
APP=build/out/numi
[ -x "$APP/numi" ] || { echo "build/out/numi is missing: run 'make package' (PyInstaller) first" >&2; exit 1; }
VERSION=$(python3 -c 'import re;print(re.search(r"__version__ = \"(.+)\"", open("backend/__init__.py").read())[1])')
ARCH=$(dpkg --print-architecture)
ROOTFS=$(mktemp -d)
trap 'rm -rf "$ROOTFS"' EXIT
mkdir -p "$ROOTFS/DEBIAN" "$ROOTFS/opt" "$ROOTFS/usr/bin" "$ROOTFS/usr/share/applications"
cp -a "$APP" "$ROOTFS/opt/numi"
ln -s /opt/numi/numi "$ROOTFS/usr/bin/numi"
install -m 0644 installers/linux/numi.desktop "$ROOTFS/usr/share/applications/numi.desktop"
for size in 16 32 48 64 128 256 512; do
  dir="$ROOTFS/usr/share/icons/hicolor/${size}x${size}/apps"
  mkdir -p "$dir"
  install -m 0644 "desktop/assets/numi-$size.png" "$dir/numi.png"
done
SIZE_KB=$(du -sk "$ROOTFS" | cut -f1)
cat > "$ROOTFS/DEBIAN/control" <<CONTROL
Package: numi
Version: $VERSION
Section: net
Priority: optional
Architecture: $ARCH
Installed-Size: $SIZE_KB
Depends: libwebkit2gtk-4.1-0, gir1.2-webkit2-4.1, gir1.2-gtk-3.0, gir1.2-ayatanaappindicator3-0.1
Recommends: gnome-keyring, bubblewrap, espeak-ng
Maintainer: Numi <numi@localhost>
Description: desktop chat app for large language models
 Numi talks to OpenAI, Anthropic and OpenAI-compatible servers (Ollama, LM Studio,
 llama.cpp, vLLM, OpenRouter). History stays on this computer; replies keep
 streaming when the window is closed.
CONTROL
mkdir -p dist
OUT="dist/numi_${VERSION}_${ARCH}.deb"
dpkg-deb -Zxz --build --root-owner-group "$ROOTFS" "$OUT" >/dev/null
echo "$OUT"
