"""A feature outside Numi's own packages that adds sections to /api/settings, loaded into the
server through NUMI_TOOL_PLUGINS: nothing in backend/api/settings.py names it."""
from backend.api.validate import MISSING, Fields
from backend.store import settings

NAME, PLAIN = "example", "example_plain"
DEFAULTS = {"level": 1, "tags": []}
EXAMPLE = 'Must be an object like {"level": 3, "tags": ["a"]}.'


def _example(fields: Fields):
    body = fields.raw(NAME, False, False)
    if body is MISSING:
        return MISSING
    if not isinstance(body, dict):
        return fields.fail(NAME, EXAMPLE)
    inner = Fields(body, allowed=DEFAULTS, prefix=NAME + ".")
    values = {"level": inner.number("level", 1, 5, integer=True)}
    tags = inner.raw("tags", False, False)
    if tags is not MISSING and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        tags = inner.fail("tags", "Must be a list of strings.")
    values["tags"] = tags
    fields.errors.update(inner.errors)
    return MISSING if inner.errors else {k: v for k, v in values.items() if v is not MISSING}


settings.register(settings.Section(NAME, DEFAULTS, _example, merge=True,
                                   current=lambda: {**DEFAULTS, **settings.get_object(NAME)}))
settings.register(settings.Section(PLAIN, "off", lambda fields: fields.choice(PLAIN, ("off", "on"))))


def register(registry):
    """No tools: importing the module registered its sections."""
