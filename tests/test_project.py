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


def test_torch_is_pinned_in_the_test_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "torch==2.13.0" in project["optional-dependencies"]["test"]
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
