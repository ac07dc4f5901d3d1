// The tools switches' lists and words (web/js/tool-groups.js) over GET …/tools views
// (CONTRACT §15): switching a tool or a whole MCP server, the cost shown, why a tool is off.
// Run: node --test tests/js/tool-groups.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  applyList, baseList, formatCost, groupOn, listTurnsOff, offCount, offReason, onTopSentence, shortName, switchGroup,
  switchTool,
} from "../../web/js/tool-groups.js";

const tool = (name, fields = {}) => ({ name, description: `${name} does a thing`, on: true, off_by: null, tokens: 100, ...fields });

const builtin = {
  id: "builtin", label: "Built-in", server: null, pattern: null, on: true, tokens: 300,
  tools: [tool("web_search"), tool("web_fetch"), tool("shell", { on: false, off_by: "policy" })],
};
const files = {
  id: "mcp:files", label: "files", server: "files", pattern: "mcp__files__*", on: true, tokens: 900,
  tools: [tool("mcp__files__read"), tool("mcp__files__write"), tool("mcp__files__list")],
};
const view = (fields = {}) => ({ tools_off: null, inherited: null, effective: [], groups: [builtin, files], ...fields });

test("a cost in a few characters, as the meter writes tokens", () => {
  assert.equal(formatCost(0), "~0 tokens");
  assert.equal(formatCost(1), "~1 token");
  assert.equal(formatCost(950), "~950 tokens");
  assert.equal(formatCost(1234), "~1.2k tokens");
  assert.equal(formatCost(12_400), "~12.4k tokens");
  assert.equal(formatCost(undefined), "~0 tokens");
});

test("a change starts from the own list, else the folder's that applies", () => {
  assert.deepEqual(baseList(view({ tools_off: ["web_fetch"], inherited: ["shell"], effective: ["web_fetch"] })), ["web_fetch"]);
  assert.deepEqual(baseList(view({ inherited: ["mcp__files__*"], effective: ["mcp__files__*"] })), ["mcp__files__*"]);
  assert.deepEqual(baseList(view({ tools_off: [] , inherited: ["web_fetch"], effective: [] })), []);
  assert.deepEqual(baseList(view()), []);
  const own = ["web_fetch"];
  const v = view({ tools_off: own, effective: own });
  baseList(v).push("x");
  assert.deepEqual(v.tools_off, ["web_fetch"], "the view's list is not changed in place");
});

test("switching one tool off adds its name once; on removes it; unknown names stay", () => {
  let list = switchTool(["gone_server_tool"], builtin, "web_fetch", false);
  assert.deepEqual(list, ["gone_server_tool", "web_fetch"]);
  assert.deepEqual(switchTool(list, builtin, "web_fetch", false), list);
  list = switchTool(list, builtin, "web_fetch", true);
  assert.deepEqual(list, ["gone_server_tool"]);
});

test("a server off is its pattern; on again removes the pattern and its tools' names", () => {
  let list = switchTool([], files, "mcp__files__write", false);
  list = switchGroup(list, files, false);
  assert.deepEqual(list, ["mcp__files__*"], "its single names give way to the pattern");
  list = switchGroup(["web_fetch", ...list, "mcp__files__read"], files, true);
  assert.deepEqual(list, ["web_fetch"]);
});

test("one tool on in a server that is off: the server comes back with the others named off", () => {
  const list = switchTool(["web_fetch", "mcp__files__*"], files, "mcp__files__list", true);
  assert.deepEqual(list, ["web_fetch", "mcp__files__read", "mcp__files__write"]);
});

test("the built-in group goes off name by name, leaving out what policy denies", () => {
  assert.deepEqual(switchGroup([], builtin, false), ["web_search", "web_fetch"]);
  assert.deepEqual(switchGroup(["web_search", "web_fetch", "mcp__files__*"], builtin, true), ["mcp__files__*"]);
});

test("a list drawn: tools and groups on or off, by whom, and policy kept", () => {
  const groups = applyList([builtin, files], ["web_search", "mcp__files__*"], "chat");
  const [b, f] = groups;
  assert.deepEqual(b.tools.map((t) => [t.name, t.on, t.off_by]),
    [["web_search", false, "chat"], ["web_fetch", true, null], ["shell", false, "policy"]]);
  assert.equal(b.on, true, "the built-in group is on while one of its tools is");
  assert.equal(f.on, false);
  assert.ok(f.tools.every((t) => !t.on && t.off_by === "chat"));
  assert.equal(offCount(groups), 5);
  const all = applyList([builtin], ["web_search", "web_fetch"], "folder");
  assert.equal(all[0].on, false, "only denied tools left: the group is off");
  assert.equal(all[0].tools[0].off_by, "folder");
  assert.equal(builtin.tools[0].on, true, "the view is not changed in place");
});

test("a tool is off by its name or its server's pattern", () => {
  assert.equal(listTurnsOff(["mcp__files__*"], files, files.tools[0]), true);
  assert.equal(listTurnsOff(["mcp__files__read"], files, files.tools[1]), false);
  assert.equal(listTurnsOff(["*"], builtin, builtin.tools[0]), false, "no pattern for built-in tools");
  assert.equal(groupOn(files, ["mcp__other__*"]), true);
});

test("an MCP tool shows without its server prefix", () => {
  assert.equal(shortName(files, files.tools[0]), "read");
  assert.equal(shortName(builtin, builtin.tools[0]), "web_search");
  assert.equal(shortName(files, tool("odd_name")), "odd_name");
});

test("why a tool is off", () => {
  assert.equal(offReason(tool("a")), "");
  assert.equal(offReason(tool("a", { on: false, off_by: "policy" })), "Denied in Settings → Tools & approvals");
  assert.equal(offReason(tool("a", { on: false, off_by: "folder" }), { folderName: "“Trip”" }), "Off in folder “Trip”");
  assert.equal(offReason(tool("a", { on: false, off_by: "folder" })), "Off in the folder");
  assert.equal(offReason(tool("a", { on: false, off_by: "chat" })), "Off");
});

test("one line on what applies on top: the model's tools off first, then Plan mode", () => {
  const noTools = { label: "Tiny", supports: { tools: false } };
  assert.equal(onTopSentence({ model: noTools, mode: "plan" }), "Tiny has tools off, so none of these reach it.");
  assert.equal(onTopSentence({ model: { label: "Big", supports: { tools: true } }, mode: "plan" }),
    "Plan mode offers only the tools that change nothing.");
  assert.equal(onTopSentence({ model: { api_model: "m", supports: { tools: true } }, mode: "edit" }), "");
  assert.equal(onTopSentence(), "");
});
