"""The vendored browser libraries are the files web/vendor/VERSIONS.md records: each file's sha256 against
its row (a prefix for the copied libraries, the whole hash for CodeMirror, which we bundle), and the
CodeMirror bundle's inputs pinned exactly (build/codemirror: every package at one version, with its
registry integrity hash, all MIT) and free of what the page's CSP refuses."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "web" / "vendor"
CODEMIRROR = ROOT / "build" / "codemirror"


def recorded() -> dict[str, str]:
    """file → the sha256 (or its prefix) of VERSIONS.md's hash table."""
    text = (VENDOR / "VERSIONS.md").read_text(encoding="utf-8")
    table = text[text.index("| file | sha256"):]
    rows = re.findall(r"^\| ([\w./-]+) \| ([0-9a-f]+) \|$", table, re.M)
    return dict(rows)


def test_every_vendored_file_has_the_hash_versions_md_records():
    rows = recorded()
    assert {"marked/marked.esm.js", "dompurify/purify.es.js", "mermaid/mermaid.min.js",
            "codemirror/codemirror.js"} <= rows.keys(), rows
    for name, want in rows.items():
        assert len(want) in (16, 64), (name, want)
        got = hashlib.sha256((VENDOR / name).read_bytes()).hexdigest()
        assert got.startswith(want), f"web/vendor/{name} is not the file VERSIONS.md records ({got})"
    assert len(rows["codemirror/codemirror.js"]) == 64  # built here: the whole hash


def test_the_codemirror_bundle_is_pinned_exactly_and_all_mit():
    package = json.loads((CODEMIRROR / "package.json").read_text())
    lock = json.loads((CODEMIRROR / "package-lock.json").read_text())
    for name, version in package["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned to one version: {version}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, name
    installed = {k: v for k, v in lock["packages"].items() if k}
    assert len(installed) >= len(package["dependencies"])
    for where, meta in installed.items():
        assert meta.get("integrity", "").startswith("sha512-"), f"{where} has no integrity hash in the lock"
        assert meta.get("license") == "MIT", (where, meta.get("license"))
    notes = (VENDOR / "codemirror" / "LICENSES.txt").read_text(encoding="utf-8")
    for where, meta in installed.items():
        assert f"{where.removeprefix('node_modules/')} {meta['version']} (MIT)" in notes, where


def test_the_codemirror_bundle_is_one_module_the_csp_allows():
    code = (VENDOR / "codemirror" / "codemirror.js").read_text(encoding="utf-8")
    assert "new Function" not in code and not re.search(r"\beval\(", code)
    assert not re.search(r"\bimport\(", code), "the bundle loads another file"
    exports = re.search(r"export\{([^}]*)\}\s*;?\s*$", code).group(1)
    for name in ("EditorView", "EditorState", "Compartment", "Transaction", "languages", "tags", "HighlightStyle"):
        assert re.search(rf"\bas {name}\b", exports), f"codemirror.js does not export {name}"
