"""What each make command installs, read from dry runs (`make -n`) in an empty environment folder: nothing runs.

`make book` installs what the site needs and nothing else; `make test` adds the test tools and JupyterLab; PyTorch
(the multi-GB CUDA build on Linux) comes only with TORCH=1, on every Python, and `make bench`, which compares with
PyTorch, stops without it. CI opts in for its first pass. `make help` names every command. run_it_yourself.md's two
tables say the same as the dry runs: every command (and its TORCH=1 form where that installs something else) with
what it installs into .venv, and for every extra of pyproject.toml the commands that install it and each package it
holds.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(not shutil.which("make"), reason="make is not installed")


# What the make that runs these tests was given (`make test TORCH=1`, CI's exported TORCH) must not leak into the
# dry runs: each states its own settings.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("TORCH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHON")}


def dry_run(*args, venv, check=True):
    done = subprocess.run(["make", "-n", "--no-print-directory", *args, f"VENV={venv}", f"PYTHON={sys.executable}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, env=CLEAN_ENV)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def extras(plan):
    """The extras the plan pip-installs, in order, each once."""
    found = re.findall(r"pip install .* -e \"\.\[([\w,]+)\]\"", plan)
    return list(dict.fromkeys(e for group in found for e in group.split(",")))


@pytest.fixture
def venv(tmp_path):
    """An environment folder with a python in it and nothing installed (no stamps)."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(sys.executable)
    return tmp_path


def test_make_book_installs_only_the_book_extra(venv):
    assert extras(dry_run("book", venv=venv).stdout) == ["book"]


@pytest.mark.parametrize("torch, expected", [(None, ["book", "test", "lab"]), ("1", ["book", "test", "lab", "torch"]),
                                             ("0", ["book", "test", "lab"])])
def test_make_test_installs_torch_only_when_asked(venv, torch, expected):
    args = ["test"] + ([f"TORCH={torch}"] if torch else [])
    assert extras(dry_run(*args, venv=venv).stdout) == expected


def test_torch_is_opt_in_on_every_python():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    defaults = re.findall(r"^TORCH\s*\??=\s*(.*)$", makefile, flags=re.M)
    assert defaults == ["0"], f"TORCH's default is {defaults}: it must be 0, whatever the Python"


def test_make_bench_needs_torch_1(venv):
    refused = dry_run("bench", venv=venv, check=False)
    assert refused.returncode != 0 and "TORCH=1" in refused.stderr, refused.stderr
    assert "pip install" not in refused.stdout, f"make bench without TORCH=1 installs:\n{refused.stdout}"
    plan = dry_run("bench", "TORCH=1", venv=venv).stdout
    assert extras(plan) == ["bench", "torch"] and "benchmarks.run" in plan


def test_make_unit_runs_no_browser_notebook_or_site_test(venv):
    plan = dry_run("unit", venv=venv).stdout
    line = next(line for line in plan.replace("\\\n", " ").splitlines() if " -m pytest " in line)
    assert "--nbval" not in line and "chapters" not in line.split()
    assert '-m "not browser"' in line
    for slow in ("test_browser", "test_site_offline", "test_editions_site", "test_pdf", "test_lab", "test_archive"):
        assert f"--ignore=tests/{slow}.py" in line, f"make unit runs tests/{slow}.py"


def test_ci_opts_in_to_torch_for_its_first_pass():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    first = run.index("\nmake test\n")
    assert re.search(r"^export .*\bTORCH=1\b", run[:first], flags=re.M), ".ci/run's first pass does not set TORCH=1"
    second = [line for line in run.splitlines() if line.startswith("make test ")]
    assert len(second) == 1 and "TORCH=0" in second[0]


def test_make_help_names_every_command():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):(?!=)", makefile, flags=re.M)) - {"bench-needs-torch"}
    shown = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60).stdout
    missing = sorted(t for t in targets if not re.search(rf"^make {re.escape(t)}\b", shown, flags=re.M))
    assert {"book", "test", "unit", "python", "editions", "test-other-blas", "clean"} <= targets
    assert not missing, f"make help does not name: {missing}"


# --- run_it_yourself.md's tables say what the Makefile and pyproject.toml do ------------------------------------

def _page_table(header_start):
    """The rows of run_it_yourself.md's table whose header row starts with ``header_start``: lists of cells."""
    lines = (ROOT / "run_it_yourself.md").read_text(encoding="utf-8").splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2:]:  # after the header and the | --- | line
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    assert rows, f"run_it_yourself.md's table {header_start!r} has no rows"
    return rows


def _declared_extras():
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


def _commands(cell):
    """`make test TORCH=1`, `make unit` -> [["test", "TORCH=1"], ["unit"]]."""
    found = re.findall(r"`make ([^`]+)`", cell)
    assert found, f"no `make ...` command in {cell!r}"
    return [command.split() for command in found]


def _named_extras(cell):
    return re.findall(r"`([\w-]+)`", cell)


# Every command the Makefile offers, and its TORCH=1 form where that installs something else (or where only it runs).
def _targets():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"^([a-z][\w-]*):(?!=)", makefile, flags=re.M)) - {"bench-needs-torch"})


