# Two commands on a fresh machine: `make book` and `make test`. Both set everything up first.

# The Pythons the pinned wheels of requirements.lock install on. Unless PYTHON is given, the newest one that runs
# here is used (a name on the PATH that does not start, such as an inactive pyenv shim, is passed over).
SUPPORTED := 3.13 3.12 3.11
ifeq ($(origin PYTHON),undefined)
PYTHON := $(firstword $(foreach v,$(SUPPORTED),$(shell python$(v) -c 'import sys' >/dev/null 2>&1 && echo python$(v))))
endif
PYVER  := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
VENV   ?= .venv
BIN    := $(VENV)/bin
LOCK   := requirements.lock
# torch==2.13.0 (the cross-check's reference, a test-only extra) is installed where its CPU build is the one pip
# takes, Python 3.11 here; elsewhere pip's default Linux build is the multi-GB CUDA one, so ask for it with TORCH=1.
# Without torch the cross-check tests skip and say why.
TORCH  ?= $(if $(filter 3.11,$(PYVER)),1,0)
comma  := ,
EXTRAS := book,test$(if $(filter 1,$(TORCH)),$(comma)torch)
STAMP  := $(VENV)/.installed-py$(PYVER)-$(subst $(comma),-,$(EXTRAS))
JB     := $(BIN)/jupyter-book build . -W -n --keep-going
NBVAL  := --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider
PYTEST_ARGS ?=
# Another OpenBLAS kernel than this machine's, on one thread: the stored outputs must not depend on either.
OTHER_BLAS := OPENBLAS_CORETYPE=$(if $(filter Prescott,$(OPENBLAS_CORETYPE)),Nehalem,Prescott) OPENBLAS_NUM_THREADS=1

# Notebook kernels and tools come from the project's own environment.
export PATH := $(abspath $(BIN)):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# The Chinese editions, built from the gettext catalogs in locales/ into _build/html/<lang>/.
EDITIONS := zh_TW zh_CN

.PHONY: help setup book editions catalogs test test-other-blas notebooks lab bench lock clean python

help:
	@echo "make book       set up .venv and build the site into _build/html"
	@echo "make test       set up .venv, build the site strictly, run every test"
	@echo "                (PYTHON=python3.12 picks the Python, TORCH=1 adds the PyTorch cross-check)"
	@echo "make notebooks  re-execute every chapter top to bottom and save it"
	@echo "make catalogs   bring the Chinese editions' catalogs up to date with the English text"
	@echo "make lab        JupyterLab on the chapters"
	@echo "make pdf        the whole book (and each edition) as PDF in _build/pdf (needs chromium)"
	@echo "make bench      the attention benchmarks (writes benchmarks/results/)"
	@echo "make lock       re-resolve the pinned dependencies into $(LOCK)"

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "No Python $(SUPPORTED) found on the PATH: name one, e.g. make test PYTHON=/path/to/python3.12"; exit 1; }
	@test -n "$(filter $(PYVER),$(SUPPORTED))" || { echo "$(PYTHON) is Python $(or $(PYVER),?), the pinned set needs one of $(SUPPORTED)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml $(LOCK)
	@test "$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = "$(PYVER)" || \
	  { echo "$(VENV) was made with another Python than $(PYTHON) ($(PYVER)): remove it or pass VENV=.venv-$(PYVER)"; exit 1; }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) -e ".[$(EXTRAS)]"
	@touch $@

setup: $(STAMP)

book: setup
	$(JB)
	$(MAKE) --no-print-directory editions
	$(BIN)/python tools/archive.py  # every chapter, the attn wheel and how to run them, in one zip in the site
	@if [ -f $(PDF) ]; then cp $(PDF) _build/html/; fi  # the home page's "Download the book as PDF" (make pdf)
	@echo
	@echo "The site is built. Open $(abspath _build/html/index.html) in a browser (it works offline)."

# The site is built first (strictly), so the tests can check the HTML and drive a browser over it; the tests run in
# two processes, a test file (or notebook) to each. Then the notebooks run once more under another OpenBLAS
# kernel: a stored output that rounding decides fails there.
test: setup
	$(JB) --quiet
	$(MAKE) --no-print-directory editions
	$(BIN)/python tools/archive.py
	$(BIN)/python -m pytest $(NBVAL) -n 2 --dist loadfile $(PYTEST_ARGS) tests chapters
	$(MAKE) --no-print-directory test-other-blas

test-other-blas: setup
	$(OTHER_BLAS) $(BIN)/python -m pytest $(NBVAL) -q -n 2 --dist loadfile chapters

# Each edition is a strict Sphinx build of the same sources with the catalogs of its language (tools/editions.py).
# The two run side by side (one core each).
editions: setup
	@$(BIN)/python tools/editions.py sphinx-conf
	@pids=; for lang in $(EDITIONS); do $(BIN)/python tools/editions.py build $$lang & pids="$$pids $$!"; done; \
	  status=0; for pid in $$pids; do wait $$pid || status=1; done; exit $$status

# After the English text changes: extract its messages and bring both catalogs up to date (then translate zh_TW
# and derive zh_CN: CONTRIBUTING.md says how).
catalogs: setup
	$(JB) --quiet --builder custom --custom-builder gettext --path-output _build/i18n
	$(BIN)/sphinx-intl update -p _build/i18n/_build/gettext -d locales -l zh_TW -w 0
	$(BIN)/python tools/editions.py derive

python:
	@echo "$(PYTHON) (Python $(PYVER)), venv $(VENV), extras $(EXTRAS)"

notebooks: setup
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.timeout=300 \
		--ExecutePreprocessor.kernel_name=python3 chapters/*.ipynb

# JupyterLab refuses to start as root unless told to (in a container one usually is root).
lab: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) -e ".[$(EXTRAS),lab]"
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) chapters

# The whole book as one PDF, printed from the built site by Debian's chromium, offline (tools/print_pdf.py);
# the copy in _build/html is the one the home page links to.
PDF := _build/pdf/self-attention-column-by-column.pdf
.PHONY: pdf
pdf: book
	$(BIN)/python tools/print_pdf.py --site _build/html --out $(PDF)
	cp $(PDF) _build/html/

bench: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) -e ".[$(EXTRAS),torch,bench]"
	$(BIN)/python -m benchmarks.run

# Resolve the newest versions the extras allow in a scratch environment and pin them all.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[book,test,torch,lab,bench]"
	.lock-venv/bin/python -m pip freeze --exclude-editable | sed -E 's/\+cpu$$//' > $(LOCK)
	rm -rf .lock-venv

clean:
	rm -rf _build .pytest_cache .hypothesis
