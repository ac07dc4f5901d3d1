// Memory in the page (web/js/memory.js): the chips a turn's `memory_saved` leaves in the chat's
// state (pure, replay-safe, kept through history reads and later events) and the reply each goes
// under; what Undo does (delete, or put the old text back, or nothing it can do); the rules of
// Settings → Memory and of a chat's three-way "Use memory"; and memory sources (web/js/citations.js)
// named by their text and pointing into the app, never a link out.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { loadHistory } from "../../web/js/history-page.js";
import { shownSources, withCitedSources } from "../../web/js/citations.js";
import {
  EMPTY_SENTENCE, TEXT_MAX, chatHref, chipLabel, chipsByReply, followsSentence, isMemorySource, listPath,
  memoryChoice, memoryValue, sourceChat, textProblem, undoPlan, undoneSentence,
} from "../../web/js/memory.js";
import { deepFreeze } from "./freeze.mjs";

const E = "ep1";
const ev = (id, type, fields = {}) => deepFreeze({ type, event_id: id, turn_id: "t_1", epoch: E, ...fields });

/** A turn that asks for `remember`, saves, then answers: the events as the server sends them. */
function rememberTurn(saved = { memory_id: "mem_1", text: "Prefers metric units.", updated: false }) {
  return [
    ev(1, "accepted", { request_id: "r1", message_id: 1, queued: false, turn_id: null }),
    ev(2, "turn_start", { user_message_id: 1 }),
    ev(3, "tool_start", { message_id: 2, call_id: "c1", name: "remember", arguments: '{"text":"Prefers metric units."}' }),
    ev(4, "memory_saved", saved),
    ev(5, "tool_end", { call_id: "c1", name: "remember", ok: true, output: "Saved to memory (mem_1).", duration_ms: 3 }),
    ev(6, "message_saved", { message_id: 3, role: "tool" }),
    ev(7, "content", { message_id: 4, delta: "Noted." }),
    ev(8, "done", { message_id: 4 }),
    ev(9, "turn_end", { status: "completed", turn_id: "t_1" }),
  ];
}

function fold(events, state = deepFreeze(initialState("c"))) {
  return events.reduce((s, e) => deepFreeze(applyEvent(s, e)), state);
}

describe("memory_saved in the chat's state", () => {
  test("a chip for the memory, named by the turn's user message and the reply it came during", () => {
    const s = fold(rememberTurn());
    assert.equal(s.memorySaved.length, 1);
    assert.deepEqual(s.memorySaved[0], { turnId: "t_1", userMessageId: 1, messageId: 2, memoryId: "mem_1",
      text: "Prefers metric units.", updated: false, previousText: null });
  });

  test("replayed after a reconnect it changes nothing; later events and a history read keep it", () => {
    const events = rememberTurn();
    const once = fold(events);
    assert.equal(fold(events, once), once, "every event already applied: the very same state");
    const read = loadHistory(once, [
      { id: 1, role: "user", content: "Remember: metric.", status: "complete" },
      { id: 2, role: "assistant", content: "", status: "complete", tool_calls: [{ id: "c1", name: "remember", arguments: "{}" }] },
      { id: 4, role: "assistant", content: "Noted.", status: "complete" },
    ], false);
    assert.deepEqual(read.memorySaved, once.memorySaved);
    const next = fold([ev(10, "turn_start", { turn_id: "t_2", user_message_id: 5 }),
      ev(11, "turn_end", { turn_id: "t_2", status: "completed" })], deepFreeze(read));
    assert.deepEqual(next.memorySaved, once.memorySaved, "a later turn leaves the chip where it was");
  });

  test("an update carries the old text, so Undo can put it back", () => {
    const s = fold(rememberTurn({ memory_id: "mem_1", text: "Prefers metric units, always.", updated: true,
      previous_text: "Prefers metric units." }));
    assert.equal(s.memorySaved[0].updated, true);
    assert.equal(s.memorySaved[0].previousText, "Prefers metric units.");
  });

  test("the same memory saved twice in a turn is one chip; made in the turn, it stays 'saved'", () => {
    const again = ev(10, "memory_saved", { memory_id: "mem_1", text: "Prefers SI units.", updated: true,
      previous_text: "Prefers metric units." });
    const s = fold([...rememberTurn().slice(0, 5), again]);
    assert.equal(s.memorySaved.length, 1);
    assert.equal(s.memorySaved[0].text, "Prefers SI units.");
    assert.equal(s.memorySaved[0].updated, false, "Undo deletes a memory the turn made");
    assert.equal(undoPlan(s.memorySaved[0]).method, "DELETE");
  });

  test("a malformed event (no memory id) is ignored", () => {
    const s = fold(rememberTurn().slice(0, 3));
    assert.equal(applyEvent(s, ev(4, "memory_saved", { memory_id: "", text: "x", updated: false })).memorySaved, s.memorySaved);
  });

  test("a fresh chat state has no chips, and chats do not share the list", () => {
    const a = initialState("a");
    const b = initialState("b");
    assert.deepEqual(a.memorySaved, []);
    assert.notEqual(a.memorySaved, b.memorySaved);
  });
});

