// What a tool row shows of an output (web/js/tool-output.js): the shell footer as an
// exit-code chip and a duration, long output cut to 40 lines / 4 000 characters.
// The footers are backend/tools/shell.py `describe`'s.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { countLines, exitChip, formatDuration, notOfferedLabel, shellCommand, shellFooter, truncateOutput } from "../../web/js/tool-output.js";

describe("shellFooter", () => {
  test("exit code and duration, the footer taken off the output", () => {
    const f = shellFooter("one\ntwo\n[exit code 0 · 12 ms]");
    assert.deepEqual([f.code, f.how, f.duration, f.ms, f.body, f.line], [0, "exit", "12 ms", 12, "one\ntwo", "[exit code 0 · 12 ms]"]);
    assert.deepEqual(exitChip(f), { text: "exit 0", ok: true });
  });

  test("a failing command is red", () => {
    const f = shellFooter("ls: cannot access 'x'\n[exit code 2 · 1.5 s]");
    assert.deepEqual([f.code, f.ms], [2, 1500]);
    assert.deepEqual(exitChip(f), { text: "exit 2", ok: false });
  });

  test("timed out, stopped, killed", () => {
    const t = shellFooter("(no output)\n[exit code none · timed out after 60 s and was stopped · 60.0 s]");
    assert.deepEqual([t.code, t.how, t.note, t.ms], [null, "timeout", "timed out after 60 s and was stopped", 60000]);
    assert.deepEqual(exitChip(t), { text: "timed out", ok: false });
    const s = shellFooter("partial\n[exit code none · stopped by the person before it finished · 2 ms]");
    assert.deepEqual([s.how, s.body], ["stopped", "partial"]);
    assert.deepEqual(exitChip(s), { text: "stopped", ok: false });
    const k = shellFooter("[exit code -9 · killed by signal 9 · 5 ms]");
    assert.deepEqual([k.code, k.how, k.body], [-9, "signal", ""]);
    assert.deepEqual(exitChip(k), { text: "exit -9", ok: false });
  });

  test("no footer, or one that is not the last line: null", () => {
    assert.equal(shellFooter("plain output"), null);
    assert.equal(shellFooter("[exit code 0 · 12 ms]\nmore after it"), null);
    assert.equal(shellFooter(null), null);
    assert.equal(exitChip(null), null);
  });
});

describe("truncateOutput", () => {
  const lines = (n) => Array.from({ length: n }, (_, i) => `line ${i}`).join("\n");

  test("up to 40 lines are shown whole", () => {
    assert.equal(truncateOutput(lines(40)), null);
    assert.equal(truncateOutput(lines(40) + "\n"), null, "a final newline is not a line");
  });

  test("more lines: the first 40", () => {
    const cut = truncateOutput(lines(100) + "\n");
    assert.equal(cut.shown, lines(40));
    assert.deepEqual([cut.totalLines, cut.totalChars], [100, lines(100).length + 1]);
  });

  test("long lines: the first 4 000 characters", () => {
    const cut = truncateOutput("x".repeat(10_000));
    assert.equal(cut.shown.length, 4000);
    assert.equal(cut.totalLines, 1);
    assert.equal(truncateOutput("x".repeat(4000)), null);
  });

  test("limits can be given", () => {
    assert.equal(truncateOutput("a\nb\nc", 2).shown, "a\nb");
    assert.equal(truncateOutput("abcdef", 40, 3).shown, "abc");
  });

  test("countLines", () => {
    assert.deepEqual([countLines(""), countLines("a"), countLines("a\n"), countLines("a\nb")], [0, 1, 1, 2]);
  });
});

test("shellCommand reads the command from a call's arguments", () => {
  assert.equal(shellCommand('{"command": "echo hi"}'), "echo hi");
  assert.equal(shellCommand({ command: "ls" }), "ls");
  assert.equal(shellCommand("not json"), "");
  assert.equal(shellCommand('{"text": 1}'), "");
});

test("formatDuration", () => {
  assert.deepEqual([12, 1234, 12_500, 125_000].map(formatDuration), ["12 ms", "1.23 s", "12.5 s", "2 min 5 s"]);
  assert.equal(formatDuration(null), "");
});

describe("notOfferedLabel", () => {
  test("a tool the mode holds back reads as not offered in that mode", () => {
    assert.equal(notOfferedLabel("Not offered in Plan mode. write_file changes things."), "not offered in Plan mode");
  });
  test("anything else is not such a call", () => {
    for (const out of ["There is no tool named 'x' in this chat.", "ok", "", null, undefined, { a: 1 },
      "said: Not offered in Plan mode."]) assert.equal(notOfferedLabel(out), null);
  });
});
