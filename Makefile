# Two commands matter: `make run` and `make test`. Both set up .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-py test-js bench lock clean

$(VENV): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(VENV)

run: $(VENV)
	$(BIN)/numi --headless --open-browser

# Python first, then the web UI's tests; `make test-py` / `make test-js` run one side.
test: test-py
	@$(MAKE) --no-print-directory test-js

test-py: $(VENV)
	$(BIN)/python -m pytest -q tests --ignore=tests/bench

# The web UI's pure modules (web/js) under node's own test runner; no npm install.
# Files are named explicitly: node >= 21 reads its arguments as globs, not directories.
test-js:
	@command -v node >/dev/null 2>&1 || { echo "make test: 'node' (Node.js 18 or newer) is needed for the web UI tests in tests/js; install it (Debian: apt-get install nodejs) and run make test again." >&2; exit 1; }
	node --test tests/js/*.test.mjs

bench: $(VENV)
	$(BIN)/python -m pytest -q -s tests/bench

# Re-pin after changing pyproject.toml's dependencies.
lock:
	rm -rf /tmp/numi-lock && $(PY) -m venv /tmp/numi-lock
	/tmp/numi-lock/bin/pip install -q setuptools -e '.[test]'
	( echo "# Pinned set of every package Numi installs (regenerate: make lock)."; \
	  /tmp/numi-lock/bin/pip freeze --all --exclude-editable | grep -v '^pip==' ) > requirements.lock

clean:
	rm -rf $(VENV)
