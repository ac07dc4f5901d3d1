// How often a streaming reply's open tail is redrawn (web/app/stream-render.js): every
// 100 ms at the rates people read along, every 200 ms once the text comes faster than
// a redraw can show word by word.
import { test } from "node:test";
import assert from "node:assert/strict";

import { redrawInterval } from "../../web/app/stream-render.js";

const CHARS_PER_TOKEN = 5.6; // the benchmark reply's average

function interval(tokensPerS, elapsedMs) {
  return redrawInterval(Math.round((tokensPerS * CHARS_PER_TOKEN * elapsedMs) / 1000), elapsedMs);
}

test("cloud models' rates keep the 100 ms redraw", () => {
  for (const rate of [20, 80, 200, 400]) {
    assert.equal(interval(rate, 100), 100, `${rate} tokens/s`);
    assert.equal(interval(rate, 200), 100, `${rate} tokens/s after a 200 ms redraw`);
  }
});

test("text faster than a redraw shows word by word is redrawn every 200 ms", () => {
  for (const rate of [500, 1000, 3000]) {
    assert.equal(interval(rate, 100), 200, `${rate} tokens/s`);
    assert.equal(interval(rate, 200), 200, `${rate} tokens/s, still fast`);
  }
});

test("the rate is what came since the last redraw: a pause, or the first redraw, is slow", () => {
  assert.equal(redrawInterval(3000, 2000), 100); // a burst after a pause of 2 s
  assert.equal(redrawInterval(5000, Infinity), 100); // no redraw before
  assert.equal(redrawInterval(0, 0), 100); // nothing grew
});
