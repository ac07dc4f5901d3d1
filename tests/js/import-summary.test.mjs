import { test } from "node:test";
import assert from "node:assert/strict";
import { importSummary } from "../../web/js/import-summary.js";

test("a first import names what it made", () => {
  assert.equal(importSummary({ chat_ids: ["c_1"], already: 0, updated: [] }, "x.json"), "Imported 1 chat from x.json.");
  assert.equal(importSummary({ chat_ids: ["c_1", "c_2"] }, "x.json"), "Imported 2 chats from x.json.");
});

test("importing again says what was already here and what gained messages", () => {
  assert.equal(importSummary({ chat_ids: [], already: 3, updated: [] }, "x.json"),
    "3 chats from x.json were already here.");
  assert.equal(importSummary({ chat_ids: [], already: 1, updated: ["c_1"] }, "x.json"),
    "1 chat from x.json was already here (new messages added to 1).");
  assert.equal(importSummary({ chat_ids: ["c_9"], already: 2, updated: ["c_1"] }, "x.zip"),
    "Imported 1 chat from x.zip; 2 were already here (new messages added to 1).");
});

test("an empty answer says so", () => {
  assert.equal(importSummary({ chat_ids: [], already: 0, updated: [] }, "x.json"), "x.json holds no chats to import.");
});

test("the prompts an export brought: added, already here, and a clash that kept the person's own", () => {
  assert.equal(importSummary({ chat_ids: ["c_1"], already: 0, updated: [], prompts: { added: 2, already: 0, clashed: [] } }, "x.zip"),
    "Imported 1 chat from x.zip. Added 2 prompts.");
  assert.equal(importSummary({ chat_ids: [], already: 0, updated: [], prompts: { added: 1, already: 0, clashed: ["tr"] } }, "x.zip"),
    "Imported 1 prompt from x.zip. Kept your /tr: the file's prompt with the same command was left out.");
  assert.equal(importSummary({ chat_ids: [], already: 2, updated: [], prompts: { added: 0, already: 1, clashed: ["a", "b", "c"] } }, "x.zip"),
    "2 chats from x.zip were already here. Kept your /a, /b and /c: the file's prompts with the same commands were left out.");
  assert.equal(importSummary({ chat_ids: [], already: 0, updated: [], prompts: { added: 0, already: 3, clashed: [] } }, "x.zip"),
    "3 prompts from x.zip were already here.");
  assert.equal(importSummary({ chat_ids: [], already: 0, updated: [], prompts: { added: 0, already: 0, clashed: [] } }, "x.json"),
    "x.json holds no chats to import.");
});
