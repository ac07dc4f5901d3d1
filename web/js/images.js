// Images a turn draws (CONTRACT §13, docs/PROTOCOL.md "Images"): the `image` and `image_partial`
// events folded onto their messages (`imageEvents`, registered into the fold by web/js/reducer.js),
// and the small rules the views share — what a reply's image shows, its caption and download name,
// the body Settings → Images saves, whether the composer's Image action can draw. Pure, no DOM
// (node-tested); the views are views/message-images.js, image-viewer.js and images-settings.js.
//
// On a message: `images` [{file_id, prompt, width, height, model, backend, thumbnail_file_id?}] —
// the shape GET …/messages gives, so a history read and the events agree — and, while a drawing
// runs, `imagePartials` [{callId, index, url, width, height}]: the newest preview of each call,
// dropped when its image arrives, its call ends or its turn does. A prompt was written by a model:
// it is only ever handled here as a string.

import { NEW_EPOCH, findMessage, mapMessages, touchMessage, updateMessage } from "./chat-state.js";

export const BACKENDS = [
  { value: "openai", label: "OpenAI images API" },
  { value: "sdapi", label: "Stable Diffusion (sdapi)" },
];
export const PROVIDER_KINDS = ["openai", "openai_compatible"]; // those whose API draws (section.py)
export const SIZES = ["1024x1024", "1536x1024", "1024x1536", "512x512", "auto"];
export const NO_BACKEND = "Choose an image backend in Settings → Images";

// A partial's `url` is the server's own path (routes.py); nothing else is ever put in an <img>.
const PARTIAL_URL = /^\/api\/images\/partials\/[A-Za-z0-9_-]{1,128}$/;
const whole = (n) => Number.isInteger(n) && n > 0;

/** A message's image, as the messages' `images` list it, from an `image` event; null when malformed. */
export function imageItem(e) {
  if (typeof e?.file_id !== "string" || !e.file_id || typeof e.prompt !== "string" || !whole(e.width)
      || !whole(e.height)) return null;
  const item = { file_id: e.file_id, prompt: e.prompt, width: e.width, height: e.height,
                 model: typeof e.model === "string" ? e.model : null,
                 backend: typeof e.backend === "string" ? e.backend : null };
  if (typeof e.thumbnail_file_id === "string" && e.thumbnail_file_id) item.thumbnail_file_id = e.thumbnail_file_id;
  return item;
}

/** The images a history row carries (well-formed ones only), or [] (never shared with the row). */
export function rowImages(item) {
  return Array.isArray(item?.images) ? item.images.map(imageItem).filter(Boolean) : [];
}

/**
 * The state with message `e.message_id` ready for an event of it: the running turn's reply is
 * made (an image send's reply is first named by its image); another turn's needs the message
 * shown already. Returns null when the event has nowhere to go.
 */
function reach(state, e) {
  if (!Number.isInteger(e.message_id)) return null;
  const ours = !!state.turn && e.turn_id != null && state.turn.id === e.turn_id;
  const next = ours ? touchMessage(state, e.message_id, e.turn_id) : state;
  return findMessage(next, e.message_id) ? next : null;
}

/** `partials` without those `drop` picks; the very same list when none is. */
function without(partials, drop) {
  if (!partials?.length || !partials.some(drop)) return partials;
  return partials.filter((p) => !drop(p));
}

function withPartials(m, partials) {
  if (partials === m.imagePartials) return m;
  const out = { ...m };
  if (partials?.length) out.imagePartials = partials;
  else delete out.imagePartials;
  return out;
}

/** Every message's previews `drop` picks taken off. */
function dropPartials(state, drop) {
  const messages = mapMessages(state.messages, (m) => withPartials(m, without(m.imagePartials, drop)));
  return messages === state.messages ? state : { ...state, messages };
}

