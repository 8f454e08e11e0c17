"""The project's set-up promises: pinned dependencies, the two README commands, CI calling them."""

import re
import tomllib

from conftest import ROOT


def lock():
    lines = (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_locked_dependency_is_pinned_exactly():
    for line in lock():
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.\-]+", line), f"not an exact pin: {line!r}"
        assert "+" not in line, f"{line!r} carries a local version label a package index does not serve"


def test_every_declared_dependency_is_locked():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    locked = {canonical(line.split("==")[0]) for line in lock()}
    for requirement in declared:
        name = canonical(re.split(r"[<>=!~\[; ]", requirement)[0])
        assert name in locked, f"{requirement} is declared in pyproject.toml but missing from requirements.lock"


def test_torch_is_pinned_in_its_own_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["optional-dependencies"]["torch"] == ["torch==2.13.0"]
    assert "torch==2.13.0" in lock()


def test_readme_shows_the_two_commands_first():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```")[1]
    assert "make book" in first_block and "make test" in first_block
    assert readme.index("make book") < readme.index("##"), "the commands come before any section"


def test_ci_runs_make_test():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", run, flags=re.M)
    assert "CI=true" in run


def make(*args):
    """`make -n ARGS` (dry run) in the project: what make would run, nothing run."""
    import subprocess

    done = subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_supported_python_is_accepted():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    supported = re.search(r"^SUPPORTED := (.+)$", makefile, flags=re.M).group(1).split()
    assert {"3.11", "3.12", "3.13"} <= set(supported)
    assert supported == sorted(supported, key=lambda v: tuple(map(int, v.split("."))), reverse=True), (
        "SUPPORTED lists the newest first, so the newest Python found is taken"
    )


def test_ci_reruns_the_notebooks_under_another_blas_kernel():
    # A stored output that depends on rounding passes on the author's CPU and fails on a reader's: CI's second
    # notebook pass re-runs strict nbval under another OpenBLAS kernel on one thread, after make test.
    plan = make("test-other-blas", "VENV=.venv-plan", "PYTHON=python3")
    line = next(line for line in plan.splitlines() if "--nbval" in line)
    assert re.search(r"OPENBLAS_CORETYPE=(Prescott|Nehalem) OPENBLAS_NUM_THREADS=1 ", line)
    assert "chapters" in line and "--nbval-lax" not in line
    ci = [line.split("#")[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "make test-other-blas" in ci and ci.index("make test-other-blas") > ci.index("make test"), (
        ".ci/run does not run make test-other-blas after make test"
    )


def test_ci_runs_a_second_python_without_skipping_silently():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    second = [line for line in run.splitlines() if line.startswith("make test ")]
    assert len(second) == 1 and 'PYTHON="$second"' in second[0]
    # torch is left out there on purpose, and its tests are deselected by marker: none may skip in CI.
    assert "TORCH=0" in second[0] and '-m "not torch"' in second[0]
