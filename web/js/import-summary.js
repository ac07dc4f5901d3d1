/**
 * The sentence an import ends with, from `POST /api/import`'s answer: what was made, what
 * was already here from an earlier import, and which of those gained messages.
 */
export function importSummary(body, fileName) {
  const made = body?.chat_ids?.length ?? 0;
  const updated = body?.updated?.length ?? 0;
  const already = body?.already ?? 0;
  const chats = (n) => `${n} chat${n === 1 ? "" : "s"}`;
  if (!made && !already) return `${fileName} holds no chats to import.`;
  const parts = [];
  if (made) parts.push(`Imported ${chats(made)} from ${fileName}`);
  if (already) {
    const were = already === 1 ? "was" : "were";
    const what = made ? `${already} ${were} already here` : `${chats(already)} from ${fileName} ${were} already here`;
    parts.push(updated ? `${what} (new messages added to ${updated})` : what);
  }
  const text = parts.join("; ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}
