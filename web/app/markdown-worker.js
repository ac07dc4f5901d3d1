// Markdown → HTML on a thread of its own, for a streaming reply's live renders
// (markdown-loader.js renderAway). Text in, marked's HTML out; checking or sanitizing
// that HTML needs a DOM and stays with the page, which trusts nothing sent from here.
import { toHtml, warmUp } from "../js/markdown-html.js";

self.onmessage = ({ data }) => {
  let html = null;
  try {
    html = data.texts.map(toHtml);
  } catch { /* null: the page renders these itself */ }
  self.postMessage({ id: data.id, html });
};

self.postMessage({ ready: true });
// The grammars a reply will likely need, one task each, so a render asked for in
// between waits for one grammar at most.
warmUp((fn) => setTimeout(fn, 0));
