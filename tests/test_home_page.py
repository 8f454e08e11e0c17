"""The home page tells what the stored outputs were produced with; those versions must be the true ones.

They are written in intro.md, so these tests hold them to their sources: each package's version to its pin in
requirements.lock, and the Python version to the one every chapter notebook records in its metadata (the
interpreter that executed and saved it).
"""

import json
import re

import pytest

PACKAGES = ("numpy", "matplotlib", "jupyter-book", "torch")


@pytest.fixture(scope="module")
def stated(root):
    """The sentence of intro.md that names the versions, as {name: version}."""
    text = re.sub(r"\s+", " ", (root / "intro.md").read_text(encoding="utf-8"))
    sentence = re.search(r"The outputs stored in the chapters.*?requirements\.lock", text)
    assert sentence, "intro.md no longer says what the stored outputs were produced with"
    versions = dict(re.findall(r"(Python|numpy|matplotlib|jupyter-book|torch) (\d+\.\d+(?:\.\w+)*)", sentence.group(0)))
    assert set(versions) == {"Python", *PACKAGES}, f"intro.md names versions of {sorted(versions)} only"
    return versions


def test_package_versions_are_the_pinned_ones(stated, root):
    pins = dict(
        line.split("==", 1) for line in (root / "requirements.lock").read_text(encoding="utf-8").splitlines()
        if "==" in line and not line.startswith("#")
    )
    pins = {name.lower().replace("_", "-"): version.strip() for name, version in pins.items()}
    wrong = {name: (stated[name], pins.get(name)) for name in PACKAGES if stated[name] != pins.get(name)}
    assert not wrong, f"intro.md states other versions than requirements.lock pins (stated, pinned): {wrong}"


def test_python_version_is_the_one_the_notebooks_ran_on(stated, root):
    notebooks = sorted((root / "chapters").glob("*.ipynb"))
    assert notebooks, "no chapter notebooks"
    ran_on = {}
    for notebook in notebooks:
        metadata = json.loads(notebook.read_text(encoding="utf-8"))["metadata"]
        ran_on.setdefault(metadata.get("language_info", {}).get("version"), []).append(notebook.name)
    assert set(ran_on) == {stated["Python"]}, (
        f"intro.md says Python {stated['Python']}; the notebooks were saved by: {ran_on}"
    )
