// The image dead end's words (web/js/vision.js), the same sentence the server refuses a send with.
import { test } from "node:test";
import assert from "node:assert/strict";

import { anyModelSees, noModelSeesSentence } from "../../web/js/vision.js";

test("some model sees images only when one has vision on", () => {
  assert.equal(anyModelSees([]), false);
  assert.equal(anyModelSees(undefined), false);
  assert.equal(anyModelSees([{ supports: { vision: false } }, {}]), false);
  assert.equal(anyModelSees([{ supports: { vision: false } }, { supports: { vision: true } }]), true);
});

test("the sentence names the image and the way out", () => {
  assert.equal(noModelSeesSentence("blue.png"), "No model here can see images, so blue.png cannot be sent. "
    + "Turn vision on for a model that can see them in Settings → Models, or remove the image.");
});
