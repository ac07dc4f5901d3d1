"""The shell tool: real processes, whole-tree Stop and timeout, capped output, standing-rule checks."""
import json
import os
import shlex
import sys
import threading
import time
import tracemalloc

import pytest

from backend.core.cancel import CancelToken
from backend.core.tools import execute
from backend.core.types import ToolCall
from backend.tools.command_rules import rule_matches, standing_rule_allowed
from backend.tools.shell import run_command, shell_tool

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell and process groups")
PY = shlex.quote(sys.executable)


def run(command, cwd, *, timeout=20.0, output_cap=30_000, cancel=None, **kw):
    return run_command(command, cwd, timeout=timeout, output_cap=output_cap,
                       cancel=cancel or CancelToken(), **kw)


def wait_until(predicate, what, timeout=10.0):
    """Poll `predicate` until true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def read_pid(path):
    """The pid a command wrote to `path` (written via rename, so never half a number)."""
    wait_until(path.exists, f"{path.name} to be written")
    return int(path.read_text())


def gone(check):
    """Whether `check` (an os.kill/killpg probe) says the process or group no longer exists."""
    try:
        check()
    except ProcessLookupError:
        return True
    return False


def in_thread(fn):
    """Start fn in a thread; returns (thread, box) where box["value"] is its result."""
    box = {}
    thread = threading.Thread(target=lambda: box.update(value=fn()), daemon=True)
    thread.start()
    return thread, box


# Writes the shell's pid ($$, which is also its process group id) where the test can see it.
ANNOUNCE = "echo $$ > pid.tmp && mv pid.tmp pid"


# --- run_command -------------------------------------------------------------------------

@posix_only
def test_exit_code_and_duration_are_reported(tmp_path):
    ok = run("true", tmp_path)
    assert (ok.exit_code, ok.timed_out, ok.cancelled, ok.truncated) == (0, False, False, False)
    assert run("exit 3", tmp_path).exit_code == 3
    slow = run("sleep 0.2", tmp_path)
    assert slow.exit_code == 0 and slow.duration_ms >= 200


@posix_only
def test_stdout_and_stderr_are_captured_in_order(tmp_path):
    result = run("echo out; echo err >&2; echo out2", tmp_path)
    assert result.output == "out\nerr\nout2\n"


@posix_only
def test_runs_in_the_workspace_with_stdin_closed(tmp_path):
    assert run("pwd", tmp_path).output.strip() == os.path.realpath(tmp_path)
    # With stdin open, cat would wait for input until the timeout.
    result = run("cat; echo after", tmp_path, timeout=10)
    assert not result.timed_out and result.output == "after\n"


@posix_only
def test_output_is_decoded_with_replacement(tmp_path):
    assert run(r"printf 'ok\377\n'", tmp_path).output == "ok\ufffd\n"


@posix_only
def test_big_output_keeps_head_and_tail_with_a_marker(tmp_path):
    script = "import sys; sys.stdout.write('HEAD' + 'x' * 1_000_000 + 'TAIL')"
    result = run(f"{PY} -c {shlex.quote(script)}", tmp_path, output_cap=1000)
    assert result.truncated and result.exit_code == 0
    assert result.output == ("HEAD" + "x" * 496 + "\n[... 999008 bytes of output left out here ...]\n"
                             + "x" * 496 + "TAIL")


@posix_only
def test_cut_never_splits_a_character(tmp_path):
    script = "import sys; sys.stdout.write('HEAD' + 'é' * 100_000 + 'TAIL')"
    # 102 bytes: 51 for each end, an odd count of two-byte characters either side.
    result = run(f"{PY} -c {shlex.quote(script)}", tmp_path, output_cap=102)
    assert result.truncated
    assert "\ufffd" not in result.output
    head, marker, tail = result.output.split("\n")
    assert head == "HEAD" + "é" * 23 and tail == "é" * 23 + "TAIL"
    assert marker == f"[... {200_008 - 50 - 50} bytes of output left out here ...]"


@posix_only
def test_huge_output_holds_about_the_cap_in_memory(tmp_path):
    script = "import sys\nfor _ in range(800): sys.stdout.write('y' * 65536)"  # ~52 MB
    tracemalloc.start()
    try:
        result = run(f"{PY} -c {shlex.quote(script)}", tmp_path, output_cap=30_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.truncated and result.exit_code == 0
    assert len(result.output) < 30_100
    assert peak < 2_000_000, f"peak {peak} bytes while reading 52 MB"


@posix_only
def test_timeout_kills_the_command(tmp_path):
    started = time.monotonic()
    result = run(f"{ANNOUNCE}; sleep 30", tmp_path, timeout=0.5)
    assert time.monotonic() - started < 10
    assert result.timed_out and not result.cancelled and result.exit_code is None
    pgid = int((tmp_path / "pid").read_text())
    wait_until(lambda: gone(lambda: os.killpg(pgid, 0)), "the process group to end")


@posix_only
@pytest.mark.parametrize("command", [
    f"{ANNOUNCE}; sleep 30",
    f"sleep 30 & echo $! > child.tmp && mv child.tmp child; {ANNOUNCE}; sleep 30",
], ids=["plain", "background-grandchild"])
def test_stop_ends_a_slow_command_and_its_whole_tree(tmp_path, command):
    cancel = CancelToken()
    thread, box = in_thread(lambda: run(command, tmp_path, timeout=60, cancel=cancel))
    pgid = read_pid(tmp_path / "pid")
    child = read_pid(tmp_path / "child") if "child" in command else None
    if child:
        assert os.getpgid(child) == pgid  # the grandchild really is in the command's group

    stopped = time.monotonic()
    cancel.cancel()
    thread.join(10)
    assert not thread.is_alive(), "Stop did not end the command"
    assert time.monotonic() - stopped < 10

    result = box["value"]
    assert result.cancelled and not result.timed_out and result.exit_code is None
    wait_until(lambda: gone(lambda: os.killpg(pgid, 0)), "the process group to end")
    if child:
        wait_until(lambda: gone(lambda: os.kill(child, 0)), "the background grandchild to end")


@posix_only
def test_stop_kills_a_command_that_ignores_sigterm(tmp_path):
    cancel = CancelToken()
    # Ignored signals stay ignored across exec, so sleep ignores SIGTERM too.
    command = f"trap '' TERM; {ANNOUNCE}; sleep 30"
    thread, box = in_thread(lambda: run(command, tmp_path, timeout=60, cancel=cancel, grace=0.3))
    pgid = read_pid(tmp_path / "pid")
    cancel.cancel()
    thread.join(10)
    assert not thread.is_alive() and box["value"].cancelled
    wait_until(lambda: gone(lambda: os.killpg(pgid, 0)), "the process group to end")


@posix_only
def test_background_leftovers_end_with_the_command(tmp_path):
    result = run("sleep 100 & echo $! > child.tmp && mv child.tmp child; echo done", tmp_path, timeout=20)
    assert result.exit_code == 0 and result.output == "done\n" and not result.timed_out
    child = int((tmp_path / "child").read_text())
    wait_until(lambda: gone(lambda: os.kill(child, 0)), "the background child to end")


def test_cancelled_before_start_runs_nothing(tmp_path):
    cancel = CancelToken()
    cancel.cancel()
    result = run("touch ran", tmp_path, cancel=cancel)
    assert result.cancelled and result.exit_code is None
    assert not (tmp_path / "ran").exists()


# --- the tool ----------------------------------------------------------------------------

def test_tool_spec_and_flags(tmp_path):
    tool = shell_tool(tmp_path)
    assert tool.name == "shell" and tool.needs_approval and not tool.concurrent
    assert tool.spec.parameters["required"] == ["command"]
    assert set(tool.spec.parameters["properties"]) == {"command", "timeout_seconds"}


@posix_only
def test_tool_output_ends_with_exit_code_and_duration(tmp_path):
    text = shell_tool(tmp_path).run({"command": "echo hi; exit 2"}, CancelToken())
    lines = text.split("\n")
    assert lines[0] == "hi"
    assert lines[-1].startswith("[exit code 2 · ") and lines[-1].endswith(" ms]")
    assert shell_tool(tmp_path).run({"command": "true"}, CancelToken()).startswith("(no output)\n[exit code 0")


@pytest.mark.parametrize("args", [{}, {"command": ""}, {"command": "   "}, {"command": 5},
                                  {"command": "ls", "timeout_seconds": 0},
                                  {"command": "ls", "timeout_seconds": -1},
                                  {"command": "ls", "timeout_seconds": "soon"},
                                  {"command": "ls", "timeout_seconds": True}])
def test_tool_bad_arguments_are_errors_the_model_reads(tmp_path, args):
    with pytest.raises(ValueError):
        shell_tool(tmp_path).run(args, CancelToken())
    outcome = execute(shell_tool(tmp_path), ToolCall(id="c1", name="shell", arguments=json.dumps(args)),
                      CancelToken())
    assert not outcome.ok and outcome.result.is_error and outcome.result.content


@posix_only
def test_tool_timeout_is_clamped_to_the_maximum(tmp_path):
    started = time.monotonic()
    text = shell_tool(tmp_path, timeout_max=0.3).run({"command": "sleep 30", "timeout_seconds": 1000},
                                                     CancelToken())
    assert time.monotonic() - started < 10
    assert text.split("\n")[-1].startswith("[exit code none · timed out after 0.3 s")


@posix_only
def test_tool_reports_a_stop(tmp_path):
    cancel = CancelToken()
    thread, box = in_thread(lambda: shell_tool(tmp_path).run({"command": f"{ANNOUNCE}; sleep 30"}, cancel))
    read_pid(tmp_path / "pid")
    cancel.cancel()
    thread.join(10)
    assert not thread.is_alive()
    assert "stopped" in box["value"].split("\n")[-1]


# --- standing rules ----------------------------------------------------------------------

@pytest.mark.parametrize("command, allowed", [
    # plain commands
    ("ls", True),
    ("ls -la", True),
    ("  git status  ", True),
    ("pytest -q tests/test_x.py", True),
    ("ls *.py", True),
    ("FOO=bar make test", True),
    ("npm run build -- --watch=false", True),
    # quoting makes operators literal
    ("echo 'a;b'", True),
    ('grep -n "x|y" f', True),
    ("git commit -m 'fix: a & b > c'", True),
    ('git log --format="%h; %s"', True),
    ("echo 'it''s $(fine)'", True),
    ('echo "it\'s"', True),
    ("grep 'end$' f", True),
    ('grep "end$" f', True),
    ('echo "\\$HOME"', True),
    ("find . -name '*.pyc' -exec rm {} \\;", True),
    # chaining and background
    ("ls; rm -rf x", False),
    ("ls;rm", False),
    ("make && make install", False),
    ("test -f x || touch x", False),
    ("sleep 100 &", False),
    ("sleep 100 & ls", False),
    # pipes
    ("ls | grep x", False),
    ("ls |& cat", False),
    # redirects and here-docs
    ("echo x > f", False),
    ("echo x >> f", False),
    ("sort < f", False),
    ("make 2> err", False),
    ("make 2>&1", False),
    ("make &> log", False),
    ("cat <<EOF", False),
    ("cat <<< word", False),
    # substitution, also inside double quotes
    ("echo $(id)", False),
    ('echo "$(id)"', False),
    ("echo `id`", False),
    ('echo "`id`"', False),
    ("diff <(ls a) <(ls b)", False),
    ("tee >(cat)", False),
    ("echo $((1+2))", False),
    ("(cd x && ls)", False),
    # expansion changes what the same text means
    ("echo $HOME", False),
    ('echo "${HOME}"', False),
    ("rm -rf $DIR/x", False),
    ("echo $1", False),
    ("echo $'a'", False),
    # hidden lines and malformed quoting
    ("ls\nrm -rf x", False),
    ("ls\rrm", False),
    ("echo 'a\nb'", False),
    ("echo 'unterminated", False),
    ('echo "unterminated', False),
    ("ls \\", False),
    ("", False),
    ("   ", False),
])
def test_standing_rule_allowed(command, allowed):
    assert standing_rule_allowed(command) is allowed


def test_rule_matches_exactly_one_command_line():
    assert rule_matches("ls", "ls")
    assert rule_matches("ls -la", "  ls -la \n")
    assert rule_matches("  git status", "git status")
    assert not rule_matches("ls", "ls -la")
    assert not rule_matches("ls", "ls; rm -rf x")
    assert not rule_matches("ls", "ls && rm -rf x")
    assert not rule_matches("ls", "lsof")
    assert not rule_matches("ls -la", "ls")
    assert not rule_matches("ls -la", "ls  -la")  # only surrounding whitespace is normalised
    assert not rule_matches("echo 'a'", "echo a")
    assert not rule_matches("", "")
    # A rule that could never have been stored matches nothing, not even itself.
    assert not rule_matches("ls | sh", "ls | sh")


# Only ASCII spaces, tabs and newlines are trimmed (the contract); every other space-like
# character is part of the command the shell receives, so the line is another command.
UNICODE_SPACES = ["\u00a0", "\u2003", "\u3000", "\u200b", "\u2028", "\u0085", "\ufeff", "\r", "\x0b", "\x0c"]


@pytest.mark.parametrize("space", UNICODE_SPACES, ids=[f"U+{ord(c):04X}" for c in UNICODE_SPACES])
def test_a_rule_does_not_match_the_command_with_another_space_around_it(space):
    rule = "echo always-ok"
    for command in (rule + space, space + rule, f" {rule}{space}\n"):
        assert not rule_matches(rule, command), repr(command)
        assert not standing_rule_allowed(command), repr(command)  # such a line never becomes a rule
    assert not rule_matches(rule + space, rule + space)


def test_a_rule_matches_with_ascii_spaces_tabs_and_newlines_around_it():
    for command in ("echo always-ok", " \techo always-ok\n", "echo always-ok \t \n\n"):
        assert rule_matches("echo always-ok", command), repr(command)
        assert rule_matches(command, "echo always-ok"), repr(command)


def test_commands_get_an_environment_built_from_nothing(tmp_path, monkeypatch):
    """Even unconfined: no keys, tokens, session bus or Numi settings, and nothing else of Numi's."""
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")
    monkeypatch.setenv("GITHUB_TOKEN", "not-a-real-token")
    monkeypatch.setenv("NUMI_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus")
    monkeypatch.setenv("HARMLESS_SETTING", "not passed either")
    result = run_command("env", tmp_path, timeout=10, output_cap=100_000, cancel=CancelToken())
    assert result.exit_code == 0
    names = {line.split("=", 1)[0] for line in result.output.splitlines() if "=" in line}
    assert {"PATH", "HOME", "LANG", "TERM"} <= names <= {"PATH", "HOME", "LANG", "TERM", "PWD", "SHLVL", "_"}
