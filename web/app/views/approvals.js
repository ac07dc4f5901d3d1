// Tool approvals (docs/PROTOCOL.md "Approvals"): each tool's policy — for every chat in
// Settings, for one chat in its settings sheet — and the standing "always" rules, each
// removable. GET /api/approvals lists the tools (with `needs_approval`), the default
// policies, a chat's own, and the rules; PUT /api/approvals/policy sets one policy
// (`null` clears it); DELETE /api/approvals/rules removes one rule.
import { h } from "../dom.js";
import { get, put, del } from "../api.js";
import { app } from "../store.js";

const POLICY_TEXT = { ask: "Ask each time", allow: "Allow without asking", deny: "Deny (never runs)" };
// What the policy means, for the sentence after a change.
const POLICY_SAID = { ask: "asks each time", allow: "runs without asking", deny: "never runs" };

export function loadApprovals(chatId) {
  return get(`/api/approvals${chatId ? `?chat_id=${encodeURIComponent(chatId)}` : ""}`);
}

/** What applies when no policy is set: the tool's own (it asks when it declares so). */
const toolsOwn = (tool) => (tool.needs_approval ? "ask" : "allow");

let selects = 0;

/**
 * One select per tool. For every chat: "Tool's default (…)" + the three policies; for
 * one chat: "As for every chat (…)" + the three.
 * @param data the GET /api/approvals answer (kept up to date here after each change)
 * @param chatId the chat, or null for the default of every chat
 * @param say (sentence, isError) → void
 */
export function policyList(data, chatId, say) {
  // A policy is per tool name: a name listed twice (a plugin shadowing a built-in) is one row.
  const seen = new Set();
  const tools = data.tools.filter((t) => !seen.has(t.name) && seen.add(t.name));
  const rows = tools.map((tool) => {
    const id = `policy-${++selects}`;
    const inherited = () => {
      const own = toolsOwn(tool);
      if (!chatId) return `Tool's default (${POLICY_TEXT[own].toLowerCase()})`;
      const d = data.default[tool.name];
      return `As for every chat (${POLICY_TEXT[d || own].toLowerCase()})`;
    };
    const current = (chatId ? data.chat : data.default)[tool.name] || "";
    const first = h("option", { value: "" }, inherited());
    const select = h("select", { id, class: "policy-select", dataset: { tool: tool.name } },
      first, ...["ask", "allow", "deny"].map((p) => h("option", { value: p, selected: current === p }, POLICY_TEXT[p])));
    select.value = current;
    select.addEventListener("change", async () => {
      const policy = select.value || null;
      const before = (chatId ? data.chat : data.default)[tool.name] || "";
      select.disabled = true;
      try {
        await put("/api/approvals/policy", chatId ? { tool: tool.name, policy, chat_id: chatId } : { tool: tool.name, policy });
        const map = chatId ? data.chat : data.default;
        if (policy) map[tool.name] = policy; else delete map[tool.name];
        const now = policy || (chatId ? data.default[tool.name] : null) || toolsOwn(tool);
        say(`${tool.name} ${POLICY_SAID[now]}${chatId ? " in this chat" : " by default"}.`, false);
      } catch (err) {
        select.value = before;
        say(err.fields ? Object.values(err.fields).join(" ") : err.message, true);
      } finally {
        select.disabled = false;
      }
    });
    return h("div", { class: "policy-row", role: "listitem" },
      h("div", { class: "grow" },
        h("label", { for: id, class: "policy-name mono" }, tool.name),
        tool.needs_approval ? h("span", { class: "chip" }, "asks by default") : null,
        tool.description ? h("div", { class: "hint policy-desc", title: tool.description }, tool.description) : null),
      select);
  });
  if (!rows.length) return h("p", { class: "hint" }, "No tools are available.");
  return h("div", { class: "policy-list", role: "list", "aria-label": chatId ? "Tool policies in this chat" : "Tool policies for every chat" }, ...rows);
}

// Titles of chats a rule names that the chat list has not loaded (archived, older pages).
const titles = new Map();

async function chatTitle(chatId) {
  const listed = app.chats.find((c) => c.id === chatId);
  if (listed) return listed.title || "New chat";
  if (!titles.has(chatId)) {
    titles.set(chatId, get(`/api/chats/${encodeURIComponent(chatId)}`).then((c) => c.title || "New chat", () => null));
  }
  return titles.get(chatId);
}

/** What a rule allows, in words: the tool, and for the shell its one command, for web_fetch its one site. */
export function ruleText(rule) {
  if (rule.command != null) return `${rule.tool}: ${rule.command}`;
  if (rule.origin != null) return `${rule.tool}: ${rule.origin}`;
  return `${rule.tool} (any arguments)`;
}

