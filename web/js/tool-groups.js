// What the tools switches do to a chat's or folder's `tools_off` list (CONTRACT §15), and the
// words beside them. A view is a GET …/tools answer: `groups` (built-in, then each MCP server)
// with their tools, and the list that applies. Switching works on names: a tool's own name,
// or `mcp__<server>__*` for a whole server. Names the view does not know (a server not
// listed since) are kept as they are.
import { formatTokens } from "./context-meter.js";

/** "~1.2k tokens": what a group or a tool costs in every request while it is on. */
export function formatCost(n) {
  const t = Math.max(0, Math.round(Number(n) || 0));
  return `~${formatTokens(t)} token${t === 1 ? "" : "s"}`;
}

/** The list a change starts from: the own list, else the one that applies (the folder's). */
export function baseList(view) {
  return [...(view?.tools_off ?? view?.effective ?? view?.inherited ?? [])];
}

const denied = (tool) => tool.off_by === "policy";

/** True when `list` turns `tool` (of `group`) off, by its name or its server's pattern. */
export function listTurnsOff(list, group, tool) {
  return list.includes(tool.name) || (!!group.pattern && list.includes(group.pattern));
}

/** The view's groups as `list` would make them: `on` and `off_by` of every tool and group (`by`: "chat" | "folder"). */
export function applyList(groups, list, by) {
  return groups.map((g) => {
    const tools = g.tools.map((t) => {
      if (denied(t)) return { ...t, on: false };
      const off = listTurnsOff(list, g, t);
      return { ...t, on: !off, off_by: off ? by : null };
    });
    return { ...g, tools, on: groupOn({ ...g, tools }, list) };
  });
}

/** A server group is on unless its pattern is listed; the built-in group while any of its tools is on. */
export function groupOn(group, list) {
  if (group.pattern) return !list.includes(group.pattern);
  return group.tools.some((t) => t.on && !denied(t));
}

const without = (list, names) => list.filter((n) => !names.includes(n));
const withAdded = (list, names) => [...list, ...names.filter((n) => !list.includes(n))];

/** The new list after switching one tool of `group` on or off. */
export function switchTool(list, group, name, on) {
  if (!on) return withAdded(list, [name]);
  if (group.pattern && list.includes(group.pattern)) {
    // The server was off as a whole: it comes back with only this tool on, the rest named off.
    const others = group.tools.filter((t) => t.name !== name && !denied(t)).map((t) => t.name);
    return withAdded(without(list, [group.pattern, name]), others);
  }
  return without(list, [name]);
}

/** The new list after switching a whole group on (its pattern and its tools' names leave) or off. */
export function switchGroup(list, group, on) {
  const names = group.tools.map((t) => t.name);
  if (on) return without(list, [...names, ...(group.pattern ? [group.pattern] : [])]);
  // A server goes off by its pattern (its tools added later are off too); built-in by each name.
  if (group.pattern) return withAdded(without(list, names), [group.pattern]);
  return withAdded(list, group.tools.filter((t) => !denied(t)).map((t) => t.name));
}

/** A tool's name as shown in its group: an MCP tool without its `mcp__<server>__` prefix. */
export function shortName(group, tool) {
  const prefix = group.server ? `mcp__${group.server}__` : "";
  return prefix && tool.name.startsWith(prefix) ? tool.name.slice(prefix.length) : tool.name;
}

/** Why a tool is off, for its hint; "" when it is on. `folderName`: the folder whose list turned it off. */
export function offReason(tool, { folderName = "" } = {}) {
  if (tool.on) return "";
  if (tool.off_by === "policy") return "Denied in Settings → Tools & approvals";
  if (tool.off_by === "folder") return folderName ? `Off in folder ${folderName}` : "Off in the folder";
  return "Off";
}

/** How many of the view's tools are off (for the button's hint); policy-denied ones count. */
export function offCount(groups) {
  return groups.reduce((n, g) => n + g.tools.filter((t) => !t.on).length, 0);
}

/**
 * The one line on what applies on top of the switches: a model that calls no tools, or a
 * mode that holds some back (Plan). "" when nothing does.
 */
export function onTopSentence({ model = null, mode = "ask" } = {}) {
  if (model && !model.supports?.tools) {
    return `${model.label || model.api_model || "This model"} has tools off, so none of these reach it.`;
  }
  if (mode === "plan") return "Plan mode offers only the tools that change nothing.";
  return "";
}
