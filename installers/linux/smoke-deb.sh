#!/usr/bin/env bash
# Install the .deb with dpkg (as root), smoke-test /usr/bin/numi, report its size, remove it again.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEB=${1:-$(ls -t dist/numi_*.deb | head -1)}
echo "package: $DEB ($(du -h "$DEB" | cut -f1) to download)"
apt-get install -y -qq --no-install-recommends "./$DEB" >/dev/null || dpkg -i "$DEB"
test -L /usr/bin/numi && test -f /usr/share/applications/numi.desktop && test -f /usr/share/icons/hicolor/256x256/apps/numi.png
/usr/bin/numi --version
NUMI_APP=/usr/bin/numi .venv/bin/python -m pytest -q -s tests/desktop/test_package.py
dpkg -r numi >/dev/null
