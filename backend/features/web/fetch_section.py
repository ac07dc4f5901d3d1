"""The `web_fetch` section of /api/settings: the private origins every fetch may read without asking."""
from __future__ import annotations

import json

from backend.features.web import fetch_setting
from backend.fields import MISSING, Fields, nested
from backend.store.settings import Section


def _web_fetch(fields: Fields):
    """The `web_fetch` keys sent, or MISSING."""
    inner = nested(fields, fetch_setting.SETTING, fetch_setting.DEFAULTS,
                    'Must be an object like {"allow_private": ["http://127.0.0.1:8123", "http://wiki.lan"]}.')
    if inner is None:
        return MISSING
    values = inner.raw("allow_private", False, True)
    if values is MISSING:
        fields.errors.update(inner.errors)
        return MISSING
    if values is None:
        return {"allow_private": []}
    if not isinstance(values, list) or len(values) > fetch_setting.MAX_ORIGINS:
        inner.fail("allow_private", f"Must be a list of at most {fetch_setting.MAX_ORIGINS} origins, such as "
                                    f'["http://127.0.0.1:8123", "http://wiki.lan"].')
    else:
        origins, problems = [], []
        for i, value in enumerate(values, start=1):
            try:
                origins.append(fetch_setting.canonical_origin(value))
            except ValueError as exc:
                problems.append(f"item {i} ({json.dumps(value, ensure_ascii=False)[:200]}): {exc}")
        if problems:
            inner.fail("allow_private", " ".join(problems))
    fields.errors.update(inner.errors)
    if inner.errors:
        return MISSING
    return {"allow_private": list(dict.fromkeys(origins))}


SECTION = Section(fetch_setting.SETTING, fetch_setting.DEFAULTS, _web_fetch, merge=True,
                  current=fetch_setting.stored)
