// What the documents panel hands the composer and the disk (pure, no DOM; node-tested): a
// selection or a preview's error quoted into the next message, the file name a download or a
// workspace save takes, and the panel's small sentences.
//
// A quote is data, not markup: the text goes into the person's message inside a code fence
// longer than any run of backticks it holds, so nothing in it can close the fence early. The
// message carries it as the text the person sends (shown in their bubble, seen by the model),
// which is the honest way: what the model reads is what the person sees they sent.

export const QUOTE_MAX = 20_000; // characters of a selection quoted (a long one is cut, saying so)

/** A code fence for `text`: three backticks, or one more than the longest run in it. */
export function fence(text) {
  let longest = 0;
  for (const run of String(text).match(/`+/g) || []) longest = Math.max(longest, run.length);
  return "`".repeat(Math.max(3, longest + 1));
}

const range = (from, to) => (from === to ? `line ${from}` : `lines ${from}–${to}`);

/** How a document is named in a quote: “title” (id, version N). */
function named(doc) {
  const version = doc.version ? `, version ${doc.version}` : "";
  return `“${doc.title || "Untitled"}” (${doc.id}${version})`;
}

function cut(text) {
  return text.length > QUOTE_MAX ? { text: text.slice(0, QUOTE_MAX), cut: text.length - QUOTE_MAX } : { text, cut: 0 };
}

/**
 * A selected range of a document as the composer attaches it: {kind, label, text}. `doc`:
 * {id, title, language, version}; `fromLine`, `toLine` 1-based; `text` the selected text.
 */
export function selectionQuote(doc, fromLine, toLine, text) {
  const body = cut(String(text));
  const f = fence(body.text);
  const lang = doc.language && doc.language !== "text" ? doc.language : "";
  const more = body.cut ? `\n(${body.cut.toLocaleString("en")} more characters of the selection left out)` : "";
  return {
    kind: "selection",
    label: `${doc.title || "Untitled"}, ${range(fromLine, toLine)}`,
    text: `In ${named(doc)}, ${range(fromLine, toLine)}:\n${f}${lang}\n${body.text}\n${f}${more}`,
  };
}

/** A preview's uncaught error ({message, line, column}) as the composer attaches it. */
export function errorQuote(doc, error) {
  const where = Number.isInteger(error.line) ? ` (line ${error.line}${Number.isInteger(error.column) ? `, column ${error.column}` : ""})` : "";
  const message = String(error.message ?? "").slice(0, 2000);
  const f = fence(message);
  return {
    kind: "error",
    label: `Error in ${doc.title || "Untitled"}`,
    text: `The preview of ${named(doc)} reported this error${where}; please fix it:\n${f}text\n${message}\n${f}`,
  };
}

/** The message sent: the attached quotes first, each a paragraph, then what the person typed. */
export function composeMessage(quotes, typed) {
  const parts = (quotes || []).map((q) => q.text);
  if (String(typed ?? "").trim()) parts.push(typed);
  return parts.join("\n\n");
}

/**
 * The file name a document is downloaded or saved as: its title made safe for a file system,
 * with its language's extension unless the title already ends with it ("fib.py" stays).
 */
export function fileName(title, extension) {
  const ext = /^\.[A-Za-z0-9]{1,10}$/.test(extension || "") ? extension : ".txt";
  let stem = String(title ?? "").replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, " ").replace(/\s+/g, " ").trim();
  stem = stem.replace(/^\.+/, "").slice(0, 120).trim();
  if (!stem) stem = "document";
  return stem.toLowerCase().endsWith(ext.toLowerCase()) ? stem : stem + ext;
}

/** Who wrote a version, in words. */
export function authorWord(author) {
  return author === "person" ? "you" : author === "model" ? "the model" : "—";
}

/** The header button's label for `count` documents. */
export function documentsLabel(count) {
  return count === 1 ? "1 document" : `${count.toLocaleString("en")} documents`;
}

/** Languages the preview origin draws (docs/PROTOCOL.md "Document previews"). */
export const PREVIEWABLE = new Set(["html", "svg", "mermaid", "markdown"]);

export function previewable(language) {
  return PREVIEWABLE.has(String(language || "").toLowerCase());
}

/**
 * A preview frame's message, as the panel takes it: {message, line, column} when it is a
 * `numi-preview-error` of the right shape, else null. The caller has already checked it came
 * from the frame it shows (event.source); its data is as untrusted as the document.
 */
export function previewError(data) {
  if (!data || typeof data !== "object" || data.type !== "numi-preview-error" || typeof data.message !== "string") return null;
  const num = (v) => (Number.isInteger(v) && v >= 0 ? v : null);
  return { message: data.message.slice(0, 2000), line: num(data.line), column: num(data.column) };
}
