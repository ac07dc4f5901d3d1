// Work that may wait a moment (Markdown for finished text) runs here in slices, so no
// task grows long: opening a chat with long replies, or reloading in the middle of
// one, never freezes the page. Last in, first out: messages are drawn oldest first,
// so the newest — the ones on screen — come off the stack first. When the stack is
// empty nothing is scheduled (an idle page runs nothing).

const SLICE_MS = 12;
const stack = [];
let pending = false;
let gate = null; // while set, nothing runs: what the jobs need is still loading

/** Run `job` soon, in a task of its own or in the current one's spare time. */
export function later(job) {
  stack.push(job);
  kick();
}

/** Hold every job until `promise` settles (the Markdown module, at start). */
export function holdUntil(promise) {
  gate = promise;
  promise.finally(() => {
    if (gate === promise) gate = null;
    kick();
  });
}

export const held = () => gate !== null;

/** Run queued jobs now, newest first, for up to `ms` (what must be on the first paint). */
export function runFor(ms) {
  if (gate) return;
  const end = performance.now() + ms;
  while (stack.length && performance.now() < end) stack.pop()();
}

function kick() {
  if (pending || gate || !stack.length) return;
  pending = true;
  setTimeout(pump, 0);
}

function pump() {
  pending = false;
  runFor(SLICE_MS);
  kick();
}
