// A file change as the approval card and the tool row show it: a unified diff, each line
// marked + / − (and coloured) with its old and new line numbers, long stretches folded
// behind a button; or the server's sentence saying why there is none (binary, too large).
// The text is the file's: it goes in through text nodes only.
import { h } from "../dom.js";
import { foldLines, isDiff, parseDiff } from "../../js/diff-view.js";

const MARK = { add: "+", del: "\u2212", ctx: " " };

/** The element for `text` (a unified diff or a sentence); folds open in place. */
export function diffView(text, { max = 80 } = {}) {
  if (!isDiff(text)) return h("p", { class: "diff diff-note" }, text);
  const parsed = parseDiff(text);
  const open = new Set();
  let all = false;
  const body = h("div", { class: "diff-body" });
  const draw = () => {
    const items = foldLines(parsed.lines, { max, open, all });
    const rows = items.map((line) => row(line, (item) => {
      if (item.kind === "more") all = true;
      else open.add(item.from);
      draw();
      // The button that was pressed is gone: keep the keyboard in the diff.
      body.focus();
    }));
    if (all && parsed.lines.length > max) {
      rows.push(h("button", { type: "button", class: "ghost diff-more", onclick: () => { all = false; open.clear(); draw(); body.focus(); } },
        "Show less"));
    }
    body.replaceChildren(...rows);
  };
  body.tabIndex = -1;
  draw();
  const name = parsed.path || "the file";
  return h("div", { class: "diff", role: "group", "aria-label": `Changes to ${name}: ${parsed.added} lines added, ${parsed.removed} removed` },
    h("div", { class: "diff-head" },
      h("code", { class: "diff-path" }, name),
      parsed.created ? h("span", { class: "chip diff-new" }, "new file") : null,
      h("span", { class: "diff-stat" },
        h("span", { class: "diff-added" }, `+${parsed.added}`), " ",
        h("span", { class: "diff-removed" }, `\u2212${parsed.removed}`))),
    body);
}

function row(line, unfold) {
  if (line.kind === "fold" || line.kind === "more") {
    const label = line.kind === "fold" ? `Show ${line.count} unchanged lines` : `Show all ${line.count} more lines`;
    return h("button", { type: "button", class: `ghost diff-${line.kind}`, onclick: () => unfold(line) }, label);
  }
  if (line.kind === "hunk" || line.kind === "note") {
    return h("div", { class: `diff-line ${line.kind}` }, line.text);
  }
  return h("div", { class: `diff-line ${line.kind}` },
    h("span", { class: "diff-no", "aria-hidden": "true" }, line.oldNo ?? ""),
    h("span", { class: "diff-no", "aria-hidden": "true" }, line.newNo ?? ""),
    h("span", { class: "diff-mark" }, MARK[line.kind]),
    h("span", { class: "diff-text" }, line.text));
}
