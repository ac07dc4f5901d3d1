"""The prompt library (CONTRACT §12): the person's reusable prompts, each named by a `/command`.

The table is numi.db's (library.py), so backups hold it; the full export carries the prompts and
an import brings them back (transfer.py, called by the export and import routes). Routes:
routes.py. The message box's `/` list and the `{{variables}}` form are the web UI's
(web/js/prompts.js, web/app/views/prompts-*.js). There are no seed prompts.
"""
from __future__ import annotations

from backend.features.prompts import library, routes
from backend.turns.features import Feature

FEATURE = Feature(
    name="prompts",
    migrations=(("table", library.create_table),),
    routes=routes.register,
)
