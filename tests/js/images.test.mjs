// Images in the chat's state (web/js/images.js): `image` puts a drawn image on its message once (a
// replay changes nothing), `image_partial` keeps the newest preview of each call until its image,
// its call's end or its turn's end; an event for a message the page does not have goes nowhere;
// history reads keep the images. Also the small rules the views share: the URL shown, the caption,
// the download name, the body Settings → Images saves and the composer's Image action.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { loadHistory } from "../../web/js/history-page.js";
import { localSend } from "../../web/js/turn-events.js";
import {
  NO_BACKEND, downloadStem, drawingProviders, drawnBy, fieldOf, imageAction, imageEvents, imagesBody, imagesKey,
  shownUrl, sizeText,
} from "../../web/js/images.js";
import { deepFreeze } from "./freeze.mjs";

const FIXTURE = JSON.parse(readFileSync(new URL("../fixtures/events/29_image.json", import.meta.url), "utf8"));
const E = "ep1";
const ev = (id, type, fields = {}) => deepFreeze({ type, event_id: id, turn_id: "t_1", epoch: E, ...fields });

function fold(events, state = deepFreeze(initialState("c"))) {
  return events.reduce((s, e) => deepFreeze(applyEvent(s, e)), state);
}

const message = (state, id) => state.messages.find((m) => m.id === id);

/** A turn whose step (message 2) calls image_generate as c1; `middle` are the events while it draws. */
function drawingTurn(middle, { end = true } = {}) {
  const events = [
    ev(1, "accepted", { request_id: "r1", message_id: 1, queued: false, turn_id: null }),
    ev(2, "turn_start", { user_message_id: 1 }),
    ev(3, "tool_start", { message_id: 2, call_id: "c1", name: "image_generate", arguments: '{"prompt":"a fox"}' }),
    ...middle.map((fields, i) => ev(4 + i, fields.type, fields)),
  ];
  const n = events.length + 1;
  if (end) {
    events.push(ev(n, "tool_end", { call_id: "c1", name: "image_generate", ok: true, output: "Drew it.", duration_ms: 5 }),
      ev(n + 1, "turn_end", { status: "completed" }));
  }
  return fold(events, deepFreeze(localSend(initialState("c"), "r1", "Draw a fox.")));
}

const partial = (index, fields = {}) => ({ type: "image_partial", message_id: 2, call_id: "c1", index,
  url: `/api/images/partials/ip_${index}`, width: 64 * (index + 1), height: 64 * (index + 1), ...fields });
const image = (fields = {}) => ({ type: "image", message_id: 2, file_id: "file_1", prompt: "a fox", width: 640,
  height: 480, call_id: "c1", model: "gpt-image-1", backend: "openai", thumbnail_file_id: "file_t", ...fields });
const ITEM = { file_id: "file_1", prompt: "a fox", width: 640, height: 480, model: "gpt-image-1", backend: "openai",
               thumbnail_file_id: "file_t" };

describe("the image event", () => {
  test("the shared fixture: the image goes on the message whose step drew it, its preview is gone", () => {
    let state = deepFreeze(initialState(FIXTURE.chat_id));
    for (const p of FIXTURE.pending) state = deepFreeze(localSend(state, p.requestId, p.content));
    const upTo = (id) => fold(FIXTURE.events.filter((e) => e.event_id <= id), state);
    assert.deepEqual(message(upTo(6), 2).imagePartials, [{ callId: "call_img", index: 0,
      url: "/api/images/partials/ip_0a1b2c3d4e5f6a7b8c9d0e1f", width: 1024, height: 1024 }]);
    const end = upTo(13);
    assert.deepEqual(message(end, 2).images, [{ file_id: "file_9f8e7d6c5b4a3f2e",
      prompt: "A red fox asleep in fresh snow, watercolour", width: 1024, height: 1024, model: "gpt-image-1",
      backend: "openai", thumbnail_file_id: "file_1a2b3c4d5e6f7a8b" }]);
    assert.equal(message(end, 2).imagePartials, undefined);
    assert.equal(message(end, 4).images, undefined, "the reply after the drawing has none of its own");
  });

  test("replayed, it changes nothing: by its position, and by its file even under another id", () => {
    const events = [ev(1, "accepted", { request_id: "r1", message_id: 1, queued: false, turn_id: null }),
      ev(2, "turn_start", { user_message_id: 1 }),
      ev(3, "tool_start", { message_id: 2, call_id: "c1", name: "image_generate", arguments: "{}" }),
      ev(4, "image", image())];
    const once = fold(events);
    assert.deepEqual(message(once, 2).images, [ITEM]);
    assert.equal(fold(events, once), once, "every event already applied: the very same state");
    // The same image heard again (another window's replay, a new epoch's): still one.
    const again = deepFreeze(imageEvents.image(once, ev(9, "image", image())));
    assert.equal(again, once);
    const other = fold([ev(5, "image", image({ file_id: "file_2", thumbnail_file_id: undefined }))], once);
    assert.deepEqual(message(other, 2).images.map((i) => i.file_id), ["file_1", "file_2"]);
    assert.equal("thumbnail_file_id" in message(other, 2).images[1], false);
  });

  test("a message the page does not have, or a malformed image, goes nowhere", () => {
    const state = drawingTurn([]);
    // Another turn's image for a message not shown (another branch, a page not loaded).
    assert.equal(applyEvent(state, ev(20, "image", { ...image(), message_id: 99, turn_id: "t_other" })).messages,
      state.messages);
    assert.equal(message(applyEvent(state, ev(20, "image", { ...image(), message_id: 99, turn_id: "t_other" })), 99),
      undefined);
    for (const bad of [{ file_id: "" }, { file_id: 7 }, { width: 0 }, { height: 1.5 }, { prompt: null },
      { message_id: "2" }]) {
      const next = applyEvent(state, ev(21, "image", image(bad)));
      assert.equal(next.messages, state.messages, JSON.stringify(bad));
    }
  });

  test("the running turn's reply first named by its image (an image send) is made, with the image", () => {
    const state = fold([ev(1, "accepted", { request_id: "r1", message_id: 1, queued: false, turn_id: null }),
      ev(2, "turn_start", { user_message_id: 1 }),
      ev(3, "image_partial", partial(0, { message_id: 2, call_id: "send" })),
      ev(4, "image", image({ message_id: 2, call_id: undefined }))],
    deepFreeze(localSend(initialState("c"), "r1", "a fox")));
    const reply = message(state, 2);
    assert.equal(reply.role, "assistant");
    assert.deepEqual(reply.images, [ITEM]);
    // An image with no call ends every preview of its message.
    assert.equal(reply.imagePartials, undefined);
    assert.equal(state.turn.messageId, 2);
  });
});

