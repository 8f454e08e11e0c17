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
# torch==2.13.0, the PyTorch cross-check's reference, is opt-in on every Python: TORCH=1 installs it. On Linux pip
# takes the package index's default torch, the multi-GB CUDA build (README.md says how to get the CPU build instead).
# Without torch the cross-check tests skip and say why.
TORCH  ?= 0
WITH_TORCH := $(if $(filter 1,$(TORCH)),torch)
# One stamp per extra of pyproject.toml: each is installed once, by the first command that needs it, and again only
# when pyproject.toml or the lock changes. `make book` installs only `book`.
stamp   = $(foreach extra,$(1),$(VENV)/.installed-py$(PYVER)-$(extra))
# Sphinx rewrites only the pages whose sources changed, but a new or removed entry of references.bib renumbers the
# citation anchors that every citing page links to: then every page is written again.
# citation anchors that every citing page links to: then every page is written again. BIB_BUILT is the references.bib
# of the last English build (tools/editions.py keeps one per edition).
BIB_BUILT := _build/references.bib.built
JB_ALL := $(shell cmp -s references.bib $(BIB_BUILT) || echo --all)
JB     := $(BIN)/jupyter-book build . -W -n --keep-going $(JB_ALL)
NBVAL  := --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider -p nbval_kernels
PYTEST_ARGS ?=
# Another OpenBLAS kernel than this machine's, on one thread: the stored outputs must not depend on either.
OTHER_BLAS := OPENBLAS_CORETYPE=$(if $(filter Prescott,$(OPENBLAS_CORETYPE)),Nehalem,Prescott) OPENBLAS_NUM_THREADS=1

# Notebook kernels and tools come from the project's own environment.
export PATH := $(abspath $(BIN)):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# The Chinese editions, built from the gettext catalogs in locales/ into _build/html/<lang>/.
EDITIONS = $(shell $(PYTHON) tools/book_site.py translations)

.PHONY: help book editions catalogs test unit test-other-blas test-archive notebooks lab pdf bench lock clean python

