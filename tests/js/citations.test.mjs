// A reply's sources and its [n] markers (web/js/citations.js), and the reducer's `sources`
// case (web/js/reducer.js): markers found only where a source answers them, site names
// from addresses, only http(s) links, sources adding up per turn and moving to the
// turn's last reply (also after a resume), and coming back from a history page; the web
// search settings in words (web/js/web-search.js).
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { MAY_CITE, markerLabel, markerParts, shownSources, siteOf, webUrl, withCitedSources } from "../../web/js/citations.js";
import { applyEvent, initialState } from "../../web/js/reducer.js";
import { loadHistory } from "../../web/js/history-page.js";
import { localSend } from "../../web/js/turn-events.js";
import { BACKENDS, backendInfo, searchState } from "../../web/js/web-search.js";
import { deepFreeze } from "./freeze.mjs";

const known = (...ns) => (n) => ns.includes(n);

describe("markerParts", () => {
  test("[n] naming a source becomes a marker, the text around it stays", () => {
    assert.deepEqual(markerParts("Paris is the capital [1], says [2].", known(1, 2)),
      ["Paris is the capital ", 1, ", says ", 2, "."]);
  });

  test("adjacent markers are each a marker; one at either end leaves no empty text", () => {
    assert.deepEqual(markerParts("[1][2] and [3]", known(1, 2, 3)), [1, 2, " and ", 3]);
  });

  test("[n] with no source n stays text", () => {
    assert.deepEqual(markerParts("see [1] and [7]", known(1)), ["see ", 1, " and [7]"]);
    assert.deepEqual(markerParts("see [7]", known(1)), ["see [7]"]);
  });

  test("only [n] with a whole number from 1: not [0], [01], [1, 2], [a] or [1234]", () => {
    const all = () => true;
    for (const text of ["[0]", "[01]", "[1, 2]", "[a]", "[1234]", "[ 1]", "[1 ]", "1]", "[1"]) {
      assert.deepEqual(markerParts(text, all), [text], text);
    }
    assert.deepEqual(markerParts("[999]", all), [999]);
  });

  test("MAY_CITE is the cheap test for the same markers", () => {
    assert.ok(MAY_CITE.test("a [3] b"));
    assert.ok(!MAY_CITE.test("a [0] b [x] [1, 2]"));
  });
});

describe("addresses", () => {
  test("the site is the host without www.", () => {
    assert.equal(siteOf("https://www.example.org/a/b?c=1"), "example.org");
    assert.equal(siteOf("http://docs.python.org:8080/3/"), "docs.python.org");
    assert.equal(siteOf("HTTPS://WWW.Example.COM"), "example.com");
  });

  test("only http(s) addresses are links; anything else is no site", () => {
    for (const bad of ["javascript:alert(1)", " javascript:alert(1)", "data:text/html,<b>", "file:///etc/passwd",
      "/api/files/1", "//evil.example/x", "", null, undefined, 42, "https://"]) {
      assert.equal(webUrl(bad), null, String(bad));
      assert.equal(siteOf(bad), "", String(bad));
    }
    assert.equal(webUrl(" https://example.org/x "), "https://example.org/x");
  });
});

describe("shownSources", () => {
  test("one per n, by n, strings only, a title from the site when it has none", () => {
    const shown = shownSources([
      { n: 2, title: "", url: "https://www.b.example/page", snippet: "  two  " },
      { n: 1, title: "One", url: "javascript:alert(1)", snippet: null, locator: "p. 3" },
      { n: 2, title: "Two", url: "https://b.example/page", snippet: "two again" },
      { n: 0, title: "zero" }, { n: "x" }, null,
      { n: 3, title: { toString: () => "<b>obj</b>" }, file_id: "f1" },
    ]);
    assert.deepEqual(shown, [
      { n: 1, title: "One", url: null, site: "", snippet: "" },
      { n: 2, title: "Two", url: "https://b.example/page", site: "b.example", snippet: "two again" },
      { n: 3, title: "<b>obj</b>", url: null, site: "", snippet: "" },
    ]);
    assert.equal(shownSources([{ n: 4, url: "https://www.c.example/" }])[0].title, "c.example");
    assert.equal(shownSources([{ n: 5 }])[0].title, "Source 5");
    assert.deepEqual(shownSources(null), []);
    assert.deepEqual(shownSources("nope"), []);
  });

  test("a marker's label names the number, title and site", () => {
    assert.equal(markerLabel({ n: 2, title: "Two", site: "b.example" }), "Source 2: Two (b.example)");
    assert.equal(markerLabel({ n: 2, title: "b.example", site: "b.example" }), "Source 2: b.example");
    assert.equal(markerLabel({ n: 3, title: "Notes", site: "" }), "Source 3: Notes");
  });
});