describe("image_partial", () => {
  test("the newest preview of a call is kept until its image arrives, then dropped", () => {
    const drawing = drawingTurn([partial(0), partial(1)], { end: false });
    assert.deepEqual(message(drawing, 2).imagePartials, [{ callId: "c1", index: 1, url: "/api/images/partials/ip_1",
      width: 128, height: 128 }]);
    // An older one arriving late does not replace it.
    const late = applyEvent(drawing, ev(20, "image_partial", partial(0)));
    assert.equal(late.messages, drawing.messages);
    // Another call's preview stands beside it.
    const two = applyEvent(drawing, ev(21, "image_partial", partial(0, { call_id: "c2" })));
    assert.deepEqual(message(two, 2).imagePartials.map((p) => p.callId), ["c1", "c2"]);
    const drawn = applyEvent(two, ev(22, "image", image()));
    assert.deepEqual(message(drawn, 2).images, [ITEM]);
    assert.deepEqual(message(drawn, 2).imagePartials.map((p) => p.callId), ["c2"], "only c1's preview goes");
  });

  test("a failed call, the turn's end and a server restart take the previews away", () => {
    const drawing = drawingTurn([partial(0)], { end: false });
    assert.equal(message(drawing, 2).imagePartials.length, 1);
    const failed = applyEvent(drawing, ev(20, "tool_end", { call_id: "c1", name: "image_generate", ok: false,
      output: "The image from Fake is a GIF.", duration_ms: 3 }));
    assert.equal(message(failed, 2).imagePartials, undefined);
    assert.equal(message(failed, 2).images, undefined);
    const stopped = applyEvent(drawing, ev(20, "turn_end", { status: "cancelled" }));
    assert.equal(message(stopped, 2).imagePartials, undefined);
    const restarted = applyEvent(drawing, { type: "content", event_id: 1, turn_id: "t_9", epoch: "ep2",
                                            message_id: 7, delta: "x" });
    assert.equal(message(restarted, 2).imagePartials, undefined);
    // With nothing to take away, the same state.
    const plain = drawingTurn([]);
    assert.equal(imageEvents.turn_end(plain, { type: "turn_end" }), plain);
  });

  test("a preview that is not the server's own partial address, or of no call, is not kept", () => {
    const state = drawingTurn([], { end: false });
    for (const bad of [{ url: "https://elsewhere.example/a.png" }, { url: "javascript:alert(1)" },
      { url: "/api/images/partials/../../files/x" }, { url: "/api/files/file_1" }, { call_id: "" },
      { index: "0" }, { width: 0 }, { message_id: 99, turn_id: "t_other" }]) {
      const next = applyEvent(state, ev(30, "image_partial", { ...partial(0), ...bad }));
      assert.equal(next.messages, state.messages, JSON.stringify(bad));
    }
  });
});

