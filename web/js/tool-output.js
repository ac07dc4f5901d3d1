// What a tool row shows of a call's output, pure so node can test it
// (tests/js/tool-output.test.mjs): the shell tool's closing line read as an exit code
// and a duration, and long output cut to a first screenful.

// backend/tools/shell.py `describe`: the output, then one line
//   [exit code 0 · 12 ms]
//   [exit code 3 · 1.2 s]
//   [exit code none · timed out after 60 s and was stopped · 60.0 s]
//   [exit code none · stopped by the person before it finished · 2 ms]
//   [exit code -9 · killed by signal 9 · 5 ms]
const FOOTER = /(^|\n)\[exit code (none|-?\d+)((?: · [^·\]\n]+)*?) · (\d+ ms|\d+(?:\.\d+)? s)\]\s*$/;

/**
 * The shell footer of `text`, or null when it has none.
 * @returns {{code: number|null, how: "exit"|"timeout"|"stopped"|"signal", note: string,
 *            duration: string, ms: number, body: string, line: string}}
 *   body: the output without the footer line; line: the footer as written.
 */
export function shellFooter(text) {
  if (typeof text !== "string") return null;
  const m = FOOTER.exec(text);
  if (!m) return null;
  const code = m[2] === "none" ? null : Number(m[2]);
  const note = m[3].replace(/^ · /, "");
  const how = /timed out/.test(note) ? "timeout" : /stopped/.test(note) ? "stopped"
    : /signal/.test(note) ? "signal" : "exit";
  const duration = m[4];
  const ms = duration.endsWith(" ms") ? Number(duration.slice(0, -3)) : Math.round(Number(duration.slice(0, -2)) * 1000);
  const start = m.index + m[1].length;
  return { code, how, note, duration, ms, body: text.slice(0, m.index), line: text.slice(start).trim() };
}

/** The chip a footer becomes: its text, and whether it is good news. */
export function exitChip(footer) {
  if (!footer) return null;
  if (footer.how === "timeout") return { text: "timed out", ok: false };
  if (footer.how === "stopped") return { text: "stopped", ok: false };
  return { text: `exit ${footer.code}`, ok: footer.code === 0 };
}

export const SHOWN_LINES = 40;
export const SHOWN_CHARS = 4000;

/**
 * The start of `text` a collapsed output shows: at most `lines` lines and `chars`
 * characters; null when the whole text fits (a final newline aside).
 * @returns {{shown: string, totalLines: number, totalChars: number} | null}
 */
export function truncateOutput(text, lines = SHOWN_LINES, chars = SHOWN_CHARS) {
  if (typeof text !== "string") return null;
  const whole = text.replace(/\n$/, "");
  let end = -1;
  for (let i = 0; i < lines; i++) {
    end = whole.indexOf("\n", end + 1);
    if (end < 0) break;
  }
  if (end < 0) end = whole.length;
  end = Math.min(end, chars);
  if (end >= whole.length) return null;
  return { shown: whole.slice(0, end), totalLines: countLines(text), totalChars: text.length };
}

/** Lines of text, a final newline not starting another. */
export function countLines(text) {
  if (!text) return 0;
  const t = text.endsWith("\n") ? text.slice(0, -1) : text;
  return t.split("\n").length;
}

/** The command of a shell call, from its arguments (a JSON string or an object). */
export function shellCommand(args) {
  let value = args;
  if (typeof value === "string") {
    try { value = JSON.parse(value); } catch { return ""; }
  }
  return value && typeof value === "object" && typeof value.command === "string" ? value.command : "";
}

/** A duration for people: "12 ms", "1.25 s", "12.5 s", "2 min 5 s". */
export function formatDuration(ms) {
  if (ms == null || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

// How the server words the result of a call to a tool the chat's mode holds back
// (backend/turns/modes.py NOT_OFFERED): nothing failed, the tool was not on offer.
const NOT_OFFERED = /^Not offered in (\w+) mode\./;

/** A held-back call's badge ("not offered in Plan mode"), or null for any other output. */
export function notOfferedLabel(output) {
  const m = typeof output === "string" ? NOT_OFFERED.exec(output) : null;
  return m ? `not offered in ${m[1]} mode` : null;
}