/**
 * The standing "always" rules, each with Remove.
 * @param rules [{chat_id, tool, command?}]
 * @param withChat show which chat each rule belongs to (Settings lists every chat's)
 * @param removed called after a rule is removed (the list re-reads itself)
 */
export function rulesList(rules, { withChat, say, removed }) {
  if (!rules.length) {
    return h("p", { class: "hint rules-empty" },
      withChat ? "No standing rules. “Always allow” on an approval adds one for that chat."
        : "No standing rules in this chat. “Always allow” on an approval adds one.");
  }
  const items = rules.map((rule) => {
    const chatLabel = h("span", { class: "rule-chat" }, withChat ? rule.chat_id : "");
    if (withChat) {
      chatTitle(rule.chat_id).then((t) => { if (t) chatLabel.textContent = t; });
    }
    const exact = rule.command ?? rule.origin;
    const what = exact != null
      ? [h("span", { class: "mono rule-tool" }, rule.tool), h("code", { class: "rule-command" }, exact)]
      : [h("span", { class: "mono rule-tool" }, rule.tool), h("span", { class: "hint" }, "any arguments")];
    const remove = h("button", { type: "button", class: "ghost danger-text",
      "aria-label": `Remove the rule ${ruleText(rule)}${withChat ? "" : " from this chat"}`,
      onclick: async () => {
        remove.disabled = true;
        const body = { chat_id: rule.chat_id, rule: { tool: rule.tool } };
        if (rule.command != null) body.rule.command = rule.command;
        if (rule.origin != null) body.rule.origin = rule.origin;
        try {
          await del("/api/approvals/rules", body);
          say(`Removed: ${ruleText(rule)}. It asks again.`, false);
        } catch (err) {
          // 404: gone already (another window) — the list is read again either way.
          if (err.status !== 404) say(err.message, true);
        }
        removed();
      } }, "Remove");
    return h("li", { class: "rule-row", dataset: { chatId: rule.chat_id, tool: rule.tool } },
      h("div", { class: "grow rule-what" }, withChat ? chatLabel : null, ...what), remove);
  });
  return h("ul", { class: "rule-list", "aria-label": withChat ? "Always-allowed rules" : "Always-allowed rules in this chat" }, ...items);
}

/**
 * Settings → Tools and approvals: the default policy of each tool and every chat's rules.
 * Built once with the settings view; reads its data itself (and again after each change).
 */
export class ApprovalsSection {
  constructor() {
    this.status = h("p", { class: "hint approvals-status", role: "status" });
    this.policies = h("div", { class: "card approvals-policies" }, h("p", { class: "hint" }, "Loading the tools…"));
    this.rules = h("div", { class: "card approvals-rules" });
    this.el = h("div", { class: "approvals-settings" },
      h("p", { class: "hint" }, "Whether a tool runs when a model calls it: ask you each time, run without asking, or never run. "
        + "A chat's own setting (in its chat settings) comes first."),
      this.policies,
      h("h3", { id: "rules-title" }, "Always allowed"),
      this.rules, this.status);
    this.load();
  }

  say(text, isError) {
    this.status.textContent = text;
    this.status.classList.toggle("error-text", !!isError);
  }

  async load() {
    try {
      const data = await loadApprovals(null);
      this.data = data;
      this.policies.replaceChildren(policyList(data, null, (t, e) => this.say(t, e)));
      this.rules.replaceChildren(rulesList(data.rules, { withChat: true, say: (t, e) => this.say(t, e), removed: () => this.load() }));
    } catch (err) {
      this.policies.replaceChildren(h("p", { class: "field-error", role: "alert" }, `The tools could not be read: ${err.message}`));
    }
  }
}

/** The chat settings sheet's part: this chat's policy per tool and its rules. */
export function chatApprovals(chatId) {
  const status = h("p", { class: "hint approvals-status", role: "status" });
  const say = (text, isError) => { status.textContent = text; status.classList.toggle("error-text", !!isError); };
  const body = h("div", { class: "chat-approvals" }, h("p", { class: "hint" }, "Loading the tools…"));
  const load = async () => {
    try {
      const data = await loadApprovals(chatId);
      body.replaceChildren(
        policyList(data, chatId, say),
        h("h4", {}, "Always allowed in this chat"),
        rulesList(data.rules, { withChat: false, say, removed: load }));
    } catch (err) {
      body.replaceChildren(h("p", { class: "field-error", role: "alert" }, `The tools could not be read: ${err.message}`));
    }
  };
  load();
  return h("details", { class: "sheet-section chat-tools" },
    h("summary", {}, "Tool approvals in this chat"), body, status);
}
