"""`make lab` starts a JupyterLab that answers and runs the book's code.

The command is the one `make lab` runs (read with `make -n lab`, so the test follows the Makefile), started headless:
no browser, a free port on 127.0.0.1, a random token. The test asks the server's REST API for its status, opens
JupyterLab's page, checks that the page loads the jupyterlab-myst extension (which renders the chapters' MyST),
starts a Python kernel, runs `import attn` in it over the kernel's websocket, and stops the kernel and the server (the
whole process group), whatever happens. Skips when JupyterLab (the `lab` extra) or make is not installed; in CI a
skip is a failure. A dry run of `make lab` shows that it installs its extras once.
"""

import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

START_TIMEOUT = 60  # seconds for the server to answer
RUN_TIMEOUT = 60  # seconds for the kernel to start and run the cell


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lab_command(root):
    """The `jupyter lab ...` line `make lab` would run with this test's Python environment, as argv."""
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    venv = Path(sys.prefix)
    dry_run = subprocess.run(
        ["make", "--no-print-directory", "-n", "lab", f"VENV={venv}", f"PYTHON={sys.executable}"],
        cwd=root, capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    lines = [shlex.split(line) for line in dry_run.splitlines() if " lab " in f" {line} " and "jupyter" in line]
    assert len(lines) == 1, f"`make -n lab` shows no single `jupyter lab` command:\n{dry_run}"
    return lines[0]


@pytest.fixture(scope="module")
def lab(root, tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (the `lab` extra: make lab installs it)")
    command = _lab_command(root)
    is_root = os.getuid() == 0
    assert ("--allow-root" in command) == is_root, (
        f"`make lab` as {'root' if is_root else 'a user'} runs {shlex.join(command)}: "
        "--allow-root is needed as root (JupyterLab refuses to start without it) and only then"
    )
    assert command[-1] == "chapters", f"`make lab` does not open the chapters folder: {shlex.join(command)}"
    port, token = _free_port(), secrets.token_hex(16)
    home = tmp_path_factory.mktemp("jupyter")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTER_PLATFORM_DIRS="1")
    log = (home / "server.log").open("w")
    server = subprocess.Popen(
        [*command, "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                status = _get(base, "/api/status", token)
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the server did not answer in {START_TIMEOUT} s:\n{(home / 'server.log').read_text()}")
                time.sleep(0.3)
        yield {"base": base, "token": token, "status": status, "root": root}
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # the server and its kernels, which share its process group
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
        log.close()
    with socket.socket() as probe:  # nothing listens any more
        assert probe.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still answers after the server was stopped"


def _request(base, path, token, method="GET", body=None):
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=20) as response:
        raw = response.read()
        return response.status, response.headers.get_content_type(), raw


def _get(base, path, token):
    status, _, raw = _request(base, path, token)
    assert status == 200
    return json.loads(raw)


def test_the_api_answers(lab):
    assert "started" in lab["status"] and "kernels" in lab["status"], lab["status"]
    version = _get(lab["base"], "/api", lab["token"])["version"]
    assert version.split(".")[0].isdigit(), version
    with pytest.raises(urllib.error.HTTPError) as refused:  # and it asks for the token
        urllib.request.urlopen(lab["base"] + "/api/contents", timeout=20)
    assert refused.value.code in (401, 403)


def test_jupyterlab_serves_its_page_on_the_chapters(lab):
    status, kind, page = _request(lab["base"], "/lab", lab["token"])
    assert status == 200 and kind == "text/html" and b"JupyterLab" in page
    listing = _get(lab["base"], "/api/contents", lab["token"])  # the server's folder is chapters/
    names = {item["name"] for item in listing["content"]}
    expected = {p.name for p in (lab["root"] / "chapters").glob("*.ipynb")}
    assert expected and expected <= names, f"the lab's folder lists {sorted(names)}"


def test_a_kernel_imports_attn(lab):
    websocket = pytest.importorskip("websocket", reason="websocket-client comes with jupyter_server")
    base, token = lab["base"], lab["token"]
    _, _, raw = _request(base, "/api/kernels", token, method="POST", body={"name": "python3"})
    kernel = json.loads(raw)["id"]
    try:
        ws = websocket.create_connection(f"ws://127.0.0.1:{base.rsplit(':', 1)[1]}/api/kernels/{kernel}/channels",
                                         header=[f"Authorization: token {token}"], timeout=RUN_TIMEOUT)
        try:
            msg_id = uuid.uuid4().hex
            code = "import attn, numpy\nprint('attn', attn.__file__, attn.core.softmax(numpy.zeros((2, 1))).ravel())"
            ws.send(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": uuid.uuid4().hex,
                           "username": "test", "version": "5.3", "date": ""},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True},
            }))
            stdout, reply, deadline = [], None, time.monotonic() + RUN_TIMEOUT
            while reply is None or not stdout:
                assert time.monotonic() < deadline, f"no answer from the kernel in {RUN_TIMEOUT} s"
                message = json.loads(ws.recv())
                if message.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = message["header"]["msg_type"]
                if kind == "stream":
                    stdout.append(message["content"]["text"])
                elif kind == "error":
                    pytest.fail(f"the kernel raised {message['content']['ename']}: {message['content']['evalue']}")
                elif kind == "execute_reply":
                    reply = message["content"]
                    if reply["status"] != "ok":
                        pytest.fail(f"the cell failed: {reply}")
        finally:
            ws.close()
    finally:
        _request(base, f"/api/kernels/{kernel}", token, method="DELETE")
    words = "".join(stdout).split()
    assert words[0] == "attn", stdout
    assert Path(words[1]).resolve().is_relative_to((lab["root"] / "attn").resolve()), (
        f"the kernel imported attn from {words[1]}, not from this project"
    )
    assert "".join(words[2:]) == "[0.50.5]", f"softmax of a zero column of length 2 printed {words[2:]}"


