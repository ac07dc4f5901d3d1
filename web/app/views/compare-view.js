// A compare's columns (CONTRACT §10): one per model, side by side (stacked on a narrow
// window), under the message that asked them. Each column streams its model's reply and says
// its model, how long the first token took, its speed, tokens and cost; "Use this" makes that
// reply the chat's (the conversation goes on from it); "Compare again" asks the same models
// the same message once more. Model text goes in only as sanitized Markdown (StreamRenderer).
import { h } from "../dom.js";
import { modelLabel } from "../store.js";
import { StreamRenderer } from "../stream-render.js";
import { columnFigures, activeColumn } from "../../js/compare.js";
import { errorText } from "./message.js";
import { toast } from "./toast.js";

const STATUS = { streaming: "writing…", complete: "done", cancelled: "stopped", error: "failed",
                 interrupted: "interrupted", limit: "failed" };

/** A column's figures as short texts, each with what it measures. */
export function figureChips(fig, liveTtftMs) {
  const out = [];
  const ttft = fig.ttftMs ?? liveTtftMs;
  if (ttft != null) out.push([`${(ttft / 1000).toFixed(2)} s to first token`, "time to first token"]);
  if (fig.tokensPerS) out.push([`${Number(fig.tokensPerS).toFixed(1)} tok/s`, "output speed"]);
  if (fig.tokens) out.push([`${fig.estimated ? "≈" : ""}${fig.tokens} tok`, "output tokens"]);
  if (fig.cost != null) out.push([`$${Number(fig.cost).toFixed(fig.cost < 0.01 ? 4 : 3)}`, "cost from the model's catalog prices"]);
  return out;
}

class Column {
  constructor(actions) {
    this.actions = actions;
    this.name = h("span", { class: "compare-model" });
    this.state = h("span", { class: "compare-state" });
    this.chosen = h("span", { class: "compare-chosen", hidden: true }, "In the chat");
    this.use = h("button", { type: "button", class: "ghost compare-use", onclick: () => this.actions.use(this.col.messageId) },
      "Use this");
    this.tools = h("ul", { class: "compare-tools", hidden: true });
    this.body = h("div", { class: "msg-body md compare-body" });
    this.error = h("p", { class: "msg-error compare-error", role: "alert", hidden: true });
    this.figures = h("div", { class: "msg-usage compare-figures" });
    this.el = h("section", { class: "compare-column" },
      h("header", { class: "compare-head" }, this.name, this.state, this.chosen), this.tools, this.body, this.error,
      h("footer", { class: "compare-foot" }, this.figures, this.use));
    this.renderer = new StreamRenderer(this.body);
    this.startedAt = performance.now(); // for the time to its first token, while it is only live
    this.liveTtft = null;
  }

  update(col, { active, running }) {
    this.col = col;
    // One step (a reply without tools) is its text as it is: no copy of a growing string per frame.
    const text = col.steps.length === 1 ? col.steps[0].content
      : col.steps.map((s) => s.content).filter(Boolean).join("\n\n");
    if (text && this.liveTtft == null && col.status === "streaming") this.liveTtft = performance.now() - this.startedAt;
    const label = modelLabel(col.modelId);
    if (this.name.textContent !== label) this.name.textContent = label;
    // Nothing written yet: a local server that runs one model at a time holds this one back.
    const state = col.status === "streaming" && !text ? "Waiting for the model…" : STATUS[col.status] || col.status;
    if (this.state.textContent !== state) this.state.textContent = state;
    this.el.dataset.status = col.status;
    this.el.classList.toggle("chosen", active);
    this.chosen.hidden = !active;
    // A failed column with nothing written has nothing to carry on from.
    this.use.hidden = active || (col.status === "error" && !text);
    // Until every column has ended the chat cannot switch (the server says busy).
    this.use.disabled = running || col.status === "streaming" || !text;
    this.use.setAttribute("aria-label", `Use ${label}'s reply: the chat goes on from it`);
    this.renderer.update(text, col.status !== "streaming");
    this.body.setAttribute("aria-busy", String(col.status === "streaming"));
    const calls = col.steps.flatMap((s) => s.toolCalls);
    this.tools.hidden = !calls.length;
    const callsKey = calls.map((c) => `${c.id}:${c.state}:${c.ok}`).join();
    if (this.callsKey !== callsKey) {
      this.callsKey = callsKey;
      this.tools.replaceChildren(...calls.map((c) => h("li", { class: "compare-tool", dataset: { state: c.state } },
        `${c.name} · ${c.state === "done" ? (c.ok === false ? "failed" : "done") : "running…"}`)));
    }
    const error = col.status === "error" ? errorText(col.error) || "This model's reply failed." : "";
    this.error.hidden = !error;
    if (this.error.textContent !== error) this.error.textContent = error;
    const chips = figureChips(columnFigures(col), this.liveTtft);
    const key = JSON.stringify(chips);
    if (this.figuresKey !== key) {
      this.figuresKey = key;
      this.figures.replaceChildren(...chips.map(([t, title]) => h("span", { class: "chip", title }, t)));
    }
  }
}

