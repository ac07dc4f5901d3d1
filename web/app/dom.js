// Small DOM helpers. Everything goes through textContent or properties, never
// innerHTML: model text reaches the page only as renderFragment's sanitized nodes
// (see stream-render.js), so model text can never become markup by accident.

/**
 * h("button", {class: "x", "aria-label": "Close", onclick: fn}, "text", child)
 * Keys starting with "on" become listeners (CSP forbids on…= attributes, and
 * properties are not attributes anyway); `dataset`, `style` objects and `hidden`,
 * `disabled`, `value`, `checked` are set as properties; the rest as attributes.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) setAttrs(el, attrs);
  append(el, children);
  return el;
}

const PROPS = new Set(["value", "checked", "disabled", "hidden", "open", "selected", "textContent", "title", "type", "placeholder", "min", "max", "step", "rows", "spellcheck"]);

export function setAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false && !PROPS.has(key)) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "style" && typeof value === "object") {
      Object.assign(el.style, value);
    } else if (PROPS.has(key)) {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace all children (cheap enough for small panels; never used per token). */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Copy text to the clipboard; 127.0.0.1 is a secure context, so the async API works. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { value: text, style: { position: "fixed", opacity: "0" } });
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

export function randomId(prefix = "r") {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return prefix + "_" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A tiny SVG icon from web/icons/sprite.svg (same origin, so CSP-clean). */
export function icon(name) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const use = document.createElementNS(ns, "use");
  use.setAttribute("href", `icons/sprite.svg#${name}`);
  svg.append(use);
  return svg;
}

export function formatTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  const now = new Date();
  if (d.toDateString() === now.toDateString()) {
    return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }
  return d.toLocaleDateString([], { month: "short", day: "numeric" });
}
