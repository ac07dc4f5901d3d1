"""The engine's seams hold: messages are read and written through backend/store/history.py only.

The turn engine, the socket layer and the title job never query the message
table themselves (no `Message` model, no SQL naming the table), and the socket
layer touches no database at all.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE = sorted((ROOT / "backend" / "turns").glob("*.py"))
SOCKETS = [ROOT / "backend" / name for name in ("ws.py", "ws_app.py", "ws_flow.py")]
MESSAGE_SQL = re.compile(r"\b(FROM|INTO|UPDATE|JOIN)\s+message\b", re.IGNORECASE)


def imported_names(tree: ast.AST) -> set[tuple[str, str]]:
    """(module, name) for every `from module import name`, and (module, "") for `import module`."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out |= {(node.module, alias.name) for alias in node.names}
        elif isinstance(node, ast.Import):
            out |= {(alias.name, "") for alias in node.names}
    return out


def strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


@pytest.mark.parametrize("path", ENGINE + SOCKETS, ids=lambda p: p.name)
def test_no_message_queries_outside_the_history_module(path):
    tree = ast.parse(path.read_text())
    assert ("backend.store.models", "Message") not in imported_names(tree), path
    assert not [s for s in strings(tree) if MESSAGE_SQL.search(s)], path


@pytest.mark.parametrize("path", SOCKETS, ids=lambda p: p.name)
def test_the_socket_layer_touches_no_database(path):
    modules = {module for module, _ in imported_names(ast.parse(path.read_text()))}
    assert not {m for m in modules if m.startswith(("backend.store", "peewee", "sqlite3"))
                and m != "backend.store.db"}, path
    # short_connection / release_connection only hand connections back; nothing queries.
    assert "execute_sql" not in path.read_text() and ".select(" not in path.read_text(), path


def test_the_checks_see_a_query():
    """The patterns above would catch the queries the engine used to make."""
    sample = ast.parse('from backend.store.models import Chat, Message as MessageRow\n'
                       'SQL = "SELECT id FROM message WHERE chat_id = ?"')
    assert ("backend.store.models", "Message") in imported_names(sample)
    assert any(MESSAGE_SQL.search(s) for s in strings(sample))