describe("the reducer's sources", () => {
  const EPOCH = "e1";
  let ids = 0;
  const ev = (type, fields) => ({ type, event_id: ++ids, turn_id: "t1", epoch: EPOCH, ...fields });
  const web = (...items) => ev("sources", { kind: "web", items });
  const S1 = { n: 1, title: "One", url: "https://a.example/1", snippet: "first" };
  const S2 = { n: 2, title: "Two", url: "https://b.example/2", snippet: "second" };
  const numbers = (m) => (m?.sources || []).map((s) => s.n);

  function run(events, state = initialState("c1")) {
    for (const e of events) state = applyEvent(deepFreeze(state), e);
    return state;
  }

  test("sources add up, one per n, on the reply the turn writes, and move on to its next reply", () => {
    ids = 0;
    const searching = [
      ev("turn_start", { user_message_id: 1 }),
      ev("tool_preparing", { message_id: 2, call_id: "c1", name: "web_search" }),
      ev("tool_start", { message_id: 2, call_id: "c1", name: "web_search", arguments: "{}" }),
      web(S1), web(S1, S2),
    ];
    const state = run(searching);
    const step = state.messages.find((m) => m.id === 2);
    assert.deepEqual(numbers(step), [1, 2]);
    assert.deepEqual(step.sources.map((s) => s.title), ["One", "Two"]);
    const after = run([ev("tool_end", { call_id: "c1", ok: true, output: "…" }),
                       ev("content", { message_id: 4, delta: "Paris [1] [2]." })], state);
    assert.deepEqual(numbers(after.messages.find((m) => m.id === 2)), []);
    assert.deepEqual(numbers(after.messages.find((m) => m.id === 4)), [1, 2]);
  });

  test("a resumed turn (its snapshot) still hands its sources on to its next reply", () => {
    ids = 0;
    const state = run([
      ev("turn_start", { user_message_id: 1 }),
      ev("tool_start", { message_id: 2, call_id: "c1", name: "web_search", arguments: "{}" }),
      web(S1, S2),
      ev("tool_end", { call_id: "c1", ok: true, output: "…" }),
    ]);
    const resumed = run([{ type: "snapshot", event_id: ids, last_event_id: ids, epoch: EPOCH, turn_id: "t1",
                           message_id: 2, status: "streaming", content: "", reasoning: "", tool_calls: [] },
                         ev("content", { message_id: 4, delta: "Paris [1]." })], state);
    assert.deepEqual(numbers(resumed.messages.find((m) => m.id === 4)), [1, 2]);
  });

  test("a snapshot brings the sources and research progress a socket missed", () => {
    ids = 0;
    const state = run([ev("turn_start", { user_message_id: 1 })]);
    const snap = { type: "snapshot", event_id: 9, last_event_id: 9, epoch: EPOCH, turn_id: "t1", message_id: 4,
                   status: "streaming", content: "Paris [1]", reasoning: "", tool_calls: [],
                   sources: [{ ...S2, kind: "web" }, { ...S1, kind: "web" }],
                   research: { phase: "writing", searches: 2, found: 5, read: 3, query: "q" } };
    const next = applyEvent(state, snap);
    assert.deepEqual(numbers(next.messages.find((m) => m.id === 4)), [1, 2]);
    assert.deepEqual(next.turn.sources.map((s) => s.n), [1, 2]);
    assert.equal(next.research.phase, "writing");
    assert.equal(next.research.read, 3);
    assert.equal(next.research.turnId, "t1");
  });

  test("a research question is marked from its sending on, and in the history read again", () => {
    let state = localSend(initialState("c1"), "r1", "What is Numi?", [], { research: true });
    state = applyEvent(state, { type: "accepted", event_id: 1, epoch: EPOCH, turn_id: null, request_id: "r1",
                                message_id: 1, queued: false });
    assert.equal(state.messages.find((m) => m.id === 1).research, true);
    const plain = applyEvent(localSend(initialState("c1"), "r2", "Hi", []),
                             { type: "accepted", event_id: 1, epoch: EPOCH, turn_id: null, request_id: "r2",
                               message_id: 1, queued: false });
    assert.equal(plain.messages[0].research, undefined);
    const read = loadHistory(initialState("c1"), [{ id: 1, role: "user", content: "What is Numi?", status: "complete",
                                                    research: true }], false);
    assert.equal(read.messages[0].research, true);
  });

  test("a stored snapshot (no turn retained) shows the saved reply's sources", () => {
    const snap = { type: "snapshot", event_id: 0, last_event_id: 0, epoch: EPOCH, turn_id: null, message_id: 2,
                   status: "complete", content: "Paris [1].", reasoning: "", tool_calls: [], queue: [],
                   sources: [{ ...S1, kind: "web" }] };
    const next = applyEvent(initialState("c1"), snap);
    assert.deepEqual(numbers(next.messages.find((m) => m.id === 2)), [1]);
    assert.equal(next.research, null);
  });

  test("sources already held change no message; another turn's are ignored", () => {
    ids = 0;
    const state = run([ev("turn_start", { user_message_id: 1 }), ev("content", { message_id: 2, delta: "x" }), web(S1, S2)]);
    assert.equal(applyEvent(state, web(S2)).messages, state.messages);
    assert.equal(applyEvent(state, { ...web({ ...S1, n: 3 }), turn_id: "t0" }).messages, state.messages);
  });

  test("a history page brings a reply's saved sources; a page that does not say keeps them", () => {
    const row = (sources) => ({ id: 2, role: "assistant", content: "Paris [1].", status: "complete",
                                ...(sources === undefined ? {} : { sources }) });
    let state = loadHistory(initialState("c1"), [row([S1])], false);
    assert.deepEqual(state.messages[0].sources, [S1]);
    state = loadHistory(state, [row(undefined)], false);
    assert.deepEqual(state.messages[0].sources, [S1]);
  });
});

