"""Knowledge bases: the person's folders and files, read into an index on this machine (CONTRACT §8).

The bases' definitions are a table of numi.db (bases.py); what was read from their files is
the index file `<data dir>/knowledge/index.db` (index_db.py), kept by the feature's service
(service.py): it reads files in worker processes with time and memory limits (parse_pool.py,
readers.py, chunks.py) in the background. Routes: routes.py. Chats and folders name the bases they search
(links.py); the model searches them with `knowledge_search` (tool.py, turn.py).
"""
from __future__ import annotations

from backend.features.knowledge import bases, links, routes, section, tool, turn, viewer
from backend.features.knowledge.service import KnowledgeService
from backend.turns.features import Feature


def _routes(app) -> None:
    routes.register(app)  # the bases, their documents and queries
    viewer.register(app)  # a PDF page as an image, a file opened in the system's app


FEATURE = Feature(
    name="knowledge",
    migrations=(("bases", bases.create_table), ("links", links.create_table)),
    service=KnowledgeService,
    routes=_routes,
    fields=(links.FIELD,),
    tools=turn.offered,
    catalog=lambda: [tool.knowledge_tool()],
    system_text=turn.system_text,
    bind=turn.TurnKnowledge,
    settings=(section.SECTION,),
)
