"""The model catalog: providers and models, with catalog.toml as the person's source of truth.

The file is what a person edits; the SQLite tables `provider` and `model` are
the working copy the rest of Numi queries (joins, foreign keys). The two are
kept equal: at start-up and on every saved edit the file is loaded into the
tables (toml_file parses and checks it, sync applies it), and every change made
through the API is written back to the file (toml_file renders it, keeping the
person's comments and layout). service.CatalogService owns that loop;
watch.Watcher tells it when the file changed on disk.
"""
from backend.catalog.toml_file import DEFAULT_WIRE_API, KINDS, WIRE_APIS, CatalogError, default_wire_api

__all__ = ["CatalogError", "DEFAULT_WIRE_API", "KINDS", "WIRE_APIS", "default_wire_api"]
