"""A large, realistic-looking history written straight into a data dir's numi.db.

Default: 1 000 000 messages in 10 000 chats, one of them holding 10 000 messages
(the "huge chat"); NUMI_BENCH_HISTORY_MESSAGES scales it (chats = messages / 100).
A few chats are deleted, temporary, archived or in folders, so what search must
skip is there too. Text is drawn from a Zipf-weighted vocabulary (common English
words first, then a long tail of made-up technical words, a few accented ones,
code), so the index has realistic posting lists: some words in most messages,
most words in few.

Rows are written with the app's own migrations up to schema 3 and executemany in
big transactions (synchronous=OFF: a crash only loses a cache), then the later
migrations run as they would on a person's upgrade, so the search migration's
backfill is timed too. The result is cached under test-artifacts/cache/, keyed by
GENERATOR_VERSION, the size and the migrations' source: repeated runs reuse it.

    python -m tests.bench.history_gen [messages]   # build (or find) the cache, print its path
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import sys
import time
from pathlib import Path

GENERATOR_VERSION = 1
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "test-artifacts" / "cache"
SEED = 20261129
T0 = 1_700_000_000.0  # the oldest chat (Nov 2023); the history spans about two years
SPAN_S = 2 * 365 * 86400
BATCH = 50_000

COMMON = """the of and to a in is you that it for on with as this be are can or not your if have by
at from an but will use one all which when there we so more what do how about would should may
also need then just like its into each some than other only new time make any first these way
get see work same data file code set value example function type want because here well now
call run change case return error list name text user output check version line system without
between after before first second number first while still where both most over note using
value order result page part read make back both good long find things thing help sure idea
question answer true false write test build start point look simple small large model time""".split()

TECH = """python javascript rust golang typescript sqlite postgres docker kubernetes linux debian
nginx redis kafka react vue svelte flask django fastapi websocket http json yaml toml regex
decorator generator iterator closure coroutine async await thread mutex deadlock latency
throughput cache index query schema migration transaction rollback commit branch rebase merge
compiler linker runtime garbage allocator pointer reference borrow lifetime trait interface
tensor gradient embedding transformer attention tokenizer inference quantization benchmark
deployment pipeline container cluster replica shard partition backup restore encryption
certificate firewall router subnet protocol packet socket stream buffer parser lexer grammar
recipe sourdough espresso garden tomato marathon guitar chess novel poem vacation budget
mortgage invoice spreadsheet presentation meeting interview resume salary""".split()

ACCENTED = """café naïve résumé façade jalapeño crème brûlée déjà über smörgåsbord piñata coöperate
señor München Zürich São Paulo Kraków""".split()

SYLLABLES = ("ka ri to mu ne so la vi de po zu ga be ti ro fa ni ke lo ma xu qe sa di "
             "por tan vel mor sil dra gen quo lin tek bor").split()

CODE = [
    "```python\ndef {w}(items):\n    return [x for x in items if x]\n```",
    "```js\nconst {w} = async (url) => (await fetch(url)).json();\n```",
    "```sql\nSELECT {w}, count(*) FROM events GROUP BY 1 ORDER BY 2 DESC;\n```",
    "```bash\ndocker run --rm -it {w}:latest\n```",
]


def vocabulary(rng: random.Random, tail: int = 20_000) -> tuple[list[str], list[float]]:
    words = list(dict.fromkeys(COMMON + TECH + ACCENTED))
    seen = set(words)
    while len(words) < len(COMMON) + len(TECH) + tail:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    # Zipf's law: the word at rank r is about 1/r as frequent as the most common.
    weights, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank
        weights.append(total)
    return words, weights


class Writer:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.words, self.cum = vocabulary(rng)

    def sentence(self, lo: int, hi: int) -> str:
        ws = self.rng.choices(self.words, cum_weights=self.cum, k=self.rng.randint(lo, hi))
        return ws[0].capitalize() + " " + " ".join(ws[1:]) + self.rng.choice(".....?!")

    def user(self) -> str:
        return " ".join(self.sentence(4, 16) for _ in range(self.rng.randint(1, 3)))

    def assistant(self) -> str:
        rng = self.rng
        parts = [" ".join(self.sentence(6, 20) for _ in range(rng.randint(2, 4)))]
        if rng.random() < 0.3:
            parts.append("\n".join(f"- {self.sentence(3, 9)}" for _ in range(rng.randint(2, 5))))
        if rng.random() < 0.15:
            parts.append(rng.choice(CODE).format(w=rng.choice(self.words[:2000])))
        if rng.random() < 0.6:
            parts.append(" ".join(self.sentence(5, 15) for _ in range(rng.randint(1, 4))))
        return "\n\n".join(parts)


def cache_key(messages: int) -> str:
    migrations = (ROOT / "backend" / "store" / "migrations.py").read_bytes()
    digest = hashlib.sha256(migrations + Path(__file__).read_bytes()).hexdigest()[:12]
    return f"history-v{GENERATOR_VERSION}-{messages}-{digest}"


def default_messages() -> int:
    return int(os.environ.get("NUMI_BENCH_HISTORY_MESSAGES", "1000000"))


def cached(messages: int | None = None, log=print) -> Path:
    """The folder holding numi.db and meta.json for this size, built if missing."""
    messages = messages or default_messages()
    folder = CACHE / cache_key(messages)
    if (folder / "meta.json").exists():
        return folder
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.glob(f"history-v*-{messages}-*"):
        shutil.rmtree(old, ignore_errors=True)  # an older generator or schema: never read again
    building = CACHE / (folder.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir()
    log(f"history: building {messages:,} messages into {folder} (once; later runs reuse it)")
    meta = build(building / "numi.db", messages, log=log)
    (building / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    building.rename(folder)
    return folder


def build(path: Path, messages: int, log=print) -> dict:
    from peewee import SqliteDatabase

    from backend.store.migrations import migrate

    rng = random.Random(SEED)
    writer = Writer(rng)
    n_chats = max(10, messages // 100)
    huge = min(10_000, messages // 4)
    # The huge chat first, then the rest share what is left (at least 2 messages each).
    rest = messages - huge
    sizes = [huge] + [rest // (n_chats - 1)] * (n_chats - 1)
    sizes[-1] += rest - sum(sizes[1:])
    started = time.monotonic()

    db = SqliteDatabase(str(path))
    with db.connection_context():
        migrate(db, target=3)

    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA synchronous = OFF")
    con.execute("PRAGMA journal_mode = MEMORY")
    folders = [(f"f_bench{i:03d}", f"Folder {i}", T0) for i in range(20)]
    con.execute("BEGIN")
    con.executemany("INSERT INTO folder (id, name, created_at) VALUES (?, ?, ?)", folders)
    chats, rows = [], []
    msg_id = 0
    special = {"deleted": [], "temporary": [], "archived": []}
    for k, size in enumerate(sizes):
        chat_id = f"c_bench{k:06d}"
        t = T0 + SPAN_S * k / n_chats
        kind = "huge" if k == 0 else ("deleted" if k % 97 == 1 else "temporary" if k % 193 == 2
                                      else "archived" if k % 19 == 3 else "")
        if kind in special:
            special[kind].append(chat_id)
        folder = folders[k % 20][0] if k % 3 == 0 else None
        for i in range(size):
            msg_id += 1
            role = "user" if i % 2 == 0 else "assistant"
            text = writer.user() if role == "user" else writer.assistant()
            rows.append((msg_id, chat_id, role, text, t + i * 30.0))
        title = writer.sentence(2, 5).rstrip(".?!")
        last = t + max(0, size - 1) * 30.0
        chats.append((chat_id, title, folder, int(kind == "archived"), int(kind == "temporary"), t, last,
                      last + 60 if kind == "deleted" else None))
        if len(rows) >= BATCH:
            _flush(con, chats, rows)
            if k % 200 == 0:
                log(f"history: {msg_id:,} messages, {time.monotonic() - started:.0f} s")
    _flush(con, chats, rows)
    con.execute("COMMIT")
    con.close()
    written = time.monotonic() - started

    t = time.monotonic()
    with db.connection_context():
        migrate(db)  # schema 4's backfill indexes every row written above
    indexed = time.monotonic() - t
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")  # as the app keeps it
    con.close()
    log(f"history: written in {written:.0f} s, indexed (migration backfill) in {indexed:.0f} s")
    return {"generator_version": GENERATOR_VERSION, "messages": messages, "chats": n_chats,
            "huge_chat_id": "c_bench000000", "huge_chat_messages": huge, **special,
            "write_seconds": written, "migrate_seconds": indexed,
            "db_bytes": path.stat().st_size}


def _flush(con, chats: list, rows: list) -> None:
    con.executemany("INSERT INTO chat (id, title, folder_id, archived, temporary, created_at, updated_at, "
                    "deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", chats)
    con.executemany("INSERT INTO message (id, chat_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)", rows)
    chats.clear()
    rows.clear()


if __name__ == "__main__":  # pragma: no cover
    print(cached(int(sys.argv[1]) if len(sys.argv) > 1 else None))
