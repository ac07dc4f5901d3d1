// The image viewer: a drawn image at full size in a modal sheet (views/dialogs.js: Esc or Close
// closes it, focus goes back to the picture that opened it), its prompt, who drew it and its size,
// and Download (the file itself, named as the server names it). Loaded on first use.
import { h } from "../dom.js";
import { sheet } from "./dialogs.js";
import { downloadStem, drawnBy, fileUrl, sizeText } from "../../js/images.js";

/** Open the viewer on `item` (a message's image: web/js/images.js). */
export function openImageViewer(item) {
  const url = fileUrl(item.file_id);
  const by = drawnBy(item);
  const d = sheet("Image",
    h("figure", { class: "image-viewer-figure" },
      h("div", { class: "image-viewer-frame" },
        h("img", { class: "image-viewer-img", src: url, alt: item.prompt, width: item.width, height: item.height })),
      h("figcaption", { class: "image-viewer-caption" },
        h("p", { class: "image-viewer-prompt" }, item.prompt),
        h("p", { class: "hint" }, [by ? `${by[0].toUpperCase()}${by.slice(1)}` : "", sizeText(item)].filter(Boolean).join(" · ")))),
    h("div", { class: "form-row" },
      h("a", { class: "button primary image-download", href: url, download: downloadStem(item.prompt) }, "Download")));
  d.classList.add("image-viewer");
  return d;
}
