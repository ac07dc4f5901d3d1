// What a reply says when read aloud (web/js/speech-text.js): sentences out of streaming Markdown.
import { test } from "node:test";
import assert from "node:assert/strict";

import { SpeechText, speechSentences, cleanInline, MAX_SENTENCE, CODE_BLOCK } from "../../web/js/speech-text.js";

const say = (text) => speechSentences(text);

test("sentences end at . ! ? … followed by a space, and at the end", () => {
  assert.deepEqual(say("One. Two! Three? Four… Five"), ["One.", "Two!", "Three?", "Four…", "Five"]);
  assert.deepEqual(say('He said "Hi." Then left.'), ['He said "Hi."', "Then left."]);
  assert.deepEqual(say("Wait... what?"), ["Wait...", "what?"]);
});

test("abbreviations, initials, numbers, URLs and file names do not end a sentence", () => {
  assert.deepEqual(say("Fruit, e.g. apples, i.e. food. Next"), ["Fruit, e.g. apples, i.e. food.", "Next"]);
  assert.deepEqual(say("Mr. Smith met Dr. Who. Done"), ["Mr. Smith met Dr. Who.", "Done"]);
  assert.deepEqual(say("J. R. R. Tolkien wrote it. Yes"), ["J. R. R. Tolkien wrote it.", "Yes"]);
  assert.deepEqual(say("Pi is 3.14 roughly. Yes"), ["Pi is 3.14 roughly.", "Yes"]);
  assert.deepEqual(say("Open config.yaml and main.py now. Then run"), ["Open config.yaml and main.py now.", "Then run"]);
  assert.deepEqual(say("Read https://example.com/a.b?c=d.e today. Ok"), ["Read example.com today.", "Ok"]);
});

test("a blank line, a list item, a heading and a table row each end a sentence", () => {
  assert.deepEqual(say("First para\n\nSecond para"), ["First para", "Second para"]);
  assert.deepEqual(say("Intro\n- one\n- two\n1. three\n2) four"), ["Intro", "one", "two", "three", "four"]);
  assert.deepEqual(say("# Title\nText here\n## Sub ##\nMore"), ["Title", "Text here", "Sub", "More"]);
  assert.deepEqual(say("Title\n===\nBody"), ["Title", "Body"]);
  assert.deepEqual(say("a line\nwrapped on\ntwo lines."), ["a line wrapped on two lines."]);
});

test("fenced and indented code become one 'Code block.' sentence", () => {
  assert.deepEqual(say("Look:\n```python\nprint('a. b')\nx = 1\n```\nDone."), ["Look:", CODE_BLOCK, "Done."]);
  assert.deepEqual(say("~~~\ncode\n~~~\nAfter"), [CODE_BLOCK, "After"]);
  assert.deepEqual(say("Text.\n\n    code line\n    more\n\nAfter."), ["Text.", CODE_BLOCK, "After."]);
  // Indented text in a list is the item's, not code.
  assert.deepEqual(say("- item\n\n    still the item"), ["item", "still the item"]);
  // An unclosed fence runs to the end.
  assert.deepEqual(say("```\nnever closed. Really.\n"), [CODE_BLOCK]);
});

test("inline code is read as its text; links as their text; images and tags dropped", () => {
  assert.deepEqual(say("Run `npm test` now."), ["Run npm test now."]);
  assert.deepEqual(say("See [the docs](https://x.org/a.b) and [ref][1]."), ["See the docs and ref."]);
  assert.deepEqual(say("A picture ![a cat](cat.png) here."), ["A picture here."]);
  assert.deepEqual(say("One<br>two <b>bold</b> <!-- hidden. --> end."), ["One two bold end."]);
  assert.deepEqual(say("As shown [1] and [2]."), ["As shown and."]);
  assert.deepEqual(say("Mail <https://example.com/x> now."), ["Mail example.com now."]);
});

test("emphasis, heading marks, table pipes and entities are not said", () => {
  assert.deepEqual(say("**Bold** and *it* and _em_ and ~~gone~~ but snake_case stays."),
    ["Bold and it and em and gone but snake_case stays."]);
  assert.deepEqual(say("| Name | Age |\n| --- | ---: |\n| Ann | 3 |"), ["Name, Age", "Ann, 3"]);
  assert.deepEqual(say("Tom &amp; Jerry &lt;3"), ["Tom & Jerry <3"]);
  assert.deepEqual(say("Escaped \\*stars\\* stay."), ["Escaped *stars* stay."]);
});

test("math is said as formula; a price is not math", () => {
  assert.deepEqual(say("We have $x^2$ and \\(y\\) here."), ["We have formula and formula here."]);
  assert.deepEqual(say("It costs $5 and $10."), ["It costs $5 and $10."]);
  assert.deepEqual(say("Before\n$$\na + b\n$$\nAfter"), ["Before", "Formula.", "After"]);
  assert.deepEqual(say("\\[ e = mc^2 \\]\nNext"), ["Formula.", "Next"]);
});