help:
	@echo "make book       set up .venv (the book extra) and build the site into _build/html"
	@echo "make test       set up .venv (book, test, lab), build the site strictly, run every test"
	@echo "                PYTHON=python3.12 picks the Python; TORCH=1 adds the PyTorch cross-check"
	@echo "                (on Linux that downloads the multi-GB CUDA build of torch: README.md, Tests)"
	@echo "make unit       the tests that need no built site, browser or notebook run: seconds, while editing"
	@echo "make test-other-blas  the notebooks again, under another OpenBLAS kernel on one thread (CI runs it)"
	@echo "make test-archive  the notebook archive and its test only (no site): a reader's environment of PYTHON"
	@echo "                runs a chapter from it, every chapter with CI=true (CI runs it under a third Python)"
	@echo "make editions   only the two Chinese editions, into _build/html/zh_TW and _build/html/zh_CN"
	@echo "make notebooks  re-execute every chapter top to bottom and save it"
	@echo "make catalogs   bring the Chinese editions' catalogs up to date with the English text"
	@echo "make lab        JupyterLab on the chapters (installs the lab extra once)"
	@echo "make pdf        the whole book (and each edition) as PDF in _build/pdf (needs chromium)"
	@echo "make bench      the attention benchmarks, against PyTorch: needs TORCH=1 (writes benchmarks/results/)"
	@echo "make lock       re-resolve the pinned dependencies into $(LOCK)"
	@echo "make python     which Python, environment and torch setting the commands use"
	@echo "make clean      remove _build/ and the test caches"
	@echo "make help       this list"

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "No Python $(SUPPORTED) found on the PATH: name one, e.g. make test PYTHON=/path/to/python3.12"; exit 1; }
	@test -n "$(filter $(PYVER),$(SUPPORTED))" || { echo "$(PYTHON) is Python $(or $(PYVER),?), the pinned set needs one of $(SUPPORTED)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

# The stamp of one extra: `.venv/.installed-py3.11-book` says the book extra is installed for Python 3.11.
$(VENV)/.installed-py$(PYVER)-%: $(BIN)/python pyproject.toml $(LOCK)
	@test "$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = "$(PYVER)" || \
	  { echo "$(VENV) was made with another Python than $(PYTHON) ($(PYVER)): remove it or pass VENV=.venv-$(PYVER)"; exit 1; }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) -e ".[$*]"
	@touch $@

# What each command installs (each extra once).
BOOK_SETUP := $(call stamp,book)
TEST_SETUP := $(call stamp,book test lab $(WITH_TORCH))
LAB_SETUP  := $(call stamp,book lab)

book: $(BOOK_SETUP)
	$(JB)
	cp references.bib $(BIB_BUILT)
	$(MAKE) --no-print-directory editions
	$(BIN)/python tools/archive.py  # every chapter, the attn wheel and how to run them, in one zip in the site
	@if [ -f $(PDF) ]; then cp $(PDF) _build/html/; fi  # the home page's "Download the book as PDF" (make pdf)
	@echo
	@echo "The site is built. Open $(abspath _build/html/index.html) in a browser (it works offline)."

# The site is built first (strictly), so the tests can check the HTML and drive a browser over it; the tests run in
# two processes, a test file (or notebook) to each. CI (.ci/run) then runs test-other-blas as well.
test: $(TEST_SETUP)
	$(JB) --quiet
	cp references.bib $(BIB_BUILT)
	$(MAKE) --no-print-directory editions
	$(BIN)/python tools/archive.py
	$(BIN)/python -m pytest $(NBVAL) -n 2 --dist loadfile $(PYTEST_ARGS) tests chapters

# The loop while editing `attn/` or a test: no site build, no browser, no notebook run (the archive's included), no
# lab server, no PDF.
UNIT_SKIPS := test_browser test_editions_site test_site_offline test_pdf test_lab test_ch09_without_results test_archive
unit: $(call stamp,book test $(WITH_TORCH))
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider -m "not browser" $(foreach t,$(UNIT_SKIPS),--ignore=tests/$(t).py) \
	  $(PYTEST_ARGS) tests

# The notebooks once more, under another OpenBLAS kernel on one thread: a stored output that rounding decides (and
# that passed on this CPU) fails here. CI runs it after make test; run it before committing new stored outputs.
test-other-blas: $(call stamp,book test)
	$(OTHER_BLAS) $(BIN)/python -m pytest $(NBVAL) -q -n 2 --dist loadfile chapters

# The archive of the chapters (tools/archive.py) and tests/test_archive.py alone, in an environment that holds only
# what they need: no site, browser or JupyterLab. The test unpacks the archive outside the repository and makes a
# reader's environment there with this Python; with CI=true it runs every chapter in it against its stored outputs.
# CI runs it under the supported Python that its two `make test` passes leave out, with a VENV of its own.
# setuptools builds the attn wheel (pyproject.toml's build-system); make lock leaves it out of the lock.
ARCHIVE_TEST_NEEDS := numpy hypothesis pytest nbval nbclient packaging setuptools==84.2.1
ARCHIVE_OUT := _build/archive/self-attention-column-by-column-notebooks.zip
test-archive: $(VENV)/.installed-py$(PYVER)-archive-test
	$(BIN)/python tools/archive.py --out $(ARCHIVE_OUT)
	BOOK_ARCHIVE=$(ARCHIVE_OUT) $(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) tests/test_archive.py

$(VENV)/.installed-py$(PYVER)-archive-test: $(BIN)/python pyproject.toml $(LOCK)
	@test "$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = "$(PYVER)" || \
	  { echo "$(VENV) was made with another Python than $(PYTHON) ($(PYVER)): remove it or pass VENV=.venv-$(PYVER)"; exit 1; }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) $(ARCHIVE_TEST_NEEDS)
	@touch $@

# Each edition is a strict Sphinx build of the same sources with the catalogs of its language (tools/editions.py).
# The two run side by side (one core each).
editions: $(BOOK_SETUP)
	@$(BIN)/python tools/editions.py sphinx-conf
	@pids=; for lang in $(EDITIONS); do $(BIN)/python tools/editions.py build $$lang & pids="$$pids $$!"; done; \
	  status=0; for pid in $$pids; do wait $$pid || status=1; done; exit $$status

# After the English text changes: extract its messages afresh and bring both catalogs up to date (then translate
# zh_TW and derive zh_CN: CONTRIBUTING.md says how). The same sources give the same catalogs, byte for byte: the
# locations and the header's date do not depend on the build folder or the time (tools/editions.py).
POT := _build/i18n/_build/gettext
catalogs: $(BOOK_SETUP)
	rm -rf _build/i18n
	$(JB) --quiet --builder custom --custom-builder gettext --path-output _build/i18n
	$(BIN)/python tools/editions.py normalise-catalogs $(POT)
	$(BIN)/sphinx-intl update -p $(POT) -d locales -l zh_TW -w 0
	$(BIN)/python tools/editions.py normalise-catalogs locales/zh_TW/LC_MESSAGES
	$(BIN)/python tools/editions.py derive

python:
	@echo "$(PYTHON) (Python $(PYVER)), venv $(VENV), TORCH=$(TORCH)"

notebooks: $(BOOK_SETUP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.timeout=300 \
		--ExecutePreprocessor.kernel_name=python3 chapters/*.ipynb

# JupyterLab refuses to start as root unless told to (in a container one usually is root).
lab: $(LAB_SETUP)
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) chapters

# The whole book as one PDF, printed from the built site by Debian's chromium, offline (tools/print_pdf.py, which
# drives it through Playwright, of the test extra); the copy in _build/html is the one the home page links to.
PDF := _build/pdf/self-attention-column-by-column.pdf
pdf: book $(call stamp,test)
	$(BIN)/python tools/print_pdf.py --site _build/html --out $(PDF)
	cp $(PDF) _build/html/

# The benchmarks time numpy's forms against PyTorch's attention, so they need torch, which is opt-in (TORCH=1, see
# TORCH above): without it make stops before installing anything.
bench: bench-needs-torch $(call stamp,bench $(WITH_TORCH))
	$(BIN)/python -m benchmarks.run

.PHONY: bench-needs-torch
bench-needs-torch:
	$(if $(WITH_TORCH),@true,$(error make bench compares with PyTorch: run make bench TORCH=1 (on Linux pip then \
	  downloads the multi-GB CUDA build of torch unless the CPU build is installed first: README.md, Tests)))

# Resolve the newest versions the extras allow in a scratch environment and pin them all but pip, setuptools and wheel
# (which pip freeze lists under some Pythons and not others: left out under every one).
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[book,test,torch,lab,bench]"
	.lock-venv/bin/python -m pip freeze --exclude-editable --exclude pip --exclude setuptools --exclude wheel \
	  | sed -E 's/\+cpu$$//' > $(LOCK)
	rm -rf .lock-venv

clean:
	rm -rf _build .pytest_cache .hypothesis