def _page_config(lab):
    """The configuration JupyterLab's page hands to the browser (the JSON in its jupyter-config-data script)."""
    _, _, page = _request(lab["base"], "/lab", lab["token"])
    found = re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
    assert found, "JupyterLab's page carries no jupyter-config-data"
    return json.loads(found.group(1))


def test_jupyterlab_loads_the_myst_extension(lab):
    """Without jupyterlab-myst, the chapters' {exercise}, {doc} and (label)= show as raw text in JupyterLab."""
    config = _page_config(lab)
    extensions = {e["name"]: e for e in config.get("federated_extensions", [])}
    assert "jupyterlab-myst" in extensions, f"the lab page loads the extensions {sorted(extensions)} only"
    disabled = config.get("disabledExtensions", [])
    assert not any(name.startswith("jupyterlab-myst") for name in disabled), f"jupyterlab-myst is disabled: {disabled}"
    myst = extensions["jupyterlab-myst"]
    status, kind, script = _request(lab["base"], f"/lab/extensions/jupyterlab-myst/{myst['load']}", lab["token"])
    assert status == 200 and "javascript" in kind and len(script) > 100, (
        f"the server does not serve jupyterlab-myst's entry point {myst['load']}: {status} {kind}"
    )


def _dry_run(root, venv, *args):
    done = subprocess.run(["make", "--no-print-directory", "-n", *args, f"VENV={venv}", f"PYTHON={sys.executable}"],
                          cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_lab_installs_once(root, tmp_path):
    """The first `make lab` installs the book and lab extras (not test, not torch); later ones start JupyterLab only."""
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    version = "%d.%d" % sys.version_info[:2]
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    first = _dry_run(root, venv, "lab")
    installs = re.findall(r"pip install .* -e \"\.\[(\w+)\]\"", first)
    assert installs == ["book", "lab"], f"a first `make lab` installs the extras {installs}:\n{first}"
    later = time.time() + 5  # stamps newer than pyproject.toml and the lock, as after that first run
    for extra in installs:
        stamp = venv / f".installed-py{version}-{extra}"
        stamp.touch()
        os.utime(stamp, (later, later))
    again = _dry_run(root, venv, "lab")
    assert "pip" not in again, f"a second `make lab` runs pip again:\n{again}"
    assert re.search(r"jupyter lab .*chapters$", again.strip()), again
