#!/usr/bin/env bash
# Refresh the vendored browser libraries from the npm registry.
#
# The UI is served offline (no CDN at run time), so these files are committed.
# Each package is fetched with `npm pack <name>@<version>` (a tarball, no
# install, no scripts run) into a temp dir and only the files the UI loads are
# copied, with their licence texts. Bump a version here, run this script, then
# update VERSIONS.md in the same commit.
set -euo pipefail

MARKED=18.2.1
DOMPURIFY=3.5.0
HIGHLIGHT=11.12.0   # @highlightjs/cdn-assets: prebuilt ES bundle with the common language set
KATEX=0.19.1
MERMAID=12.3.0

here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fetch() {  # fetch <spec> <dir>: unpack the package tarball into $tmp/<dir>
    local spec="$1" dir="$2"
    (cd "$tmp" && npm pack --silent "$spec" >"$dir.name")
    mkdir -p "$tmp/$dir"
    tar -xzf "$tmp/$(cat "$tmp/$dir.name")" -C "$tmp/$dir" --strip-components=1
}

# copy <src> <dst>: drop the sourceMappingURL line, since the .map files are not vendored
# (a browser would otherwise request them and log a 404).
copy() {
    mkdir -p "$(dirname "$2")"
    sed '/^\/\/# sourceMappingURL=/d' "$1" >"$2"
}

fetch "marked@$MARKED" marked
copy "$tmp/marked/lib/marked.esm.js" "$here/marked/marked.esm.js"
cp "$tmp/marked/LICENSE" "$here/marked/LICENSE"

fetch "dompurify@$DOMPURIFY" dompurify
# Renamed from .mjs to .js: every static server knows .js is JavaScript, and
# module scripts are refused when served with another MIME type.
copy "$tmp/dompurify/dist/purify.es.mjs" "$here/dompurify/purify.es.js"
cp "$tmp/dompurify/LICENSE" "$here/dompurify/LICENSE"
[ -f "$tmp/dompurify/LICENSE-MPL" ] && cp "$tmp/dompurify/LICENSE-MPL" "$here/dompurify/LICENSE-MPL"

fetch "@highlightjs/cdn-assets@$HIGHLIGHT" highlight
copy "$tmp/highlight/es/highlight.min.js" "$here/highlight/highlight.min.js"
copy "$tmp/highlight/styles/github.min.css" "$here/highlight/github.min.css"
copy "$tmp/highlight/styles/github-dark.min.css" "$here/highlight/github-dark.min.css"
cp "$tmp/highlight/LICENSE" "$here/highlight/LICENSE"

fetch "katex@$KATEX" katex
# The ES module (renamed .js, as DOMPurify), its stylesheet and the woff2 fonts only:
# every engine the app runs in reads woff2, so the CSS is cut to name just those
# (otherwise a missing .woff/.ttf is a request that 404s).
copy "$tmp/katex/dist/katex.mjs" "$here/katex/katex.js"
sed -E 's/,url\(fonts\/[^)]+\.(woff|ttf)\) format\("(woff|truetype)"\)//g' "$tmp/katex/dist/katex.min.css" >"$here/katex/katex.min.css"
rm -rf "$here/katex/fonts" && mkdir -p "$here/katex/fonts"
cp "$tmp/katex/dist/fonts/"*.woff2 "$here/katex/fonts/"
cp "$tmp/katex/LICENSE" "$here/katex/LICENSE"

fetch "mermaid@$MERMAID" mermaid
# The one-file build (a classic script that sets globalThis.mermaid): the ES build is a
# hundred chunk files.
copy "$tmp/mermaid/dist/mermaid.min.js" "$here/mermaid/mermaid.min.js"
cp "$tmp/mermaid/LICENSE" "$here/mermaid/LICENSE"

echo "vendored: marked $MARKED, dompurify $DOMPURIFY, @highlightjs/cdn-assets $HIGHLIGHT, katex $KATEX, mermaid $MERMAID"
# For the hash table in VERSIONS.md.
(cd "$here" && for f in marked/marked.esm.js dompurify/purify.es.js highlight/highlight.min.js \
    highlight/github.min.css highlight/github-dark.min.css katex/katex.js katex/katex.min.css \
    mermaid/mermaid.min.js; do
    echo "| $f | $(sha256sum "$f" | cut -c1-16) |"; done)
