# Two commands matter: `make run` and `make test`. Both set up .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-py pytest test-js test-bench-smoke lint lint-imports bench lock clean web-bundle

# PyGObject (the Linux desktop window and tray) is compiled here and needs
# libgirepository1.0-dev libcairo2-dev pkg-config gcc: when it cannot be built the
# rest still installs, and `numi` falls back to the browser (see README).
GUI_PINS := ^(PyGObject|pycairo)==
# Whether the window's binding imports (on Linux, the only place it is wanted). The
# "could not be built" note is said only when it does not: pip can fail for other reasons, and
# the recipe line itself is silent (@) so make never echoes the sentence as a command.
GUI_CHECK := $(BIN)/python -c "import sys; sys.platform != 'linux' or __import__('gi')" 2>/dev/null
$(VENV): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	grep -Ev '$(GUI_PINS)' requirements.lock > $(VENV)/core.lock
	$(BIN)/pip install -q --disable-pip-version-check -r $(VENV)/core.lock
	grep -E '$(GUI_PINS)' requirements.lock > $(VENV)/gui.lock || true
	$(BIN)/pip install -q --disable-pip-version-check -r $(VENV)/gui.lock || true
	@$(GUI_CHECK) || echo "make: PyGObject could not be built (install libgirepository1.0-dev libcairo2-dev pkg-config gcc for the desktop window); Numi will open in the browser." >&2
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(VENV)

# web/app's start-up modules bundled into web/.app-bundle, which opens a chat sooner
# (docs/UI.md). Nothing to do when it is up to date; without it the UI runs from its
# modules, so a bundle that cannot be made (no network for the first esbuild fetch)
# is said and not fatal.
web-bundle: $(VENV)
	@$(BIN)/python build/web_bundle.py || echo "make: web/app was not bundled (see above); Numi serves its modules as they are." >&2

# The desktop app; with no display or GUI backend it opens the UI in the browser instead.
run: $(VENV) web-bundle
	$(BIN)/numi

# The code checks, the Python tests (every benchmark among them once, at tiny sizes) and
# the web UI's tests run side by side: the Python tests mostly wait on servers and browsers,
# so the other two fit in their idle CPU. Any one failing fails make test.
# `make test-py` / `make test-js` run one side.
test: $(VENV) web-bundle
	@$(MAKE) --no-print-directory -j3 lint pytest test-js

# Every Python the tests start (servers, MCP servers, the desktop app, the CLI) may keep its
# bytecode, also where PYTHONDONTWRITEBYTECODE is set: Numi is compiled once (into __pycache__,
# which git ignores), not by each of them, and the libraries use what pip compiled.
TEST_ENV := PYTHONDONTWRITEBYTECODE=

# Four workers (pytest-xdist): most of a test's time is spent waiting on a server, a browser
# or a model script, so four keep two cores busy (docs/BENCHMARKS.md, "The suite"). The
# benchmarks run in the same pool at tiny sizes with no timing targets (NUMI_BENCH_SMOKE=1,
# tests/bench/conftest.py), so a benchmark that errors fails make test instead of measuring
# nothing at the next `make bench`.
test-py: $(VENV) web-bundle lint
	@$(MAKE) --no-print-directory pytest

pytest:
	$(TEST_ENV) NUMI_BENCH_SMOKE=1 $(BIN)/python -m pytest -q -n 4 --dist worksteal --durations=12 tests

# The checks that read the code (pyproject.toml has their settings): the import contracts
# ([tool.importlinter]; README, "Architecture": imports go only downward, never in a cycle),
# ruff's pyflakes rules and import order, and mypy's types in the engine's lower half
# ([tool.mypy]). Seconds, and nothing is written into the tree (mypy's cache is in the venv).
lint: lint-imports
	$(BIN)/ruff check --quiet --no-cache .
	$(BIN)/mypy --cache-dir $(VENV)/cache/mypy

lint-imports: $(VENV)
	$(BIN)/lint-imports --no-cache --no-logo

# The web UI's pure modules (web/js) under node's own test runner; no npm install.
# Files are named explicitly: node >= 21 reads its arguments as globs, not directories.
# The reporter prints each failure and one summary line, not 2 000 lines of TAP.
test-js:
	@command -v node >/dev/null 2>&1 || { echo "make test: 'node' (Node.js 18 or newer) is needed for the web UI tests in tests/js; install it (Debian: apt-get install nodejs) and run make test again." >&2; exit 1; }
	node --test --test-reporter=./tests/js/summary-reporter.mjs tests/js/*.test.mjs

bench: $(VENV) web-bundle
	$(BIN)/python -m pytest -q -s tests/bench

# The benchmarks alone at tiny sizes, as make test runs them.
test-bench-smoke: $(VENV) web-bundle
	$(TEST_ENV) NUMI_BENCH_SMOKE=1 $(BIN)/python -m pytest -q -n 2 tests/bench

# Re-pin after changing pyproject.toml's dependencies.
lock:
	rm -rf /tmp/numi-lock && $(PY) -m venv /tmp/numi-lock
	/tmp/numi-lock/bin/pip install -q setuptools -e '.[test,package]'
	( echo "# Pinned set of every package Numi installs (regenerate: make lock)."; \
	  /tmp/numi-lock/bin/pip freeze --all --exclude-editable | grep -v '^pip==' ) > requirements.lock

clean:
	rm -rf $(VENV) web/.app-bundle

# --- packaging (issue 6) ---------------------------------------------------------------------
.PHONY: package deb test-desktop
# The PyInstaller one-folder app in build/out/numi, then its smoke test (headless: health, UI, one turn).
package: $(VENV) web-bundle
	rm -rf build/out/numi
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath build/out --workpath build/out/work build/numi.spec
	@du -sh build/out/numi | sed 's/^/package size: /'
	$(BIN)/python -m pytest -q -s tests/desktop/test_package.py

# The .deb (Linux), built from the package above; installers/linux/smoke-deb.sh installs and tests it.
deb: package
	installers/linux/build-deb.sh

test-desktop: $(VENV)
	$(BIN)/python -m pytest -q tests/desktop
