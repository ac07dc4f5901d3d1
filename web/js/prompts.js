// The prompt library's logic, without the page (CONTRACT §12): a prompt's {{variables}} read by
// the server's rule (backend/features/prompts/text.py; the shared cases are
// tests/fixtures/prompt-variables.json), filling them in, when the message box holds a `/command`
// being typed, and which prompts match it, best first.

const MAX_NAME = 40; // characters of one placeholder's name
// `{{name}}`, spaces allowed inside the braces; a name starts and ends with a letter, digit or _
// and may hold spaces and hyphens between. \p{L}\p{N}_ is what Python's \w matches.
const W = "[\\p{L}\\p{N}_]";
const PLACEHOLDER = `\\{\\{ *(${W}(?:[\\p{L}\\p{N}_ -]{0,${MAX_NAME - 2}}${W})?) *\\}\\}`;

/** The placeholders' names in `content`, in the order they first appear, each once. */
export function promptVariables(content) {
  const seen = new Set();
  for (const m of String(content ?? "").matchAll(new RegExp(PLACEHOLDER, "gu"))) seen.add(m[1]);
  return [...seen];
}

/** `content` with each placeholder named in `values` replaced by its value, taken as plain text
 * (a `$&` or `{{other}}` in a value stays as typed); placeholders with no value are left. */
export function fillIn(content, values) {
  return String(content ?? "").replace(new RegExp(PLACEHOLDER, "gu"),
    (whole, name) => (Object.hasOwn(values, name) ? String(values[name]) : whole));
}

/** What follows the `/` while the box holds only a command being typed ("/tr" → "tr", "/" → ""),
 * else null: the list is for the start of a message, not a slash in the middle of one. */
export function slashQuery(text) {
  const m = /^\/([^\s/]*)$/u.exec(String(text ?? ""));
  return m ? m[1] : null;
}

/** The prompts whose command or name matches `query`, best first: the command as typed, a
 * command starting with it, a word of the name starting with it, then either holding it; ties
 * keep the library's order (by name). Case does not count. */
export function matchPrompts(prompts, query, limit = 50) {
  const q = String(query ?? "").trim().toLowerCase();
  const ranked = [];
  prompts.forEach((p, i) => {
    const command = p.command.toLowerCase();
    const name = p.name.toLowerCase();
    let rank;
    if (!q) rank = 0;
    else if (command === q) rank = 0;
    else if (command.startsWith(q)) rank = 1;
    else if (name.startsWith(q) || name.split(/[\s\-_/]+/u).some((w) => w.startsWith(q))) rank = 2;
    else if (command.includes(q) || name.includes(q)) rank = 3;
    else return;
    ranked.push([rank, i, p]);
  });
  ranked.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return ranked.slice(0, limit).map((r) => r[2]);
}

/** A one-line preview of a prompt's text for the list. */
export function preview(content, most = 90) {
  const line = String(content ?? "").replace(/\s+/gu, " ").trim();
  return line.length > most ? `${line.slice(0, most - 1)}…` : line;
}

/** Why a command typed in Settings cannot be saved, as a sentence; "" when it can (the server
 * says the same: this only answers before the round trip). */
export function commandProblem(command) {
  if (!command) return "Give the prompt a command: what you type after / to use it.";
  if (command.startsWith("/")) return "Give the command without its slash.";
  if (command.length > 32) return `A command is at most 32 characters (this one has ${command.length}).`;
  if (!/^[a-z0-9-]+$/u.test(command)) {
    return "Use only lowercase letters a–z, digits and hyphens, like summarize or fix-grammar (no spaces or capitals).";
  }
  return "";
}
