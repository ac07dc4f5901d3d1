// The chat view's parts (web/app/views/chat.js and the modules it composes) read what they
// draw through declared inputs (web/js/view-inputs.js). Reading an undeclared one throws
// when the part draws; this reads the files and finds such a read before anything runs.
// Run: node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const VIEWS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "web", "app", "views");
const PARTS = ["chat.js", "chat-header.js", "chat-notice.js", "card-pane.js", "doc-dock.js"];

/** The names each `new Inputs({...})` of a file declares. */
function declared(text) {
  const names = new Set();
  for (const m of text.matchAll(/new Inputs\(\{([\s\S]*?)\n?\s*\}\);/g)) {
    for (const n of m[1].matchAll(/(?:^|[{,\n])\s*([A-Za-z_$][\w$]*):/g)) names.add(n[1]);
  }
  return names;
}

for (const file of PARTS) {
  test(`${file}: every input a part reads is declared`, () => {
    const text = readFileSync(join(VIEWS, file), "utf8");
    const names = declared(text);
    assert.ok(names.size, `${file} declares no inputs`);
    const read = new Set([...text.matchAll(/\binp\.([A-Za-z_$][\w$]*)/g)].map((m) => m[1]));
    assert.ok(read.size, `${file} reads no inputs`);
    for (const name of read) assert.ok(names.has(name), `${file} reads inp.${name} without declaring it`);
  });
}
