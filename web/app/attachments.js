// Attached files: uploading one (POST /api/files, with progress), what the page
// shows of one, and the hand-over from the composer to the chat's `send`.

/** The URL of a stored file; images are served inline there (thumbnails), the rest download. */
export const fileUrl = (id) => `/api/files/${encodeURIComponent(id)}`;

// The raster types a model can see; anything else is never drawn as an <img>.
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
export const isImage = (mime) => IMAGE_TYPES.has(mime);

// Line icons drawn in the page (paths from Feather, MIT): an emoji would depend on
// the system having a colour emoji font, and many Linux desktops do not.
const ICONS = {
  clip: ["M21.44 11.05l-9.19 9.19a6 6 0 0 1-8.49-8.49l9.19-9.19a4 4 0 0 1 5.66 5.66l-9.2 9.19a2 2 0 0 1-2.83-2.83l8.49-8.48"],
  file: ["M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8z", "M14 2v6h6"],
};

/** An SVG line icon: one of ICONS by name, or `paths` given (the model picker's capability icons). */
export function icon(name, paths = ICONS[name], cls = "attach-icon") {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [k, v] of Object.entries({ class: `${cls} icon-${name}`, viewBox: "0 0 24 24", fill: "none", stroke: "currentColor",
    "stroke-width": "2", "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true", focusable: "false" })) {
    svg.setAttribute(k, v);
  }
  for (const d of paths) {
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

export function formatSize(n) {
  if (!Number.isFinite(n)) return "";
  if (n < 1024) return `${n} bytes`;
  const units = ["KB", "MB", "GB"];
  let v = n;
  let u = -1;
  do { v /= 1024; u += 1; } while (v >= 1024 && u < units.length - 1);
  return `${v >= 10 ? Math.round(v) : v.toFixed(1).replace(/\.0$/, "")} ${units[u]}`;
}

export class UploadError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

/**
 * Upload one File. XMLHttpRequest rather than fetch: only it reports upload progress.
 * Returns {promise (→ the stored file), abort()}. The session cookie rides along.
 */
export function upload(file, onProgress) {
  const xhr = new XMLHttpRequest();
  const promise = new Promise((resolve, reject) => {
    xhr.open("POST", "/api/files");
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress?.(e.loaded / e.total); };
    xhr.onload = () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* an answer that is not JSON */ }
      if (xhr.status === 201 && body?.id) return resolve(body);
      const err = body?.error;
      reject(new UploadError(err?.message || `${file.name} could not be uploaded (the server answered ${xhr.status}).`,
        err?.code || `http_${xhr.status}`));
    };
    xhr.onerror = () => reject(new UploadError(`${file.name} could not be uploaded: Numi's backend did not answer. Is it still running?`, "offline"));
    xhr.onabort = () => reject(new UploadError("The upload was cancelled.", "aborted"));
    const form = new FormData();
    form.append("file", file, file.name || "pasted-image.png");
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}

// A file dropped beside the chat (on the sidebar, say) would make the browser open
// it in place of the app: refuse such drops page-wide. The composer's own drop zone
// handles its drops first and stops them there.
if (typeof window !== "undefined") {
  const files = (e) => [...(e.dataTransfer?.types || [])].includes("Files");
  // defaultPrevented: a drop zone below already took this event; leave its choice be.
  window.addEventListener("dragover", (e) => {
    if (files(e) && !e.defaultPrevented) { e.preventDefault(); e.dataTransfer.dropEffect = "none"; }
  });
  window.addEventListener("drop", (e) => { if (files(e)) e.preventDefault(); });
}

// The hand-over. The composer's `send` hook carries the text only (the chat view
// passes it on as it is), so the files ride beside it: the composer stages them
// with the text it sends, and the chat's send takes them if the text matches.
// A new chat sends its first message only after it exists; the files wait here
// until then. A stale stage is replaced by the next send, never sent by surprise.
let staged = null;

/** @param files the stored files ({id, name, mime, size, …}) to go with `text` */
export function stageAttachments(text, files) {
  staged = files?.length ? { text, files } : null;
}

/** The files staged with exactly this text (once), else none. */
export function takeStagedAttachments(text) {
  if (!staged || staged.text !== text) return [];
  const { files } = staged;
  staged = null;
  return files;
}
