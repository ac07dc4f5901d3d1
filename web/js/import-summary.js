/**
 * The sentence an import ends with, from `POST /api/import`'s answer: what was made, what
 * was already here from an earlier import, and which of those gained messages; then the
 * prompts the file brought (`prompts`: added, already here, and commands whose prompt here was kept).
 */
export function importSummary(body, fileName) {
  const made = body?.chat_ids?.length ?? 0;
  const updated = body?.updated?.length ?? 0;
  const already = body?.already ?? 0;
  const added = body?.prompts?.added ?? 0;
  const samePrompts = body?.prompts?.already ?? 0;
  const clashed = body?.prompts?.clashed ?? [];
  const chats = (n) => `${n} chat${n === 1 ? "" : "s"}`;
  const prompts = (n) => `${n} prompt${n === 1 ? "" : "s"}`;
  if (!made && !already && !added && !samePrompts && !clashed.length) return `${fileName} holds no chats to import.`;
  const sentences = [];
  if (made || already) {
    const parts = [];
    if (made) parts.push(`Imported ${chats(made)} from ${fileName}`);
    if (already) {
      const were = already === 1 ? "was" : "were";
      const what = made ? `${already} ${were} already here` : `${chats(already)} from ${fileName} ${were} already here`;
      parts.push(updated ? `${what} (new messages added to ${updated})` : what);
    }
    const text = parts.join("; ");
    sentences.push(`${text.charAt(0).toUpperCase()}${text.slice(1)}.`);
  }
  if (added) sentences.push(sentences.length ? `Added ${prompts(added)}.` : `Imported ${prompts(added)} from ${fileName}.`);
  else if (samePrompts && !sentences.length) {
    sentences.push(`${prompts(samePrompts)} from ${fileName} ${samePrompts === 1 ? "was" : "were"} already here.`);
  }
  if (clashed.length) {
    const names = clashed.map((c) => `/${c}`);
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
    sentences.push(names.length === 1
      ? `Kept your ${list}: the file's prompt with the same command was left out.`
      : `Kept your ${list}: the file's prompts with the same commands were left out.`);
  }
  return sentences.join(" ");
}