describe("chipsByReply", () => {
  const msgs = [
    { id: 1, role: "user" }, { id: 2, role: "assistant" }, { id: 3, role: "tool" }, { id: 4, role: "assistant" },
    { id: 5, role: "user" }, { id: 6, role: "assistant" },
  ];
  const chip = (fields) => ({ turnId: "t", memoryId: "m", text: "x", updated: false, previousText: null,
    userMessageId: null, messageId: null, ...fields });

  test("under the turn's last reply, past its tool steps, before the next question", () => {
    const c = chip({ userMessageId: 1, messageId: 2 });
    assert.deepEqual([...chipsByReply(msgs, [c])], [[4, [c]]]);
  });

  test("found from the user message when the reply it came during is not shown", () => {
    const c = chip({ userMessageId: 5, messageId: 99 });
    assert.deepEqual([...chipsByReply(msgs, [c])], [[6, [c]]]);
  });

  test("left out while its turn is not shown, or has no reply yet", () => {
    assert.equal(chipsByReply(msgs, [chip({ userMessageId: 42, messageId: 43 })]).size, 0);
    assert.equal(chipsByReply([{ id: 1, role: "user" }], [chip({ userMessageId: 1 })]).size, 0);
    assert.equal(chipsByReply([], [chip({ userMessageId: 1 })]).size, 0);
    assert.equal(chipsByReply(msgs, []).size, 0);
  });

  test("two memories of one turn go under the same reply, in order", () => {
    const a = chip({ memoryId: "a", userMessageId: 1 });
    const b = chip({ memoryId: "b", messageId: 4 });
    assert.deepEqual(chipsByReply(msgs, [a, b]).get(4), [a, b]);
  });
});

describe("the chip's words and its Undo", () => {
  test("saved: Undo deletes it", () => {
    const c = { memoryId: "mem/1", updated: false, previousText: null };
    assert.equal(chipLabel(c), "Memory saved");
    assert.deepEqual(undoPlan(c), { method: "DELETE", path: "/api/memories/mem%2F1" });
  });

  test("updated with its old text: Undo puts it back with a PATCH", () => {
    const c = { memoryId: "mem_1", updated: true, previousText: "Old fact." };
    assert.equal(chipLabel(c), "Memory updated");
    assert.deepEqual(undoPlan(c), { method: "PATCH", path: "/api/memories/mem_1", body: { text: "Old fact." } });
  });

  test("updated without its old text: no Undo (the chip opens Settings → Memory instead)", () => {
    assert.equal(undoPlan({ memoryId: "m", updated: true, previousText: null }), null);
    assert.equal(undoPlan({ memoryId: "m", updated: true, previousText: "  " }), null);
  });

  test("what the chip says once undone", () => {
    assert.equal(undoneSentence("removed"), "Memory removed.");
    assert.equal(undoneSentence("restored"), "Memory put back as it was.");
    assert.equal(undoneSentence("gone"), "That memory was already deleted.");
    assert.equal(undoneSentence("other"), "");
  });
});

