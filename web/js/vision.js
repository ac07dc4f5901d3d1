// The image dead end, in words: no model of the catalog can see images. Pure, so node can
// test it (tests/js/vision.test.mjs); the server refuses such a send with the same sentence
// (backend/turns/vision_check.py).

/** True when some model of `models` (GET /api/models) can see images. */
export function anyModelSees(models) {
  return (models || []).some((m) => m?.supports?.vision);
}

/** What the composer says, and the server's refusal: `name` is the image's file name. */
export function noModelSeesSentence(name) {
  return `No model here can see images, so ${name} cannot be sent. Turn vision on for a model `
    + "that can see them in Settings → Models, or remove the image.";
}
