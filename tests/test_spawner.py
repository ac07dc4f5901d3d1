"""The test fork server (tests/spawner.py): a forked server is the same process a fresh one is."""
import ast
import os
import signal
import subprocess

from tests.numi_client import ROOT, Forked, ServerProcess, _Spawner


def upload_status(server: ServerProcess, size: int) -> int:
    return server.api().upload("big.bin", b"x" * size).status


def test_each_forked_server_has_its_own_environment(start_server):
    small = start_server({"NUMI_MAX_FILE_MB": "1"})
    default = start_server()
    assert isinstance(small.proc, Forked) and isinstance(default.proc, Forked)
    assert small.proc.pid != default.proc.pid
    # 1.5 MB: over the first server's limit, well under the default one's.
    assert upload_status(small, 1_500_000) == 413
    assert upload_status(default, 1_500_000) == 201


def test_a_forked_server_dies_by_kill9_and_starts_again_on_its_data(tmp_path):
    server = ServerProcess(tmp_path / "data").start()
    try:
        chat = server.api().post("/api/chats", {"title": "kept"}).body["id"]
        assert server.proc.poll() is None
        server.kill9()
        assert server.proc.returncode == -signal.SIGKILL
        server.start()
        assert server.api().get(f"/api/chats/{chat}").body["title"] == "kept"
    finally:
        server.stop()


def test_a_forked_server_exits_cleanly_on_sigterm(tmp_path):
    server = ServerProcess(tmp_path / "data").start()
    try:
        server.terminate()
        assert server.proc.returncode == 0
        assert server.proc.stdout.read() == ""  # said nothing after its address
    finally:
        server.stop()


def test_what_only_a_fresh_interpreter_shows_is_started_fresh(tmp_path):
    assert _Spawner.can_fork(dict(os.environ), None)
    assert not _Spawner.can_fork(dict(os.environ), preexec_fn=lambda: None)
    assert not _Spawner.can_fork({**os.environ, "PYTHONHASHSEED": "7"}, None)
    # The keyring backend is chosen on first use, so a test may set it per server.
    assert _Spawner.can_fork({**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}, None)
    server = ServerProcess(tmp_path / "data", fresh=True).start()
    try:
        assert isinstance(server.proc, subprocess.Popen)
    finally:
        server.stop()


def _environment_read_as_it_loads(tree: ast.Module) -> list[int]:
    """Lines of a module that read the environment outside any function (so, as it loads)."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return  # runs when called, in the child, with the child's environment
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb") \
                and isinstance(node.value, ast.Name) and node.value.id == "os":
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_no_numi_module_reads_the_environment_as_it_loads():
    # The fork server loads every Numi module once; a setting read at import would be the fork
    # server's, not the server's, and a test that sets it would silently test the default.
    offenders = {}
    for path in sorted((ROOT / "backend").rglob("*.py")):
        lines = _environment_read_as_it_loads(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            offenders[str(path.relative_to(ROOT))] = lines
    assert offenders == {}, offenders
    # The check itself sees what it looks for.
    assert _environment_read_as_it_loads(ast.parse("import os\nX = os.environ.get('A')\n")) == [2]
    assert _environment_read_as_it_loads(ast.parse("import os\nclass C:\n    x: int = int(os.getenv('A'))\n")) == [3]
    assert _environment_read_as_it_loads(ast.parse("import os\ndef f():\n    return os.environ\n")) == []

