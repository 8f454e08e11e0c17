"""The notebook archive the site offers (tools/archive.py, built by `make book`): the chapters run outside the repository.

What a reader does is what the test does, in an empty temporary folder outside the repository: unpack the archive,
use a virtual environment (no system site packages) that holds the archive's requirements and nothing else (in CI
all of requirements.txt; elsewhere its requirements-kernel.txt, what the kernel needs without JupyterLab), and,
before the module's wheel is in, run a chapter as if downloaded alone: its first cell prints the one message saying
where the module is, and no cell raises. Then the archive's wheel goes in with the reader's own pip command, and
chapters run end to end through nbval, compared with their stored outputs: one chapter on a developer's machine (the
quickest), every chapter in CI (chapter 9 reads a data file from the archive), where every chapter also runs without
the module.

Installing the requirements is the slow step (tens of seconds). In CI the environment is made afresh on every run,
as .venv inside the archive unpacked in the test's temporary folder, where the archive's README.txt has a reader make
it. On a developer's machine it is set-up, not the test: it is made once per requirements file and Python, in
_build/archive-env/<hash>/, and kept there. Every run first takes the module out again and checks that the
environment holds exactly the file's pins, so a kept environment is the one a reader would make.

The kernels run the new environment's Python (a kernel spec written into the test's own Jupyter folders), with no
PYTHONPATH: nothing of the repository is importable there. pip runs as configured on the machine (its index and
cache); every version it installs is pinned by the archive.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, in_ci

sys.path.insert(0, str(ROOT / "tools"))
import archive  # noqa: E402  tools/archive.py

CHAPTERS = archive.chapters()
# The chapter run end to end on a developer's machine: the quickest (chapter 2). CI runs every chapter, chapter 9
# among them, which reads a data file that the archive must hold.
LOCAL_CHAPTER = next((p.name for p in CHAPTERS if p.name.startswith("02_")), CHAPTERS[0].name)
LOCAL_ALONE = CHAPTERS[0].name  # the chapter run without attn on a developer's machine
KERNEL = "archive-venv"
PIP_TIMEOUT = 600
RUN_TIMEOUT = 600


@pytest.fixture(scope="module")
def archive_path(request):
    """The archive in the built site; or the one BOOK_ARCHIVE names (`make test-archive`, which builds no site)."""
    given = os.environ.get("BOOK_ARCHIVE")
    if given:
        path = Path(given)
        assert path.name == archive.ARCHIVE_NAME and path.is_file(), f"BOOK_ARCHIVE={given} is not the archive"
        return path
    path = request.getfixturevalue("site") / archive.ARCHIVE_NAME
    if not path.exists():
        pytest.skip(f"{archive.ARCHIVE_NAME} is not in the site: run `make book` (tools/archive.py writes it)")
    return path


@pytest.fixture(scope="module")
def members(archive_path):
    with zipfile.ZipFile(archive_path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist() if not info.is_dir()}


def _inner(members):
    """The archive's files by their path inside its one folder."""
    prefix = archive.FOLDER + "/"
    assert all(name.startswith(prefix) for name in members), f"not all inside {prefix}: {sorted(members)[:5]}"
    return {name.removeprefix(prefix): data for name, data in members.items()}


def test_archive_holds_every_chapter_as_stored(members):
    inner = _inner(members)
    stored = {f"chapters/{p.name}": p.read_bytes() for p in CHAPTERS}
    in_archive = {n: d for n, d in inner.items() if n.startswith("chapters/")}
    assert sorted(in_archive) == sorted(stored), "the archive's chapters are not the repository's: run `make book`"
    stale = [n for n in stored if in_archive[n] != stored[n]]
    assert not stale, f"the archive's copies of {stale} differ from the repository's: run `make book`"


def test_archive_holds_the_module_as_a_wheel_of_this_source(members):
    inner = _inner(members)
    wheels = [n for n in inner if n.endswith(".whl")]
    assert len(wheels) == 1 and re.fullmatch(r"attn-[\w.]+-py3-none-any\.whl", wheels[0]), wheels
    with zipfile.ZipFile(__import__("io").BytesIO(inner[wheels[0]])) as wheel:
        in_wheel = {n: wheel.read(n) for n in wheel.namelist() if n.startswith("attn/")}
    sources = {p.relative_to(ROOT).as_posix(): p.read_bytes() for p in (ROOT / "attn").rglob("*.py")}
    assert sorted(in_wheel) == sorted(sources), "the wheel's modules are not attn/'s"
    assert all(in_wheel[n] == sources[n] for n in sources), "the wheel was built from another attn: run `make book`"


