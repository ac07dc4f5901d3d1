// A search result's snippet cut into plain and highlighted pieces, from the offsets
// GET /api/search gives (`highlights`: [start, end) pairs counting code points, so an
// emoji before a hit does not shift it). Pure: the view turns the pieces into text
// nodes and <mark> elements; nothing here is ever parsed as markup.

/** [{text, hit}] covering all of `snippet`; ranges out of order, overlapping or out of bounds are skipped. */
export function splitHits(snippet, ranges) {
  const chars = Array.from(String(snippet ?? ""));
  const out = [];
  let at = 0;
  for (const range of Array.isArray(ranges) ? ranges : []) {
    const [a, b] = Array.isArray(range) ? range : [];
    if (!Number.isInteger(a) || !Number.isInteger(b) || a < at || b <= a || b > chars.length) continue;
    if (a > at) out.push({ text: chars.slice(at, a).join(""), hit: false });
    out.push({ text: chars.slice(a, b).join(""), hit: true });
    at = b;
  }
  if (at < chars.length) out.push({ text: chars.slice(at).join(""), hit: false });
  return out;
}
