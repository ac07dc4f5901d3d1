// What a part of a view reads, declared next to it: the part is drawn again only when one
// of its inputs changed (compared by identity, so the fold's unchanged state costs one
// `===` per input), and it reads its inputs only through what read() returns, which
// throws on a name it did not declare. A part that starts reading something new fails at
// once until it declares it, instead of being skipped when only that changed.
//
// Pure, no DOM (tests/js/view-inputs.test.mjs); the chat view's parts use it
// (web/app/views/chat.js and the modules beside it).

export class Inputs {
  /** @param selectors {name: (source) → value}: each input, read from the frame's source */
  constructor(selectors) {
    this.selectors = Object.entries(selectors);
    for (const [name, pick] of this.selectors) {
      if (typeof pick !== "function") throw new TypeError(`input ${name} has no selector`);
    }
    this.last = null;
  }

  /** The inputs now (read-only, declared names only), or null when each is what it was at the last read. */
  read(source) {
    const now = {};
    let changed = this.last === null;
    for (const [name, pick] of this.selectors) {
      const value = pick(source);
      now[name] = value;
      if (!changed && value !== this.last[name]) changed = true;
    }
    if (!changed) return null;
    this.last = now;
    return declaredOnly(now);
  }

  /** The next read returns the inputs whatever they are (what was drawn from them was undone). */
  forget() {
    this.last = null;
  }
}

function declaredOnly(values) {
  return new Proxy(values, {
    get(target, name) {
      if (typeof name === "string" && !(name in target)) throw new ReferenceError(`input ${name} is not declared`);
      return target[name];
    },
    set(target, name) {
      throw new TypeError(`input ${String(name)} is read-only`);
    },
  });
}