describe("Settings → Memory", () => {
  test("a memory's text is 1–500 characters, said before the round trip", () => {
    assert.match(textProblem("   "), /empty memory cannot be saved/);
    assert.equal(textProblem("x".repeat(TEXT_MAX)), "");
    assert.match(textProblem("x".repeat(TEXT_MAX + 1)), /at most 500 characters \(this has 501\)/);
    assert.equal(textProblem("  Likes tea.  "), "");
  });

  test("search goes to the server as ?q=, encoded; no words lists all", () => {
    assert.equal(listPath(""), "/api/memories");
    assert.equal(listPath("   "), "/api/memories");
    assert.equal(listPath(" tea & cake "), "/api/memories?q=tea%20%26%20cake");
  });

  test("the source chat: a link into the app, 'deleted' after a 404, nothing for one added by hand", () => {
    const m = { source_chat_id: "c_1/x" };
    assert.deepEqual(sourceChat(m, { id: "c_1/x", title: " Trip " }), { kind: "chat", href: "#/c/c_1%2Fx", title: "Trip" });
    assert.deepEqual(sourceChat(m, { id: "c_1/x", title: null }), { kind: "chat", href: "#/c/c_1%2Fx", title: "a chat" });
    assert.deepEqual(sourceChat(m, undefined), { kind: "chat", href: "#/c/c_1%2Fx", title: "a chat" });
    assert.deepEqual(sourceChat(m, null), { kind: "deleted" });
    assert.deepEqual(sourceChat({ source_chat_id: null }, null), { kind: "none" });
    assert.equal(chatHref("abc"), "#/c/abc");
  });

  test("the empty list says how memories get saved", () => {
    assert.match(EMPTY_SENTENCE, /remember/);
    assert.match(EMPTY_SENTENCE, /asking you first/);
  });
});

describe("a chat's and a folder's Use memory", () => {
  test("three states for a chat, saved as null, true, false", () => {
    for (const [value, choice] of [[null, "folder"], [undefined, "folder"], [true, "on"], [false, "off"]]) {
      assert.equal(memoryChoice(value), choice);
    }
    assert.equal(memoryValue("folder"), null);
    assert.equal(memoryValue("on"), true);
    assert.equal(memoryValue("off"), false);
  });

  test("what following the folder means now", () => {
    assert.equal(followsSentence({ name: "Work", memory: false }), "Folder “Work” has memory off.");
    assert.equal(followsSentence({ name: "Work", memory: true }), "Folder “Work” has memory on.");
    assert.equal(followsSentence(null), "Not in a folder: memory is on.");
    assert.match(followsSentence({ name: "Work", memory: true }, false), /off in Settings/);
  });
});

describe("memory sources under a reply", () => {
  const items = [
    { n: 1, kind: "memory", memory_id: "mem_1", title: "Prefers metric…", snippet: "Prefers metric units. <b>x</b>" },
    { n: 2, kind: "web", title: "Page", url: "https://example.org/a", snippet: "s" },
    { n: 3, kind: "memory", memory_id: "mem_2", title: "javascript:alert(1)", url: "javascript:alert(1)", snippet: "" },
  ];

  test("named by their whole text, with their id, and no link out", () => {
    const [mem, web, odd] = shownSources(items);
    assert.equal(mem.memory, "mem_1");
    assert.equal(mem.title, "Prefers metric units. <b>x</b>", "the text as it stands: the view sets it as text");
    assert.equal(mem.url, null);
    assert.equal(mem.snippet, "");
    assert.equal(web.memory, undefined);
    assert.equal(web.url, "https://example.org/a");
    assert.equal(odd.url, null, "no address of a memory becomes a link");
    assert.equal(odd.title, "javascript:alert(1)");
    assert.ok(isMemorySource(items[0]) && !isMemorySource(items[1]) && !isMemorySource({ kind: "memory" }));
  });

  test("a copied reply names the memory it cites", () => {
    assert.equal(withCitedSources("Metric, as you like [1].", items),
      "Metric, as you like [1].\n\nSources:\n[1] Prefers metric units. <b>x</b>\n");
  });
});
