// A unified diff as the lines a view draws: parsed into kinds, counted, folded.
//
// The server sends either a unified diff (`--- a/path`, `+++ b/path`, `@@` hunks) or a
// sentence saying why there is none (a binary or huge file). Pure: no DOM, no I/O,
// so the same code runs in the page and under `node --test` (tests/js/diff-view.test.mjs).

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Whether `text` is a unified diff (else it is a sentence to show as it is). */
export function isDiff(text) {
  return typeof text === "string" && /^(--- |@@ )/.test(text);
}

/** The path a header line names: `a/x` and `b/x` are `x`; `/dev/null` is no file. */
function headerPath(line) {
  const p = line.slice(4).replace(/\t.*$/, "");
  if (p === "/dev/null") return null;
  return p.replace(/^[ab]\//, "");
}

/**
 * Parse a unified diff.
 * @returns {{path: string|null, created: boolean, added: number, removed: number,
 *            lines: Array<{kind: "hunk"|"add"|"del"|"ctx"|"note", text: string, oldNo: number|null, newNo: number|null}>}}
 *   `text` is the line without its +/-/space mark; `created`: the old side is /dev/null (a new file).
 */
export function parseDiff(text) {
  const out = { path: null, created: false, added: 0, removed: 0, lines: [] };
  if (!isDiff(text)) return out;
  const raw = text.split("\n");
  if (raw[raw.length - 1] === "") raw.pop();
  let oldNo = 0, newNo = 0;
  // What the open hunk still holds (its header says): a `--- ` line inside it is a removed
  // line that began with "-- ", not the next file's header.
  let oldLeft = 0, newLeft = 0;
  for (let i = 0; i < raw.length; i++) {
    const line = raw[i].replace(/\r$/, "");
    const inHunk = oldLeft > 0 || newLeft > 0;
    if (!inHunk && line.startsWith("--- ") && raw[i + 1]?.startsWith("+++ ")) {
      const from = headerPath(line), to = headerPath(raw[i + 1]);
      out.path = to ?? from;
      out.created = from === null;
      i++;
      continue;
    }
    const hunk = inHunk ? null : HUNK.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[3]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      out.lines.push({ kind: "hunk", text: line, oldNo: null, newNo: null });
      continue;
    }
    const mark = line[0];
    if (mark === "+") {
      out.lines.push({ kind: "add", text: line.slice(1), oldNo: null, newNo: newNo++ });
      out.added++;
      newLeft--;
    } else if (mark === "-") {
      out.lines.push({ kind: "del", text: line.slice(1), oldNo: oldNo++, newNo: null });
      out.removed++;
      oldLeft--;
    } else if (mark === "\\") {
      out.lines.push({ kind: "note", text: line.slice(1).trim(), oldNo: null, newNo: null });
    } else {
      // A context line (its space may have been lost to an editor's trailing-space trim).
      out.lines.push({ kind: "ctx", text: line.slice(1), oldNo: oldNo++, newNo: newNo++ });
      oldLeft--;
      newLeft--;
    }
  }
  return out;
}

/**
 * The lines to draw, with long stretches folded:
 * - a run of more than `context * 2 + 1` unchanged lines keeps `context` at each end and
 *   folds the middle (`{kind: "fold", count, from, to}`; lines[from..to) are hidden);
 * - past `max` drawn lines the rest folds into one `{kind: "more", count, from, to}`.
 * `open` (a Set of fold `from` indexes) lists folds the person opened; `all` opens everything.
 */
export function foldLines(lines, { max = 80, context = 3, open = new Set(), all = false } = {}) {
  const items = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind === "ctx" && !all) {
      let j = i;
      while (j < lines.length && lines[j].kind === "ctx") j++;
      const run = j - i;
      if (run > context * 2 + 1 && !open.has(i + context)) {
        for (let k = i; k < i + context; k++) items.push(lines[k]);
        items.push({ kind: "fold", count: run - context * 2, from: i + context, to: j - context });
        for (let k = j - context; k < j; k++) items.push(lines[k]);
      } else {
        for (let k = i; k < j; k++) items.push(lines[k]);
      }
      i = j;
      continue;
    }
    items.push(lines[i]);
    i++;
  }
  if (all || items.length <= max) return items;
  // The cut never lands inside a fold marker's neighbours in a way that hides it twice:
  // what is past `max` is counted in lines of the diff, folded or not.
  const shown = items.slice(0, max);
  const firstHidden = items[max];
  const from = firstHidden.kind === "fold" ? firstHidden.from : lines.indexOf(firstHidden);
  return [...shown, { kind: "more", count: lines.length - from, from, to: lines.length }];
}

/** "+3 −1": what a diff adds and removes, for a summary line. */
export function diffStat(parsed) {
  return `+${parsed.added} \u2212${parsed.removed}`;
}
