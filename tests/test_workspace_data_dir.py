"""The file tools never read, list, search or change Numi's data dir: not through a link, not in a
workspace that holds it (chosen before such workspaces were refused), not from a workspace inside it."""
from __future__ import annotations

import json

import pytest

from backend.core.cancel import CancelToken
from backend.tools.workspace import Workspace, same_or_inside, workspace_tools

TOKEN = "token-" + "data-dir-test-1b7e3c9d"


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "server.json").write_text(json.dumps({"token": TOKEN}))
    (folder / "logs").mkdir()
    (folder / "logs" / "numi.log").write_text(f"started with {TOKEN}\n")
    return folder


def tools(root, data) -> dict:
    return {t.name: t for t in workspace_tools(Workspace(root, hidden=[data]))}


def call(tools, name, **args) -> str:
    return tools[name].run(args, CancelToken())


def refused(tools, name, **args) -> str:
    with pytest.raises(ValueError) as err:
        call(tools, name, **args)
    assert TOKEN not in str(err.value)
    return str(err.value)


def test_a_link_into_the_data_dir_is_refused(tmp_path, data):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "token.json").symlink_to(data / "server.json")
    (ws / "data-link").symlink_to(data)
    t = tools(ws, data)
    refused(t, "read_file", path="token.json")
    refused(t, "read_file", path="data-link/server.json")
    refused(t, "list_files", path="data-link")
    refused(t, "write_file", path="data-link/new.txt", content="x")
    assert "No matches" in call(t, "search_files", pattern=TOKEN[len("token-"):])
    assert not (data / "new.txt").exists()


def test_a_workspace_holding_the_data_dir_keeps_it_out_of_every_tool(tmp_path, data):
    (tmp_path / "notes.txt").write_text(f"a note, not {TOKEN[:5]}\n")
    (tmp_path / "link.json").symlink_to(data / "server.json")
    t = tools(tmp_path, data)
    assert "Numi's own data folder" in refused(t, "read_file", path="data/server.json")
    refused(t, "read_file", path="link.json")
    refused(t, "read_file", path="data/logs/numi.log")
    refused(t, "list_files", path="data")
    refused(t, "search_files", pattern="started", path="data")
    refused(t, "write_file", path="data/server.json", content="{}")
    refused(t, "write_file", path="data/logs/new.log", content="x")
    refused(t, "edit_file", path="data/server.json", old_text=TOKEN, new_text="x")
    listed = call(t, "list_files", recursive=True)
    assert "notes.txt" in listed and "data" not in listed.split("\n")
    assert not any(line.startswith("data/") for line in listed.split("\n"))
    found = call(t, "search_files", pattern="started")
    assert "No matches" in found and "not searched" not in found
    assert TOKEN not in call(t, "search_files", pattern="token")
    assert json.loads((data / "server.json").read_text()) == {"token": TOKEN}
    assert not (data / "logs" / "new.log").exists()


def test_a_workspace_inside_the_data_dir_sees_nothing(data):
    t = tools(data / "logs", data)
    refused(t, "read_file", path="numi.log")
    refused(t, "list_files")
    refused(t, "search_files", pattern="started")
    refused(t, "write_file", path="x.txt", content="x")
    assert not (data / "logs" / "x.txt").exists()


def test_same_or_inside_compares_the_folders_themselves(tmp_path, data):
    (tmp_path / "alias").symlink_to(data)
    assert same_or_inside(data / "logs", tmp_path / "alias")
    assert same_or_inside(tmp_path / "alias" / "logs" / "not-yet", data)
    assert same_or_inside(data, data)
    assert not same_or_inside(tmp_path, data)
    (tmp_path / "data-sibling").mkdir()
    assert not same_or_inside(tmp_path / "data-sibling", data)
    assert not same_or_inside(data, tmp_path / "missing")