def _installs(plan, venv):
    """What a dry run's plan pip-installs into the environment folder ``venv``: (extras, other packages by name).

    Installs into another environment (make lock's scratch .lock-venv) are not counted."""
    extras_found, packages = [], []
    for line in plan.replace("\\\n", " ").splitlines():
        if not line.startswith(f"{venv}/bin/python -m pip install "):
            continue
        group = re.search(r'-e "\.\[([\w,]+)\]"', line)
        if group:
            extras_found += group.group(1).split(",")
            continue
        words = line.split()[4:]  # after "<venv>/bin/python -m pip install"
        skip_next = False
        for word in words:
            if skip_next:
                skip_next = False
            elif word in ("-c", "-r"):
                skip_next = True
            elif not word.startswith("-"):
                packages.append(re.split(r"[=<>!~]", word)[0])
    return list(dict.fromkeys(extras_found)), packages


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    """{command as a tuple of make arguments: (extras, other packages) it installs into .venv, or None if it stops}.

    A TORCH=1 form is kept only where it installs something else than the plain command, or the plain one stops."""
    venv = tmp_path_factory.mktemp("venv")
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to(sys.executable)
    found = {}
    for target in _targets():
        plain = dry_run(target, venv=venv, check=False)
        with_torch = dry_run(target, "TORCH=1", venv=venv, check=False)
        plain_installs = _installs(plain.stdout, venv) if plain.returncode == 0 else None
        torch_installs = _installs(with_torch.stdout, venv) if with_torch.returncode == 0 else None
        assert plain_installs is not None or torch_installs is not None, f"make -n {target} stops: {plain.stderr}"
        if plain_installs is not None:
            found[(target,)] = plain_installs
        if torch_installs is not None and torch_installs != plain_installs:
            found[(target, "TORCH=1")] = torch_installs
    return found


def test_the_command_table_says_what_each_command_installs(plans):
    rows = _page_table("| command |")
    on_page = {}
    for row in rows:
        for command in _commands(row[0]):
            assert tuple(command) not in on_page, f"make {' '.join(command)} has two rows"
            on_page[tuple(command)] = row[1]
    missing = sorted(" ".join(c) for c in plans if c not in on_page)
    assert not missing, f"the table leaves out {missing}"
    unknown = sorted(" ".join(c) for c in on_page if c not in plans)
    assert not unknown, f"the table names commands the Makefile does not run: {unknown}"
    for command, cell in on_page.items():
        extras_planned, packages = plans[command]
        listed = _named_extras(cell)
        assert set(listed) <= _declared_extras(), f"{cell!r} names an extra pyproject.toml does not declare"
        assert sorted(listed) == sorted(extras_planned), \
            f"make {' '.join(command)} installs the extras {extras_planned}, the page says {listed}"
        for package in packages:
            assert re.search(rf"\b{re.escape(package)}\b", cell), f"make {' '.join(command)} installs {package}: {cell!r}"
        if not extras_planned and not packages:
            assert cell.startswith("nothing"), f"make {' '.join(command)} installs nothing into .venv: {cell!r}"


def test_the_extras_table_says_which_commands_install_each_extra(plans):
    rows = _page_table("| extra |")
    named = {row[0].strip("`") for row in rows}
    declared = _declared_extras()
    assert named == declared, f"the table names {sorted(named)}, pyproject.toml declares {sorted(declared)}"
    for row in rows:
        extra = row[0].strip("`")
        installing = {" ".join(c) for c, (extras_planned, _) in plans.items() if extra in extras_planned}
        # A TORCH=1 form that installs the extra as its plain form does is covered by the plain form.
        installing = {c for c in installing if not (c.endswith(" TORCH=1") and c.removesuffix(" TORCH=1") in installing)}
        listed = set() if row[1].startswith("none") else {" ".join(c) for c in _commands(row[1])}
        assert listed == installing, f"the {extra} extra: the page names {sorted(listed)}, the Makefile installs it " \
                                     f"with {sorted(installing)}"


def test_the_extras_table_names_every_package_of_each_extra():
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    contents = {row[0].strip("`"): row[2] for row in _page_table("| extra |")}
    for extra, requirements in project["optional-dependencies"].items():
        for requirement in requirements:
            name = re.match(r"[\w.-]+", requirement).group(0)
            assert f"`{name}`" in contents[extra], f"the {extra} extra's row does not name {name}"
    page = (ROOT / "run_it_yourself.md").read_text(encoding="utf-8")
    for requirement in project["dependencies"]:
        name = re.match(r"[\w.-]+", requirement).group(0)
        assert name in page, f"run_it_yourself.md does not say that attn needs {name}"


def test_a_changed_bibliography_rebuilds_every_page(venv):
    # A new entry of references.bib renumbers the citation anchors of every citing page: the site is then built whole.
    changed = dry_run("book", "BIB_BUILT=/nonexistent/references.bib", venv=venv).stdout
    same = dry_run("book", "BIB_BUILT=references.bib", venv=venv).stdout
    build = [line for line in changed.splitlines() if "jupyter-book build" in line]
    assert build and all(line.endswith("--all") for line in build), changed
    assert not any("--all" in line for line in same.splitlines() if "jupyter-book build" in line), same
    assert "cp references.bib" in changed