export class CompareBlock {
  /** @param actions {{use(messageId), again(), load()}} */
  constructor(actions) {
    this.actions = actions;
    this.columns = new Map(); // model id → Column
    this.title = h("span", { class: "compare-title" });
    this.again = h("button", { type: "button", class: "ghost compare-again", onclick: () => this.actions.again() },
      "Compare again");
    this.grid = h("div", { class: "compare-grid" });
    this.el = h("div", { class: "compare", role: "group", "aria-label": "Compared replies" },
      h("div", { class: "compare-bar" }, this.title, this.again), this.grid);
  }

  /**
   * @param entry the compare's state (web/js/compare.js), or null while it is read
   * @param ctx {{branchIds: Set<number>, running: boolean, models: string[]}}
   */
  update(entry, ctx) {
    if (!entry) {
      this.title.textContent = `Comparing ${ctx.models.length} models…`;
      this.again.hidden = true;
      return;
    }
    const active = activeColumn(entry, ctx.branchIds);
    const busy = entry.running || ctx.running;
    this.title.textContent = entry.running ? `Comparing ${entry.columns.length} models`
      : `${entry.columns.length} models compared`;
    this.again.hidden = false;
    this.again.disabled = busy;
    const live = new Set();
    const order = [];
    for (const col of entry.columns) {
      let view = this.columns.get(col.modelId);
      if (!view) {
        view = new Column(this.actions);
        this.columns.set(col.modelId, view);
      }
      view.update(col, { active: col === active && !entry.running, running: busy });
      live.add(col.modelId);
      order.push(view.el);
    }
    for (const [id, view] of this.columns) if (!live.has(id)) { view.el.remove(); this.columns.delete(id); }
    order.forEach((el, i) => { if (this.grid.children[i] !== el) this.grid.insertBefore(el, this.grid.children[i] || null); });
  }
}

const asksCompare = (m) => m.role === "user" && Array.isArray(m.compare) && m.status !== "queued";

/** The chat's compares: a block per message that asked one, made once, updated as its columns stream. */
export class CompareBlocks {
  /** @param session the ChatSession; @param again(m) sends message m's text to its models once more */
  constructor(session, again) {
    this.session = session;
    this.again = again;
    this.blocks = new Map(); // the asking message's id → its CompareBlock
  }

  /** The element of each compare's block, by the id of the message it goes after. */
  placed(messages) {
    return messages.filter(asksCompare).map((m) => [m.id, this._block(m).el]);
  }

  /** Each compare's columns as its state stands (read from the server when this window has none). */
  update({ compares, shown, running }) {
    const branchIds = new Set(shown.map((m) => m.id));
    for (const m of shown.filter(asksCompare)) {
      const entry = compares[m.id] || null;
      if (!entry) this.session.loadCompare(m.id);
      this._block(m).update(entry, { branchIds, running, models: m.compare });
    }
  }

  /** Take out the blocks not among `kept` (elements the thread placed). */
  prune(kept) {
    for (const [id, block] of this.blocks) if (!kept.has(block.el)) { block.el.remove(); this.blocks.delete(id); }
  }

  _block(m) {
    let block = this.blocks.get(m.id);
    if (!block) {
      block = new CompareBlock({
        use: async (messageId) => {
          try {
            await this.session.useReply(messageId);
          } catch (err) {
            toast(err.message || "That reply could not be made the chat's.");
          }
        },
        again: () => this.again(m),
      });
      this.blocks.set(m.id, block);
    }
    return block;
  }
}
