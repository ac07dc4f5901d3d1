"""URL rules that build their URL-building code on first use, not at start-up."""
from __future__ import annotations

from werkzeug.routing import Rule


class LazyBuildRule(Rule):
    """A werkzeug Rule whose two URL builders are compiled when a URL is first built.

    Werkzeug generates and compiles Python code for every route's builders as the route is
    added: most of the app's route set-up, about a tenth of a second of a server's start.
    Numi matches requests and never builds a URL from a route, so that code is made on
    demand; matching is untouched.
    """

    def _compile_builder(self, append_unknown: bool = True):
        attr = "_build_unknown" if append_unknown else "_build"

        def build(rule: LazyBuildRule, *args, **kwargs):
            real = Rule._compile_builder(rule, append_unknown).__get__(rule, None)
            setattr(rule, attr, real)  # later builds call the compiled code directly
            return real(*args, **kwargs)

        return build
