#!/usr/bin/env bash
# Build web/vendor/codemirror/codemirror.js: CodeMirror 6 bundled into one ES module for the
# documents panel (web/app/views/doc-editor.js loads it with import() when the panel opens).
#
# The inputs are in build/codemirror/: entry.js (what the module exports), package.json (each
# package at an exact version) and package-lock.json (every package under them, with the
# registry's integrity hash). `npm ci` installs exactly that lock into a temp dir (no scripts
# run), the pinned esbuild of build/web_bundle.py (fetched once into .venv/tools/, hash-checked)
# bundles and minifies it, and the licence texts are gathered beside it. Then record the sha256
# this prints in VERSIONS.md (tests/test_vendor_versions.py holds the file to it).
#
# To move to newer versions: change package.json, run `npm install --package-lock-only
# --ignore-scripts` in build/codemirror/, run this script, update VERSIONS.md.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
inputs="$root/build/codemirror"
out="$here/codemirror"
python="${PYTHON:-$root/.venv/bin/python}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cp "$inputs/package.json" "$inputs/package-lock.json" "$inputs/entry.js" "$tmp/"
(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --silent)

esbuild="$(cd "$root" && "$python" -c 'import sys; sys.path.insert(0, "build"); import web_bundle; print(web_bundle.esbuild())')"
mkdir -p "$out"
# --legal-comments=none: the licences are in LICENSES.txt instead (every package is MIT).
(cd "$tmp" && "$esbuild" entry.js --bundle --format=esm --minify --target=es2020 --charset=utf8 \
    --legal-comments=none --log-level=warning --outfile="$out/codemirror.js")

# Every package's licence text, in the lock's order.
(cd "$tmp" && node -e '
  const fs = require("fs"), path = require("path");
  const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
  const parts = [];
  for (const [where, p] of Object.entries(lock.packages)) {
    if (!where) continue;
    const dir = where;
    const file = fs.readdirSync(dir).find((f) => /^(LICEN[CS]E|COPYING)/i.test(f));
    const text = file ? fs.readFileSync(path.join(dir, file), "utf8").trim() : `License: ${p.license}`;
    parts.push(`${where.replace(/^node_modules\//, "")} ${p.version} (${p.license})\n\n${text}\n`);
  }
  fs.writeFileSync(process.argv[1], parts.join("\n" + "-".repeat(72) + "\n\n"));
' "$out/LICENSES.txt")

echo "built web/vendor/codemirror/codemirror.js ($(wc -c <"$out/codemirror.js") bytes)"
echo "sha256 $(sha256sum "$out/codemirror.js" | cut -d' ' -f1)"
