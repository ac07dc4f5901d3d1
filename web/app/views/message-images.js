// A reply's images (CONTRACT §13): each one its step drew, as its thumbnail (the file itself when
// it has none) with its prompt as caption and "drawn by <model>"; while a drawing runs, its newest
// preview. A click (or Enter) opens the viewer (views/image-viewer.js, loaded on first use). The
// prompt is a model's text: it goes into the page only as text (h(), alt, textContent).
import { h } from "../dom.js";
import { drawnBy, imagesKey, shownUrl } from "../../js/images.js";

// The box a reply's image is drawn within (px); the viewer shows it whole.
const BOX = 320;
let viewer = null;
const loadViewer = () => (viewer ??= import("./image-viewer.js").catch((err) => { viewer = null; throw err; }));

/** Width and height that fit `w` × `h` into the box, kept in proportion (the space is kept before it loads). */
function fitted(w, hgt) {
  const scale = Math.min(1, BOX / w, BOX / hgt);
  return { width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(hgt * scale)) };
}

export class MessageImages {
  constructor() {
    this.el = h("div", { class: "msg-images", hidden: true });
    this.key = "";
    this.figures = new Map(); // file id → its figure, kept so a redraw never takes focus off one
  }

  /** Show `msg`'s images and previews (`images`, `imagePartials`: web/js/images.js). */
  update(msg) {
    const key = imagesKey(msg);
    if (key === this.key) return;
    this.key = key;
    const images = msg.images || [];
    const partials = msg.imagePartials || [];
    this.el.hidden = !images.length && !partials.length;
    const figures = new Map();
    for (const item of images) figures.set(item.file_id, this.figures.get(item.file_id) || this._figure(item));
    this.figures = figures;
    this.el.replaceChildren(...figures.values(), ...partials.map((p) => this._preview(p)));
  }

  _figure(item) {
    const size = fitted(item.width, item.height);
    const img = h("img", { class: "msg-image-img", src: shownUrl(item), alt: item.prompt, loading: "lazy",
      decoding: "async", width: size.width, height: size.height });
    // The picture is the button: its name is the prompt (the alt text).
    const open = h("button", { type: "button", class: "msg-image-open", "aria-haspopup": "dialog", title: "Open full size",
      onclick: () => loadViewer().then((m) => m.openImageViewer(item)) }, img);
    const by = drawnBy(item);
    return h("figure", { class: "msg-image", dataset: { fileId: item.file_id } }, open,
      h("figcaption", { class: "msg-image-caption" }, h("span", { class: "msg-image-prompt" }, item.prompt),
        by ? h("span", { class: "msg-image-by" }, by) : null));
  }

  _preview(partial) {
    const size = fitted(partial.width, partial.height);
    return h("figure", { class: "msg-image partial", "aria-busy": "true", dataset: { callId: partial.callId } },
      h("img", { class: "msg-image-img", src: partial.url, alt: "A preview of the image being drawn",
        width: size.width, height: size.height }),
      h("figcaption", { class: "msg-image-caption" }, h("span", { class: "msg-image-by" }, "Drawing…")));
  }
}
