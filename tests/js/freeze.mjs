// Deep-freeze a value: the reducer tests fold events over frozen states and events, so a
// reducer that mutates its input throws instead of passing.
export function deepFreeze(value) {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