export const imageEvents = {
  /** A drawn image, kept: on its message once (a replay adds nothing); its call's preview goes. */
  image(state, e) {
    const item = imageItem(e);
    const next = item && reach(state, e);
    if (!next) return state;
    // An image with no call (an image send draws one) ends every preview of its message.
    const ends = typeof e.call_id === "string" ? (p) => p.callId === e.call_id : () => true;
    return updateMessage(next, e.message_id, (m) => {
      const images = m.images || [];
      const known = images.some((i) => i.file_id === item.file_id);
      const shown = withPartials(m, without(m.imagePartials, ends));
      return known ? shown : { ...shown, images: [...images, item] };
    });
  },

  /** A preview of a drawing in progress: the newest of its call replaces the one before. */
  image_partial(state, e) {
    if (typeof e.call_id !== "string" || !e.call_id || !PARTIAL_URL.test(e.url ?? "") || !Number.isInteger(e.index)
        || !whole(e.width) || !whole(e.height)) return state;
    const next = reach(state, e);
    if (!next) return state;
    return updateMessage(next, e.message_id, (m) => {
      const partials = m.imagePartials || [];
      const old = partials.find((p) => p.callId === e.call_id);
      if (old && old.index >= e.index) return m;
      const partial = { callId: e.call_id, index: e.index, url: e.url, width: e.width, height: e.height };
      return { ...m, imagePartials: [...partials.filter((p) => p !== old), partial] };
    });
  },

  // Its call ended without an image (a failed drawing): the preview goes.
  tool_end(state, e) {
    return typeof e.call_id === "string" ? dropPartials(state, (p) => p.callId === e.call_id) : state;
  },

  // No drawing outlives its turn (stopped, failed), nor the server process.
  turn_end: (state) => dropPartials(state, () => true),
  [NEW_EPOCH]: (state) => dropPartials(state, () => true),
};

// --- what the views show ---------------------------------------------------------------

/** The URL of a stored file (GET /api/files/{id}: an image is served inline). */
export const fileUrl = (id) => `/api/files/${encodeURIComponent(id)}`;

/** What a reply shows of an image: its thumbnail where there is one, else the file. */
export function shownUrl(item) {
  return fileUrl(item.thumbnail_file_id || item.file_id);
}

/** Who drew it, in words: "drawn by gpt-image-1", or "" when not known. */
export function drawnBy(item) {
  const model = typeof item.model === "string" ? item.model.trim() : "";
  return model ? `drawn by ${model}` : "";
}

/** Its size in words: "1024 × 768 px". */
export function sizeText(item) {
  return `${item.width} × ${item.height} px`;
}

/**
 * The name a download suggests, as the server names the file (backend/features/images/saving.py
 * file_stem): the prompt's first eight words. No extension: the server's Content-Disposition
 * name wins where the browser reads it, and else the browser adds the one its type has.
 */
export function downloadStem(prompt) {
  const words = String(prompt ?? "").normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}\p{M}_]+/gu) || [];
  return words.slice(0, 8).join("-").slice(0, 80).replace(/^-+|-+$/g, "") || "image";
}

/** A key that changes whenever what a message's images block shows does. */
export function imagesKey(msg) {
  const images = msg?.images || [];
  const partials = msg?.imagePartials || [];
  if (!images.length && !partials.length) return "";
  return `${images.map((i) => `${i.file_id}/${i.thumbnail_file_id || ""}`).join(",")}|`
    + partials.map((p) => `${p.callId}/${p.index}/${p.url}`).join(",");
}

// --- Settings → Images and the composer ----------------------------------------------------

/** The providers an `openai` backend may draw through: OpenAI and OpenAI-compatible ones. */
export function drawingProviders(providers) {
  return (providers || []).filter((p) => PROVIDER_KINDS.includes(p.kind));
}

/**
 * The whole `settings.images` object to PATCH from the form's values {backend, provider_id,
 * model, url, size} (strings): the keys its backend takes, blanks as null. What is wrong with
 * it is the server's to say (422, by field).
 */
export function imagesBody(form) {
  const text = (v) => (typeof v === "string" && v.trim() ? v.trim() : null);
  const backend = BACKENDS.some((b) => b.value === form.backend) ? form.backend : null;
  if (!backend) return { backend: null };
  const body = { backend, model: text(form.model), size: text(form.size) };
  if (backend === "openai") body.provider_id = text(form.provider_id);
  else body.url = text(form.url);
  return body;
}

/** Where a 422's `fields` key ("images.url", "images") goes in the form: a key of the body, or "". */
export function fieldOf(key) {
  const m = /^images\.(backend|provider_id|model|url|size)$/.exec(key);
  return m ? m[1] : "";
}

/**
 * What the composer's Image action can do now: {enabled, why}, `why` the sentence its tooltip
 * says. Only a missing backend holds it back: a backend's `problem` (its provider off, a key
 * missing) is said, and the send is left to the server, whose answer is the fresher one.
 */
export function imageAction(settings) {
  const images = settings?.images;
  if (!images || !images.backend) return { enabled: false, why: NO_BACKEND };
  const problem = typeof images.problem === "string" ? images.problem.trim() : "";
  const by = BACKENDS.find((b) => b.value === images.backend)?.label || images.backend;
  return { enabled: true, why: problem || `Draw an image of what the message describes (${by})` };
}
