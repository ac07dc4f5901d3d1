"""`make test-js` prints each failure and one summary line, not the runner's full TAP listing."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not shutil.which("node"), reason="needs Node.js")


def run_recipe(tmp_path: Path, files: dict[str, str]) -> subprocess.CompletedProcess:
    """The Makefile's `node --test` line, run from the checkout on `files` written under tmp_path."""
    line = next(l.strip() for l in (ROOT / "Makefile").read_text().splitlines() if l.strip().startswith("node --test"))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    args = line.replace("tests/js/*.test.mjs", " ".join(str(tmp_path / n) for n in files)).split()
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)


HEAD = 'import test from "node:test"; import assert from "node:assert";\n'


def test_passing_run_is_one_summary_line(tmp_path):
    tests = "".join(f'test("case {i}", () => assert.ok(true));\n' for i in range(50))
    out = run_recipe(tmp_path, {"a.test.mjs": HEAD + tests})
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stdout.splitlines() if l.strip()]
    assert len(lines) == 1 and re.fullmatch(r"node --test: 50 tests, 50 passed, 0 failed in \d+\.\d s", lines[0]), lines


def test_a_failure_is_named_with_its_error_and_counted(tmp_path):
    out = run_recipe(tmp_path, {"a.test.mjs": HEAD + 'test("fine", () => {});\n'
                                + 'test("broken sum", () => assert.equal(1 + 1, 3));\n'})
    assert out.returncode != 0
    assert "✖ broken sum" in out.stdout and "2 == 3" in out.stdout, out.stdout
    assert "fine" not in out.stdout.replace("broken", "")  # passing tests are not listed
    assert out.stdout.rstrip().splitlines()[-1].startswith("node --test: 2 tests, 1 passed, 1 failed in ")
