# Two commands on a fresh machine: `make book` and `make test`. Both set everything up first.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := requirements.lock
JB     := $(BIN)/jupyter-book build . -W -n --keep-going
PYTEST_ARGS ?=

# Notebook kernels and tools come from the project's own environment.
export PATH := $(abspath $(BIN)):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help setup book test notebooks lab bench lock clean

help:
	@echo "make book       set up .venv and build the site into _build/html"
	@echo "make test       set up .venv, build the site strictly, run every test"
	@echo "make notebooks  re-execute every chapter top to bottom and save it"
	@echo "make lab        JupyterLab on the chapters"
	@echo "make bench      the attention benchmarks (writes benchmarks/results/)"
	@echo "make lock       re-resolve the pinned dependencies into $(LOCK)"

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is needed, found " + sys.version'
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml $(LOCK)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) -e ".[book,test]"
	@touch $@

setup: $(STAMP)

book: setup
	$(JB)
	@echo
	@echo "The site is built. Open $(abspath _build/html/index.html) in a browser (it works offline)."

# The site is built first (strictly), so the tests can check the HTML and drive a browser over it.
test: setup
	$(JB) --quiet
	$(BIN)/python -m pytest --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider $(PYTEST_ARGS) tests chapters

notebooks: setup
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.timeout=300 \
		--ExecutePreprocessor.kernel_name=python3 chapters/*.ipynb

lab: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) -e ".[book,test,lab]"
	$(BIN)/jupyter lab chapters

bench: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) -e ".[book,test,bench]"
	$(BIN)/python -m benchmarks.run

# Resolve the newest versions the extras allow in a scratch environment and pin them all.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[book,test,lab,bench]"
	.lock-venv/bin/python -m pip freeze --exclude-editable | sed -E 's/\+cpu$$//' > $(LOCK)
	rm -rf .lock-venv

clean:
	rm -rf _build .pytest_cache .hypothesis
