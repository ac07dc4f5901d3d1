"""`make test` runs every benchmark once at tiny sizes (NUMI_BENCH_SMOKE=1) with the other tests,
so none can break unseen."""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def recipe(target: str) -> list[str]:
    text = (ROOT / "Makefile").read_text()
    block = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", text, re.M)
    assert block, f"no {target} target"
    return [line.strip() for line in block.group(1).splitlines()]


def test_make_test_runs_the_benchmarks_at_tiny_sizes():
    # make test and make test-py both run the `pytest` target, which runs all of tests/.
    [beside] = [line for line in recipe("test") if "$(MAKE)" in line]
    assert " pytest " in f" {beside} " and " lint " in f" {beside} " and " test-js" in beside
    [alone] = [line for line in recipe("test-py") if "$(MAKE)" in line]
    assert alone.endswith(" pytest")
    [run] = [line for line in recipe("pytest") if "pytest" in line]
    # All of tests/, the benchmarks included, in smoke mode.
    assert " NUMI_BENCH_SMOKE=1 " in f" {run}" and run.endswith(" tests") and "--ignore" not in run
    [alone] = [line for line in recipe("test-bench-smoke") if "pytest" in line]
    assert " NUMI_BENCH_SMOKE=1 " in f" {alone}" and alone.endswith(" tests/bench")


def test_smoke_sizes_are_tiny_and_timing_targets_off():
    code = ("from tests.bench import conftest as c; "
            "print(c.SMOKE, c.size('NUMI_X_UNSET', 10000, 3), c.on_target(False))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMI_")}
    smoke = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, "NUMI_BENCH_SMOKE": "1"},
                           capture_output=True, text=True, check=True).stdout.split()
    full = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True).stdout.split()
    assert smoke == ["True", "3", "True"] and full == ["False", "10000", "False"]