def test_archive_holds_the_data_the_chapters_read(members):
    inner = _inner(members)
    reads = archive.data_files(CHAPTERS)
    assert reads, "no chapter reads a data file: the archive has none to hold"
    for rel in reads:
        assert inner.get(rel.as_posix()) == (ROOT / rel).read_bytes(), f"{rel} is missing or stale in the archive"


@pytest.mark.parametrize("name, needed", [
    ("requirements-kernel.txt", ("numpy", "matplotlib", "ipykernel")),
    ("requirements.txt", ("jupyterlab", "jupyterlab-myst")),  # without jupyterlab-myst the MyST shows raw
])
def test_requirements_pin_every_package_at_the_locked_version(members, name, needed):
    text = _inner(members)[name].decode()
    lock = archive.read_lock()
    pins = {}
    for line in text.splitlines():
        if line.startswith("-r "):
            assert name == "requirements.txt" and line == "-r requirements-kernel.txt", f"{name}: {line!r}"
        elif line and not line.startswith("#"):
            req = line.split(";")[0].strip()
            package, sep, version = req.partition("==")
            assert sep, f"{name}: {line!r} is not pinned"
            pins[archive.canonicalize_name(package)] = version
    for package in needed:
        assert package in pins, f"{name} does not pin {package}"
    wrong = {n: (v, lock.get(n, (None, None))[1]) for n, v in pins.items() if lock.get(n, (None, None))[1] != v}
    assert not wrong, f"{name} pins these otherwise than requirements.lock: {wrong}"


def test_the_book_says_how_to_run_the_archive(members, root):
    wheel = next(n for n in _inner(members) if n.endswith(".whl")).split("/")[-1]
    intro = (root / "intro.md").read_text(encoding="utf-8")
    assert f'href="{archive.ARCHIVE_NAME}"' in intro, "the home page does not link to the archive"
    page = (root / "run_it_yourself.md").read_text(encoding="utf-8")
    for words in (archive.ARCHIVE_NAME, "python3 -m venv .venv", f"pip install -r requirements.txt {wheel}",
                  "jupyter lab chapters"):
        assert words in page, f"run_it_yourself.md does not say {words!r}"


def test_archive_holds_no_tests_environments_build_folders_or_machine_paths(members):
    import io

    texts = dict(members)
    for name, data in members.items():
        if name.endswith(".whl"):
            with zipfile.ZipFile(io.BytesIO(data)) as wheel:
                texts.update({f"{name}/{n}": wheel.read(n) for n in wheel.namelist()})
    forbidden = {"tests", ".venv", "venv", "build", "_build", "dist", "__pycache__", ".ipynb_checkpoints", ".git"}
    for name in texts:
        parts = Path(name).parts
        assert not forbidden & set(parts), f"the archive holds {name}"
        assert not any(p.startswith(("test_", "conftest")) or p.endswith(".egg-info") for p in parts), name
    home = str(Path.home())
    for name, data in texts.items():
        text = data.decode("utf-8", errors="replace")
        for path in (str(ROOT), home + "/", "/work/", "/tmp/", "/root/", "/home/"):
            assert path not in text, f"{name} holds the machine path {path}"


def test_readme_says_how_to_run_it(members):
    inner = _inner(members)
    readme = inner["README.txt"].decode()
    wheel = next(n for n in inner if n.endswith(".whl"))
    for step in ("python3 -m venv .venv", f"pip install -r requirements.txt {wheel}", "jupyter lab chapters",
                 "requirements-kernel.txt"):
        assert step in readme, f"README.txt does not say {step!r}"


# The reader's path, run for real.


def _clean_env(tmp):
    """This process's environment without anything that points into the repository or its environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(JUPYTER_DATA_DIR=str(tmp / "jupyter-data"), JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
               JUPYTER_PATH=str(tmp / "jupyter-data"), IPYTHONDIR=str(tmp / "ipython"),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PYDEVD_DISABLE_FILE_VALIDATION="1", MPLBACKEND="agg")
    return env


def _run(args, env, cwd, timeout):
    result = subprocess.run([str(a) for a in args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return result


# Run in a fresh process of this test's Python (nbclient drives the archive environment's kernel): execute one
# notebook, print its code cells' outputs as JSON; exit 1 with the error's name if a cell raised.
ALONE = textwrap.dedent("""
    import json, sys
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    path, kernel = sys.argv[1], sys.argv[2]
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name=kernel, timeout=120, resources={"metadata": {"path": sys.argv[3]}})
    try:
        client.execute()
    except CellExecutionError as error:
        print(json.dumps({"raised": error.ename, "value": error.evalue}))
        sys.exit(1)
    print(json.dumps({"outputs": [c["outputs"] for c in nb.cells if c.cell_type == "code"]}))
