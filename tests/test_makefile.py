"""The Makefile's set-up says "PyGObject could not be built" only when `gi` really does not import."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "make: PyGObject could not be built"

pytestmark = pytest.mark.skipif(not shutil.which("make") or not sys.platform.startswith("linux"),
                                reason="runs make on Linux, where the window needs PyGObject")


def run_gui_check(tmp_path: Path, gi_source: str) -> subprocess.CompletedProcess:
    """The Makefile's GUI_CHECK and its recipe line, run by make with a `gi` made of `gi_source`."""
    text = (ROOT / "Makefile").read_text()
    check = re.search(r"^GUI_CHECK := .*$", text, re.M).group(0)
    recipe = [line for line in text.splitlines() if SENTENCE in line]
    assert len(recipe) == 1, recipe
    bin_dir, site = tmp_path / "bin", tmp_path / "site"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    (site / "gi").mkdir(parents=True)
    (site / "gi" / "__init__.py").write_text(gi_source)
    (tmp_path / "Makefile").write_text(f"BIN := {bin_dir}\n{check}\ncheck:\n{recipe[0]}\n")
    # Not `make -s`: what make echoes of the recipe is part of what a person reads. Run as a person
    # runs it, not as a child of the `make test` this may run under (whose job server it cannot use).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "--no-print-directory", "-f", str(tmp_path / "Makefile"), "check"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=30,
                          env={**env, "PYTHONPATH": str(site)})


def test_nothing_is_said_when_gi_imports(tmp_path):
    out = run_gui_check(tmp_path, "")
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""


def test_the_sentence_is_said_once_when_gi_does_not_import(tmp_path):
    out = run_gui_check(tmp_path, "raise ImportError('no typelib')")
    assert out.returncode == 0 and out.stdout == ""
    assert out.stderr.count(SENTENCE) == 1 and "Traceback" not in out.stderr
