// The chat list's date groups (Today, Yesterday, Previous 7 days, Previous 30 days, then
// one per month), by each chat's `updated_at` in the person's time zone. Pure, so node
// can test it with a fixed "now" and offset (tests/js/date-groups.test.mjs).

const DAY_MS = 86_400_000;
const MONTHS = ["January", "February", "March", "April", "May", "June", "July",
  "August", "September", "October", "November", "December"];

/** Minutes east of UTC at `ms` in this browser's zone (Date's own offset is west, and varies with DST). */
export const localOffset = (ms) => -new Date(ms).getTimezoneOffset();

/** The local calendar day of `ms` as a day count, and its year and month. */
function localDay(ms, offsetOf) {
  const shifted = ms + offsetOf(ms) * 60_000;
  const d = new Date(shifted);
  return { day: Math.floor(shifted / DAY_MS), year: d.getUTCFullYear(), month: d.getUTCMonth() };
}

/** The group of one time: {key, label, rank} — a lower rank is shown higher. */
export function dateGroup(ms, now, offsetOf = localOffset) {
  const at = localDay(ms, offsetOf);
  const today = localDay(now, offsetOf);
  const ago = today.day - at.day;
  // A time a little ahead of this clock (another machine's, an import) is still today.
  if (ago <= 0) return { key: "today", label: "Today", rank: 0 };
  if (ago === 1) return { key: "yesterday", label: "Yesterday", rank: 1 };
  if (ago <= 7) return { key: "week", label: "Previous 7 days", rank: 2 };
  if (ago <= 30) return { key: "month", label: "Previous 30 days", rank: 3 };
  const label = `${MONTHS[at.month]} ${at.year}`;
  // Months after the fixed groups, newest first.
  return { key: `m${at.year}-${at.month + 1}`, label, rank: 4 + (today.year - at.year) * 12 + (today.month - at.month) };
}

/**
 * Chats in date groups, newest group first, each group in the order given (the list's).
 * One group per label however the chats arrive (pages appended, a frame moving one up).
 * @param {object[]} chats  each with `updated_at` (ISO 8601)
 * @param {{now?: number, offsetOf?: (ms: number) => number}} opts  offsetOf: minutes east of UTC
 * @returns {{key: string, label: string, chats: object[]}[]}
 */
export function groupByDate(chats, { now = Date.now(), offsetOf = localOffset } = {}) {
  const groups = new Map();
  for (const chat of chats) {
    const ms = Date.parse(chat.updated_at);
    const g = Number.isFinite(ms) ? dateGroup(ms, now, offsetOf) : { key: "today", label: "Today", rank: 0 };
    if (!groups.has(g.key)) groups.set(g.key, { key: g.key, label: g.label, rank: g.rank, chats: [] });
    groups.get(g.key).chats.push(chat);
  }
  return [...groups.values()].sort((a, b) => a.rank - b.rank).map(({ key, label, chats: items }) => ({ key, label, chats: items }));
}

/** The local day `now` falls on, as a count: a list drawn before midnight is regrouped after it. */
export const dayStamp = (now = Date.now(), offsetOf = localOffset) => localDay(now, offsetOf).day;