""")


def _pins(book, requirements):
    """{canonical name: version} of every package a requirements file of the archive pins for this Python (following
    its -r; a pin whose environment marker does not hold here is left out, as pip leaves it out)."""
    from packaging.markers import Marker

    pins = {}
    for line in (book / requirements).read_text(encoding="utf-8").splitlines():
        line, _, marker = line.split("#")[0].partition(";")
        line = line.strip()
        if marker.strip() and not Marker(marker).evaluate():  # e.g. python_version < "3.12": not for this Python
            continue
        if line.startswith("-r "):
            pins.update(_pins(book, line[3:].strip()))
        elif line:
            name, _, version = line.partition("==")
            pins[archive.canonicalize_name(name)] = version
    return pins


def _installed(python, env, cwd):
    """{canonical name: version} of what the environment of ``python`` holds, pip and setuptools aside."""
    listed = _run([python, "-m", "pip", "list", "--format=json"], env, cwd, 120)
    assert listed.returncode == 0, listed.stderr[-2000:]
    return {archive.canonicalize_name(p["name"]): p["version"] for p in json.loads(listed.stdout)
            if archive.canonicalize_name(p["name"]) not in ("pip", "setuptools")}


def _reader_environment(book, requirements, env, fresh):
    """The Python of a virtual environment holding exactly the pins of ``book/requirements`` (and no attn).

    A venv without system site packages, then `pip install -r requirements`. With ``fresh`` (a folder outside the
    repository: CI) it is made there, new. Otherwise it is made in _build/archive-env/<hash>/ the first time and kept
    for later runs; a run that installed the wheel left attn in, so it is taken out again.
    """
    if fresh is not None:
        home = fresh
        assert not home.exists(), f"{home} exists already: the environment would not be fresh"
    else:
        text = (book / requirements).read_bytes() + (book / "requirements-kernel.txt").read_bytes()
        key = hashlib.sha256(text + sys.version.encode()).hexdigest()[:16]
        home = ROOT / "_build" / "archive-env" / key
    python = home / "bin" / "python"
    made = home / "made"  # written once the requirements are in: a half-made environment is made again
    if not made.exists():
        shutil.rmtree(home, ignore_errors=True)
        # The base interpreter, not this environment's: the new venv sees nothing installed here.
        base = getattr(sys, "_base_executable", sys.executable)
        created = _run([base, "-m", "venv", home], env, book, PIP_TIMEOUT)
        assert created.returncode == 0, f"python -m venv failed:\n{created.stderr}"
        installed = _run([python, "-m", "pip", "install", "--quiet", "-r", requirements], env, book, PIP_TIMEOUT)
        assert installed.returncode == 0, f"pip install -r {requirements} failed:\n{installed.stderr[-3000:]}"
        made.write_text(requirements + "\n")
    removed = _run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "attn"], env, book, PIP_TIMEOUT)
    assert removed.returncode == 0, removed.stderr[-2000:]
    holds, pinned = _installed(python, env, book), _pins(book, requirements)
    assert holds == pinned, (f"the environment in {home} is not what `pip install -r {requirements}` gives: "
                             f"extra {sorted(set(holds) - set(pinned))}, missing {sorted(set(pinned) - set(holds))}, "
                             f"other versions {sorted(n for n in holds if n in pinned and holds[n] != pinned[n])}")
    return python


@pytest.fixture(scope="module")
def reader(archive_path, tmp_path_factory):
    """What happens to a reader of the site: every step run once, its results kept for the tests below."""
    tmp = tmp_path_factory.mktemp("reader")
    assert ROOT not in tmp.resolve().parents, f"{tmp} is inside the repository"
    env = _clean_env(tmp)
    times = {}
    start = time.monotonic()
    with zipfile.ZipFile(archive_path) as zf:
        zf.extractall(tmp)
    book = tmp / archive.FOLDER
    # In CI the whole requirements.txt (JupyterLab too); elsewhere only what the kernel needs, which is quicker.
    requirements = "requirements.txt" if in_ci() else "requirements-kernel.txt"
    # In CI a new environment where the archive's README.txt puts it, .venv in the unpacked folder (outside the
    # repository); elsewhere the kept one.
    fresh = book / ".venv" if in_ci() else None
    python = _reader_environment(book, requirements, env, fresh)
    if fresh is not None:
        assert ROOT not in python.parents, f"the reader's environment {python} is inside the repository"
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    times["environment"] = time.monotonic() - start
    probe = _run([python, "-c", "import importlib.util, sys; print(importlib.util.find_spec('attn'))"], env, book, 60)
    # A kernel of the new environment, named for this test only (so no other Python's python3 kernel is taken).
    spec = tmp / "jupyter-data" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python (the archive's environment)", "language": "python"}))

    start = time.monotonic()
    alone = {}
    for name in [p.name for p in CHAPTERS] if in_ci() else [LOCAL_ALONE]:
        run = _run([sys.executable, "-c", ALONE, book / "chapters" / name, KERNEL, book / "chapters"],
                   env, book, RUN_TIMEOUT)
        alone[name] = run
    times["alone"] = time.monotonic() - start

    start = time.monotonic()
    wheel = next(book.glob("attn-*.whl"))
    with_wheel = _run([python, "-m", "pip", "install", "--quiet", "-r", requirements, wheel.name],
                      env, book, PIP_TIMEOUT)
    assert with_wheel.returncode == 0, f"pip install of the wheel failed:\n{with_wheel.stderr[-3000:]}"
    times["wheel"] = time.monotonic() - start

    start = time.monotonic()
    chosen = [p.name for p in CHAPTERS] if in_ci() else [LOCAL_CHAPTER]
    sanitize = tmp / "nbval_sanitize.cfg"
    sanitize.write_bytes((ROOT / "tests" / "nbval_sanitize.cfg").read_bytes())
    (tmp / "pytest.ini").write_text("[pytest]\n")
    nbval = _run([sys.executable, "-m", "pytest", "-c", tmp / "pytest.ini", "--rootdir", book, "-q",
                  "-p", "no:cacheprovider", "-p", "no:xdist", "--nbval", "--nbval-kernel-name", KERNEL,
                  "--nbval-sanitize-with", sanitize, *(f"chapters/{n}" for n in chosen)], env, book, RUN_TIMEOUT)
    times["nbval"] = time.monotonic() - start
    print(f"\narchive test timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
    return {"probe": probe, "alone": alone, "nbval": nbval, "chosen": chosen, "book": book}


def test_without_the_module_a_chapter_says_where_it_is_and_raises_nothing(reader):
    assert reader["probe"].stdout.strip() == "None", f"attn is importable before its wheel: {reader['probe'].stdout}"
    for name, run in reader["alone"].items():
        assert run.returncode == 0, f"{name} without attn raised: {run.stdout[-2000:]}{run.stderr[-2000:]}"
        outputs = json.loads(run.stdout.strip().splitlines()[-1])["outputs"]
        first, later = outputs[0], outputs[1:]
        assert [o["output_type"] for o in first] == ["stream"] and first[0]["name"] == "stdout", (
            f"{name}: the first cell should print one message, it gave {first}"
        )
        message = first[0]["text"]
        for words in ("needs attn", "not installed", "home page", "archive", "README.txt"):
            assert words in message, f"{name}: the message does not say {words!r}:\n{message}"
        assert "Traceback" not in message and "Error" not in message, message
        noisy = [i for i, out in enumerate(later, start=2) if out]
        assert not noisy, f"{name}: after the message, cells {noisy} still printed something (they should do nothing)"


def test_with_the_wheel_chapters_run_and_match_their_stored_outputs(reader):
    run = reader["nbval"]
    tail = (run.stdout + run.stderr)[-4000:]
    assert run.returncode == 0, f"nbval in the archive's environment failed on {reader['chosen']}:\n{tail}"
    passed = re.search(r"(\d+) passed", run.stdout)
    cells = sum(1 for name in reader["chosen"]
                for c in json.loads((ROOT / "chapters" / name).read_text(encoding="utf-8"))["cells"]
                if c["cell_type"] == "code")
    assert passed and int(passed.group(1)) == cells, f"nbval did not check every code cell ({cells}):\n{tail}"


def test_every_chapter_imports_attn_in_its_first_cell_only_inside_the_guard():
    """Each chapter's first code cell imports attn inside a try whose except prints the message and turns the later
    cells (which may import attn's exercise checkers) into empty ones while attn is missing."""
    handlers = {}  # the handler's text: the chapters that have it
    for path in CHAPTERS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = [("".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "code"]
        first = code[0]
        assert "except ModuleNotFoundError as missing:" in first, f"{path.name}: the first code cell has no guard"
        lines = first.splitlines()
        for i, line in enumerate(lines):
            if re.match(r"\s*(import attn|from attn)\b", line):
                assert line.startswith("    "), f"{path.name}: `{line}` is outside the guard"
        handler = first[first.index("except ModuleNotFoundError"):]
        handlers.setdefault(handler[:handler.index("input_transformers_cleanup")], []).append(path.name)
    groups = sorted(handlers.values(), key=len, reverse=True)
    assert len(groups) == 1, (
        f"the chapters' guards differ: {[g[:3] for g in groups]}. Every chapter's first code cell holds the same "
        f"`except ModuleNotFoundError` block: copy it from {groups[0][0]} into {[n for g in groups[1:] for n in g]}")

