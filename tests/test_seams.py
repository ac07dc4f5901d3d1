"""The engine's seams hold: the turn engine queries no table itself.

Messages are read and written through backend/store/history.py, chats and models
through backend/store/chats.py, settings through backend/store/settings.py: the
turn engine imports no peewee model in any form, and neither it nor the socket
layer writes SQL naming the message table. The socket layer touches no database at all.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The engine and the features plugged into it (backend/features/).
ENGINE = sorted((ROOT / "backend" / "turns").glob("*.py")) + sorted((ROOT / "backend" / "features").rglob("*.py"))
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


MODELS = "backend.store.models"


def imports_models(tree: ast.AST) -> list[str]:
    """Every way the tree reaches the models module: `from backend.store.models import X`,
    `from backend.store import models`, `import backend.store.models` (with or without `as`)."""
    found = []
    for module, name in imported_names(tree):
        if module == MODELS or module.startswith(MODELS + ".") or (module == "backend.store" and name == "models"):
            found.append(f"{module} {name}".strip())
    return found


def strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


@pytest.mark.parametrize("path", ENGINE + SOCKETS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_message_queries_outside_the_history_module(path):
    tree = ast.parse(path.read_text())
    assert ("backend.store.models", "Message") not in imported_names(tree), path
    assert not [s for s in strings(tree) if MESSAGE_SQL.search(s)], path


@pytest.mark.parametrize("path", SOCKETS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_socket_layer_touches_no_database(path):
    modules = {module for module, _ in imported_names(ast.parse(path.read_text()))}
    assert not {m for m in modules if m.startswith(("backend.store", "peewee", "sqlite3"))
                and m != "backend.store.db"}, path
    # short_connection / release_connection only hand connections back; nothing queries.
    assert "execute_sql" not in path.read_text() and ".select(" not in path.read_text(), path


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_engine_imports_no_model(path):
    assert imports_models(ast.parse(path.read_text())) == [], path


def test_the_checks_see_a_query():
    """The patterns above would catch the queries the engine used to make."""
    sample = ast.parse('from backend.store.models import Chat, Message as MessageRow\n'
                       'SQL = "SELECT id FROM message WHERE chat_id = ?"')
    assert ("backend.store.models", "Message") in imported_names(sample)
    assert any(MESSAGE_SQL.search(s) for s in strings(sample))


@pytest.mark.parametrize("source", [
    "from backend.store.models import Chat",
    "from backend.store.models import ModelEntry as M",
    "from backend.store import models",
    "from backend.store import history, models as m",
    "import backend.store.models",
    "import backend.store.models as models",
    "def f():\n    from backend.store.models import Setting",
    "if TYPE_CHECKING:\n    from backend.store.models import Chat",
])
def test_the_model_check_sees_every_import_form(source):
    assert imports_models(ast.parse(source))


def test_the_model_check_lets_the_store_modules_through():
    assert imports_models(ast.parse("from backend.store import chats, history\nimport backend.store.db")) == []
