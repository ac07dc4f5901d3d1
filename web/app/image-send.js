// The composer's Image action → the chat's `send` (CONTRACT §13 `image: true`). The composer's
// `send` hook carries the text and the chat view passes on only what it knows (steer, research),
// so the choice rides beside the text as attached files do (attachments.js): the composer stages
// it with the text it sends, and the chat's send takes it when the text matches. A new chat sends
// its first message once it exists; the choice waits here until then. Any other send replaces it.
let staged = null; // the text an image is to be drawn from, or null

/** Whether the next send of `text` draws an image (`on`), or (false) sends it as a message. */
export function stageImage(text, on) {
  staged = on ? text : null;
}

/** Whether `text` was staged to draw an image (once). */
export function takeStagedImage(text) {
  if (staged === null || staged !== text) return false;
  staged = null;
  return true;
}