describe("history keeps a message's images", () => {
  const rows = (images) => [
    { id: 1, role: "user", content: "Draw a fox.", status: "complete" },
    { id: 2, role: "assistant", content: "", status: "complete", images,
      tool_calls: [{ id: "c1", name: "image_generate", arguments: "{}" }] },
    { id: 4, role: "assistant", content: "Here it is.", status: "complete", images: [] },
  ];

  test("a page's images are the message's; malformed items are left out", () => {
    const state = loadHistory(initialState("c"), rows([ITEM, { file_id: 3 }, { ...ITEM, file_id: "file_2", width: -1 }]), false);
    assert.deepEqual(message(state, 2).images, [ITEM]);
    assert.equal(message(state, 4).images, undefined);
    assert.equal(message(state, 1).images, undefined);
    // Read again: the same rows, the same objects (nothing redraws).
    const again = loadHistory(state, rows([ITEM]), false);
    assert.equal(message(again, 2), message(state, 2));
  });

  test("images an event brought stay through a page read before they were kept", () => {
    const drawn = drawingTurn([image()]);
    const read = loadHistory(drawn, rows([]), false);
    assert.deepEqual(message(read, 2).images, [ITEM]);
    const reread = loadHistory(read, rows([ITEM]), false);
    assert.deepEqual(message(reread, 2).images, [ITEM]);
  });
});

describe("what the views show", () => {
  test("the thumbnail where there is one, else the file; the caption's model; the size", () => {
    assert.equal(shownUrl(ITEM), "/api/files/file_t");
    assert.equal(shownUrl({ ...ITEM, thumbnail_file_id: undefined }), "/api/files/file_1");
    assert.equal(shownUrl({ ...ITEM, thumbnail_file_id: undefined, file_id: "a/b?c" }), "/api/files/a%2Fb%3Fc");
    assert.equal(drawnBy(ITEM), "drawn by gpt-image-1");
    assert.equal(drawnBy({ ...ITEM, model: null }), "");
    assert.equal(sizeText(ITEM), "640 × 480 px");
  });

  test("the download name is the server's: the prompt's first eight words", () => {
    // As backend/features/images/saving.py file_stem names them.
    assert.equal(downloadStem("A red fox asleep in fresh snow, watercolour and more words here"),
      "a-red-fox-asleep-in-fresh-snow-watercolour");
    assert.equal(downloadStem("<b>Hi</b> Ünïcode café_x 東京"), "b-hi-b-ünïcode-café_x-東京");
    assert.equal(downloadStem("Ｆｕｌｌ width"), "full-width");
    assert.equal(downloadStem(""), "image");
    assert.equal(downloadStem("!!!"), "image");
    assert.equal(downloadStem(null), "image");
  });

  test("the images key changes with the images and the previews, and is empty without them", () => {
    assert.equal(imagesKey({}), "");
    const one = imagesKey({ images: [ITEM] });
    assert.notEqual(one, "");
    assert.notEqual(imagesKey({ images: [ITEM], imagePartials: [{ callId: "c", index: 0, url: "/u" }] }), one);
  });
});

describe("Settings → Images and the Image action", () => {
  test("the body is the whole object its backend takes, blanks as null", () => {
    assert.deepEqual(imagesBody({ backend: "", provider_id: "p_1", model: "x" }), { backend: null });
    assert.deepEqual(imagesBody({ backend: "dalle" }), { backend: null });
    assert.deepEqual(imagesBody({ backend: "openai", provider_id: "p_1", model: " gpt-image-1 ", url: "http://x", size: "" }),
      { backend: "openai", model: "gpt-image-1", size: null, provider_id: "p_1" });
    assert.deepEqual(imagesBody({ backend: "sdapi", provider_id: "p_1", model: "", url: " http://127.0.0.1:7860 ", size: "512x512" }),
      { backend: "sdapi", model: null, size: "512x512", url: "http://127.0.0.1:7860" });
    // Left blank, a required key goes as null: the server says what is missing (422, by field).
    assert.deepEqual(imagesBody({ backend: "openai" }), { backend: "openai", model: null, size: null, provider_id: null });
  });

  test("a 422's field names the form's field", () => {
    assert.equal(fieldOf("images.size"), "size");
    assert.equal(fieldOf("images.provider_id"), "provider_id");
    assert.equal(fieldOf("images"), "");
    assert.equal(fieldOf("images.problem"), "");
  });

  test("only OpenAI and OpenAI-compatible providers draw", () => {
    const providers = [{ id: "a", kind: "anthropic" }, { id: "o", kind: "openai" }, { id: "c", kind: "openai_compatible" }];
    assert.deepEqual(drawingProviders(providers).map((p) => p.id), ["o", "c"]);
    assert.deepEqual(drawingProviders(undefined), []);
  });

  test("the Image action waits for a backend, and says the backend's problem", () => {
    assert.deepEqual(imageAction(undefined), { enabled: false, why: NO_BACKEND });
    assert.deepEqual(imageAction({ images: { backend: null } }), { enabled: false, why: NO_BACKEND });
    assert.equal(NO_BACKEND, "Choose an image backend in Settings → Images");
    const sd = imageAction({ images: { backend: "sdapi", problem: null } });
    assert.equal(sd.enabled, true);
    assert.match(sd.why, /Stable Diffusion/);
    const off = imageAction({ images: { backend: "openai", problem: "Fake is turned off. Turn it on…" } });
    assert.deepEqual(off, { enabled: true, why: "Fake is turned off. Turn it on…" });
  });
});