test("think tags are never read", () => {
  assert.deepEqual(say("<think>Plan it. Carefully.</think>The answer is 4."), ["The answer is 4."]);
  assert.deepEqual(say("<think>\nline one.\n\nline two.\n</think>\n\nHello."), ["Hello."]);
  assert.deepEqual(say("<thinking>\nhmm\n</thinking>\nHi."), ["Hi."]);
  assert.deepEqual(say("<think>never closed. At all."), []);
});

test("a long sentence is cut near the limit, at a comma or else a space", () => {
  const words = Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ");
  const out = say(`${words}.`);
  assert.ok(out.length >= 2);
  for (const s of out) assert.ok(s.length <= MAX_SENTENCE, s.length);
  assert.equal(out.join(" "), `${words}.`);
  const commas = Array.from({ length: 40 }, (_, i) => `part number ${i}`).join(", ");
  const cut = say(commas);
  assert.ok(cut[0].endsWith(","));
  assert.equal(cut.join(" "), commas);
  // No space at all: cut hard at the limit.
  assert.deepEqual(say("x".repeat(650)).map((s) => s.length), [300, 300, 50]);
});

test("feed hands out only complete sentences, each once; finish the rest", () => {
  const s = new SpeechText();
  assert.deepEqual(s.feed("Hello wor"), []);
  assert.deepEqual(s.feed("Hello world. How"), ["Hello world."]);
  assert.deepEqual(s.feed("Hello world. How are"), []);
  assert.deepEqual(s.feed("Hello world. How are you?\n\n```js\nx"), ["How are you?", CODE_BLOCK]);
  assert.deepEqual(s.feed("Hello world. How are you?\n\n```js\nx.\ny. z\n```\nBye"), []);
  assert.deepEqual(s.finish(), ["Bye"]);
  assert.deepEqual(s.finish(), []);
});

test("a long unfinished sentence goes out in parts before it ends", () => {
  const s = new SpeechText();
  const long = Array.from({ length: 100 }, (_, i) => `w${i}`).join(" ") + " ";
  const first = s.feed(long);
  assert.ok(first.length >= 1 && first[0].length <= MAX_SENTENCE);
  const rest = [...s.feed(`${long}end.`), ...s.finish()];
  assert.deepEqual([...first, ...rest], say(`${long}end.`));
});

test("a reply that starts over is read afresh", () => {
  const s = new SpeechText();
  assert.deepEqual(s.feed("First try. "), ["First try."]);
  assert.deepEqual(s.feed("Second. "), ["Second."]);
});

test("cleanInline waits for a construct that may still close", () => {
  assert.deepEqual(cleanInline("see [the li", false), { text: "see ", stopped: true });
  assert.deepEqual(cleanInline("run `npm t", false), { text: "run ", stopped: true });
  assert.deepEqual(cleanInline("run `npm t`", true), { text: "run npm t", stopped: false });
});

// Replies of every kind, fed whole and in random pieces: the same sentences.
const SAMPLES = [
  "<think>secret plan. more</think>Hello there, **friend**! This is e.g. a test by Mr. Smith about 3.14 and "
    + "https://docs.python.org/3/x.html. See `config.yaml` now.\n\n## Steps ##\n\n1. First item. It has two sentences\n"
    + "2. Second [link text](https://x.com \"title here\") here\n   continued line.\n\n```python\nprint(\"hi. there\")\n```\n\n"
    + "| a | b |\n|---|---|\n| one | two |\n\n    indented code\n\nMath $x^2$ and $5 and $$y$$ done. ![img](a.png) <br> "
    + "end… Next?\n> quoted text.\n> - quoted item\n---\nLast words",
  Array.from({ length: 60 }, (_, i) => `clause ${i} goes on`).join(", ") + ". Short one. "
    + "x".repeat(700) + " tail [a link that is long](http://a.b/c) and `code span` end.",
  "<think>\nreasoning. lots of it.\n\nmore\n</think>\n\n# Answer\n\n- a *b* c.\n  - nested d. e\n\n"
    + "Some \\(math\\) and \\[block\\] text &amp; more <i>tags</i>.\n\n$$\nx\n$$\n\nText [^1] and [2].\n",
  "Title\n===\n\nPara one.  Two spaces.\nLine two!\n\n~~~\ncode ~~~ not closed\n~~~\n* star item\n+ plus item\n10) ten\n"
    + "#hashtag not a heading. *emph start\nand end* ok.",
];

function feedInPieces(text, rand) {
  const s = new SpeechText();
  const got = [];
  let i = 0;
  while (i < text.length) {
    i = Math.min(text.length, i + 1 + Math.floor(rand() * 12));
    got.push(...s.feed(text.slice(0, i)));
  }
  got.push(...s.finish());
  return got;
}

test("any chunking yields the sentences of the whole text", () => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (const text of SAMPLES) {
    const whole = say(text);
    assert.ok(whole.length > 3);
    for (let trial = 0; trial < 60; trial++) assert.deepEqual(feedInPieces(text, rand), whole);
    // One character at a time, too.
    const s = new SpeechText();
    const got = [];
    for (let i = 1; i <= text.length; i++) got.push(...s.feed(text.slice(0, i)));
    got.push(...s.finish());
    assert.deepEqual(got, whole);
  }
});