describe("web search in words", () => {
  test("none set: off, and what to do", () => {
    for (const ws of [undefined, null, { backend: null }, { backend: "bing" }]) {
      const s = searchState(ws);
      assert.equal(s.on, false);
      assert.match(s.sentence, /Web search is off/);
      assert.equal(s.todo, "Choose a search service");
    }
  });

  test("a key-based service without its key is off: the server's sentence when it gives one", () => {
    assert.deepEqual(searchState({ backend: "brave", has_key: false }),
      { on: false, sentence: "Brave Search needs its API key: web search is off until it is set.", todo: "Set the Brave Search key" });
    const said = searchState({ backend: "tavily", has_key: false, problem: "Tavily needs an API key: add it." });
    assert.deepEqual(said, { on: false, sentence: "Tavily needs an API key: add it.", todo: "" });
  });

  test("SearXNG needs no key; a keyed service with its key is on", () => {
    assert.equal(searchState({ backend: "searxng", url: "http://127.0.0.1:8888", has_key: false }).on, true);
    assert.equal(searchState({ backend: "tavily", has_key: true }).on, true);
    assert.match(searchState({ backend: "tavily", has_key: true }).sentence, /Tavily/);
  });

  test("the services offered are the contract's three, keys where they need them", () => {
    assert.deepEqual(BACKENDS.map((b) => [b.value, b.key]), [["searxng", false], ["brave", true], ["tavily", true]]);
    assert.equal(backendInfo("none"), null);
  });
});

describe("withCitedSources", () => {
  const sources = [{ n: 1, title: "One", url: "https://one.example/a" }, { n: 2, title: "", url: "https://www.two.example/" },
                   { n: 3, title: "Three", url: "javascript:alert(1)" }, { n: 4, title: "Four", url: "https://four.example/" }];

  test("the sources the text cites follow it, by n, once each", () => {
    assert.equal(withCitedSources("B [2] and A [1], A again [1].\n", sources),
      "B [2] and A [1], A again [1].\n\nSources:\n[1] One — https://one.example/a\n[2] two.example — https://www.two.example/\n");
  });

  test("a source without a web address is listed by its title alone", () => {
    assert.equal(withCitedSources("See [3].", sources), "See [3].\n\nSources:\n[3] Three\n");
  });

  test("text citing nothing known, or a reply without sources, is given as it is", () => {
    assert.equal(withCitedSources("No markers here.", sources), "No markers here.");
    assert.equal(withCitedSources("Only [9].", sources), "Only [9].");
    assert.equal(withCitedSources("Cites [1].", []), "Cites [1].");
    assert.equal(withCitedSources("Cites [1].", undefined), "Cites [1].");
  });
});
