// The prompt library's logic (web/js/prompts.js): {{variables}} read by the server's rule (the cases
// shared with tests/test_api_prompts.py), filled in as plain text, the `/command` being typed, and
// which prompts match it, best first.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { commandProblem, fillIn, matchPrompts, preview, promptVariables, slashQuery } from "../../web/js/prompts.js";
import { deepFreeze } from "./freeze.mjs";

const { cases } = JSON.parse(readFileSync(new URL("../fixtures/prompt-variables.json", import.meta.url), "utf8"));

describe("promptVariables", () => {
  for (const c of cases) {
    test(JSON.stringify(c.content).slice(0, 60), () => {
      assert.deepEqual(promptVariables(c.content), c.variables);
    });
  }

  test("nothing or no text has none", () => {
    assert.deepEqual(promptVariables(""), []);
    assert.deepEqual(promptVariables(null), []);
  });
});

describe("fillIn", () => {
  test("every use of a variable gets its value, spaces in the braces or not", () => {
    assert.equal(fillIn("Put {{text}} in {{ lang }}; keep {{text}}.", { text: "hola", lang: "English" }),
      "Put hola in English; keep hola.");
    assert.equal(fillIn("{{target language}}!", { "target language": "Welsh" }), "Welsh!");
  });

  test("a value is plain text: replacement patterns, braces and markup stay as typed", () => {
    assert.equal(fillIn("A {{x}} B {{y}}", { x: "$& $1 $$", y: "{{x}}" }), "A $& $1 $$ B {{x}}");
    assert.equal(fillIn("{{x}}", { x: "<img src=x onerror=alert(1)>" }), "<img src=x onerror=alert(1)>");
  });

  test("a placeholder with no value stays; an empty value empties it; names are exact", () => {
    assert.equal(fillIn("{{a}} and {{b}}", { a: "1" }), "1 and {{b}}");
    assert.equal(fillIn("[{{a}}]", { a: "" }), "[]");
    assert.equal(fillIn("{{Name}} {{name}}", { name: "n" }), "{{Name}} n");
    assert.equal(fillIn("{{toString}} {{constructor}}", {}), "{{toString}} {{constructor}}");
  });

  test("what is no placeholder is untouched", () => {
    const text = "{{}} {{-x}} {single} {{a.b}}";
    assert.equal(fillIn(text, { "": "!", "-x": "!", single: "!", "a.b": "!" }), text);
  });
});

describe("slashQuery", () => {
  test("a / at the start of the box, and the word after it", () => {
    assert.equal(slashQuery("/"), "");
    assert.equal(slashQuery("/tr"), "tr");
    assert.equal(slashQuery("/fix-grammar"), "fix-grammar");
  });

  test("anything else opens no list", () => {
    for (const text of ["", "tr", " /tr", "/tr ", "/tr\n", "a /tr", "//", "/a/b", null, undefined]) {
      assert.equal(slashQuery(text), null, JSON.stringify(text));
    }
  });
});

const LIBRARY = deepFreeze([
  { command: "bug", name: "Bug report" },
  { command: "fix-grammar", name: "Fix grammar" },
  { command: "summarize", name: "Summarize a text" },
  { command: "tr", name: "Translate" },
  { command: "tr-formal", name: "Translate formally" },
  { command: "weekly", name: "Weekly status mail" },
]);

const commands = (list) => list.map((p) => p.command);

describe("matchPrompts", () => {
  test("no query: the whole library in its order", () => {
    assert.deepEqual(commands(matchPrompts(LIBRARY, "")), commands(LIBRARY));
  });

  test("the command as typed first, then commands starting with it, then names, then anywhere", () => {
    assert.deepEqual(commands(matchPrompts(LIBRARY, "tr")), ["tr", "tr-formal"]);
    assert.deepEqual(commands(matchPrompts(LIBRARY, "gram")), ["fix-grammar"]); // a word of the name
    // A command starting with it, then a word of a name ("status"), then names holding it.
    assert.deepEqual(commands(matchPrompts(LIBRARY, "s")), ["summarize", "weekly", "tr", "tr-formal"]);
    assert.deepEqual(commands(matchPrompts(LIBRARY, "ma")), ["weekly", "fix-grammar", "summarize", "tr-formal"]); // "mail"
    assert.deepEqual(commands(matchPrompts(LIBRARY, "rep")), ["bug"]);
  });

  test("case does not count; nothing matching is an empty list; a limit holds", () => {
    assert.deepEqual(commands(matchPrompts(LIBRARY, "TRANS")), ["tr", "tr-formal"]);
    assert.deepEqual(matchPrompts(LIBRARY, "zzz"), []);
    assert.equal(matchPrompts(LIBRARY, "", 2).length, 2);
  });
});

test("preview: one line, cut with an ellipsis", () => {
  assert.equal(preview("Line one\n\n  line   two "), "Line one line two");
  assert.equal(preview("x".repeat(100), 10), `${"x".repeat(9)}…`);
});

test("commandProblem says what the server would refuse", () => {
  assert.equal(commandProblem("fix-grammar"), "");
  assert.equal(commandProblem("a".repeat(32)), "");
  for (const bad of ["", "/fix", "Fix", "fix grammar", "fix_grammar", "naïve", "a".repeat(33)]) {
    assert.notEqual(commandProblem(bad), "", bad);
  }
});
