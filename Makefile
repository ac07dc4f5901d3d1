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

test: $(VENV)
	$(BIN)/python -m pytest -q tests --ignore=tests/bench

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
