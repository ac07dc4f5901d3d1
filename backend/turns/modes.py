"""A chat's mode (CONTRACT §7): which tools its turns are offered, which run without asking,
and what the model is told.

`ask` keeps every tool's own default; `plan` offers only tools that change nothing (plus
`update_plan`) and asks the model for a plan; `edit` lets workspace file changes run
without asking; `auto` also runs the shell without asking while it is confined to the
workspace. A mode changes only a tool's own default: a policy the person set (per chat
or for every chat) wins, so a tool set to `deny` stays denied, and the tools themselves
refuse paths outside the workspace whatever the mode.
"""
from __future__ import annotations

MODES = ("ask", "plan", "edit", "auto")
DEFAULT = "ask"
UPDATE_PLAN = "update_plan"
# Workspace file changes, which edit and auto run without asking.
FILE_CHANGES = frozenset({"write_file", "edit_file", "doc_edit"})
SHELL = "shell"

PLAN_NOTE = ("You are in plan mode: you may read and look things up, but nothing can be changed. "
             "Work out what should be done and propose it as a plan with the update_plan tool (short, "
             "concrete steps, each \"pending\"), then stop: the person reviews the plan and may execute it. "
             "Do not say you changed anything.")
PLAN_NOTE_NO_TOOLS = ("You are in plan mode: nothing can be changed. Propose what should be done as a short "
                      "numbered plan, then stop: the person reviews it.")
EXECUTING_NOTE = ("You are carrying out a plan you proposed. Keep it current with update_plan as you work: "
                  "mark a step \"active\" when you start it and \"done\" when it is finished.")


def valid(mode) -> bool:
    return mode in MODES


def offered(tools: list, mode: str, plan_open: bool) -> list:
    """The tools a chat in `mode` is offered: in plan mode only those that change nothing.

    `update_plan` goes along only in plan mode or while a plan is being executed
    (`plan_open`); any other tool the list holds under that name is the one offered.
    """
    keep_plan = mode == "plan" or plan_open
    return [t for t in tools
            if (t.name == UPDATE_PLAN and keep_plan)
            or (t.name != UPDATE_PLAN and (mode != "plan" or t.read_only))]


# How a held-back tool's result starts (the window matches it: web/app/views/tool-call.js).
NOT_OFFERED = "Not offered in {label} mode."


def withheld(tools: list, mode: str, plan_open: bool) -> dict[str, str]:
    """The tools `offered` leaves out, by name: the result a call to one gets, for the model."""
    kept = {t.name for t in offered(tools, mode, plan_open)}
    label = mode.capitalize()
    out = {}
    for t in tools:
        if t.name in kept:
            continue
        if t.name == UPDATE_PLAN:
            why = "update_plan is offered in Plan mode and while a plan is being carried out."
        elif mode == "plan":
            why = (f"{t.name} changes things, and in Plan mode nothing may be changed. Put the change in "
                   f"your plan instead (update_plan); it runs once the person executes the plan.")
        else:
            why = f"{t.name} is not offered in this mode."
        out[t.name] = f"{NOT_OFFERED.format(label=label)} {why}"
    return out


def own_policy(mode: str, tool: str, needs_approval: bool, shell_network) -> str:
    """A tool's own default in `mode` (`ask` or `allow`), used where the person set no policy.

    The shell runs unasked in auto only while it reaches nothing outside the workspace:
    with the network turned on for commands it asks, as it does wherever no sandbox can
    confine it (backend/turns/approvals.py turns such an `allow` into `ask`).
    `shell_network()` says whether commands may use the network.
    """
    if mode in ("edit", "auto") and tool in FILE_CHANGES:
        return "allow"
    if mode == "auto" and tool == SHELL and not shell_network():
        return "allow"
    return "ask" if needs_approval else "allow"


def system_note(mode: str, tool_names, executing: bool) -> str:
    """What the system text says about the mode (empty for none), by what the turn is offered."""
    names = set(tool_names)
    if mode == "plan":
        return PLAN_NOTE if UPDATE_PLAN in names else PLAN_NOTE_NO_TOOLS
    if executing and UPDATE_PLAN in names:
        return EXECUTING_NOTE
    return ""
