// A reply whose model called tools and then answered is one answer in the thread: its steps
// (each an assistant message of the branch, with the tool results between them) are read as
// one, with one label, one set of actions and the turn's token total. Pure: no DOM, tested
// in tests/js/answer-steps.test.mjs.

/** Add up the steps' usage: tokens in and out, estimated when any step's was; cost when every counted step has one. */
export function addUsage(usages) {
  const counted = usages.filter((u) => u && (u.input_tokens || u.output_tokens));
  if (!counted.length) return null;
  const sum = (k) => counted.reduce((n, u) => n + (Number(u[k]) || 0), 0);
  const total = { input_tokens: sum("input_tokens"), output_tokens: sum("output_tokens") };
  if (counted.some((u) => u.estimated)) total.estimated = true;
  if (counted.some((u) => u.reasoning_tokens)) total.reasoning_tokens = sum("reasoning_tokens");
  if (counted.every((u) => typeof u.cost === "number")) total.cost = sum("cost");
  return total;
}

/**
 * The answers of a branch: message id → `{first, position, steps, usage}` for every assistant
 * message that is one step of a reply of several. `position` is "first", "middle" or "last";
 * `first` the id of the answer's first step; `steps` how many; `usage` the answer's total
 * (on its last step only). An answer runs from the first assistant message after a user
 * message to the last before the next one; tool results in between belong to it. A reply of
 * one step is not listed.
 * @param messages the shown messages, in order ({id, role, usage})
 */
export function answerSteps(messages) {
  const out = new Map();
  let run = [];
  const close = () => {
    if (run.length > 1) {
      const usage = addUsage(run.map((m) => m.usage));
      run.forEach((m, i) => out.set(m.id, {
        first: run[0].id, steps: run.length,
        position: i === 0 ? "first" : i === run.length - 1 ? "last" : "middle",
        usage: i === run.length - 1 ? usage : null,
      }));
    }
    run = [];
  };
  for (const m of messages || []) {
    if (m.role === "assistant") run.push(m);
    else if (m.role !== "tool") close(); // a user (or system) message starts the next answer
  }
  close();
  return out;
}
