// "Inspect request" (the chat header's ⋯ menu): a sheet showing the request the chat's
// next turn would send (GET /api/chats/{id}/inspect, CONTRACT §6), for whichever wire API
// its model uses — wire API, model and address, the system text, each message with its
// token count, the tools offered and the other parameters, then the whole body as JSON.
// The server leaves secrets out and puts an image's size and hash where its bytes were;
// every string here is shown as text (web/js/inspect-request.js reads the body).
import { h, copyText } from "../dom.js";
import { get } from "../api.js";
import { sheet } from "./dialogs.js";
import { readRequest } from "../../js/inspect-request.js";

const count = (n) => (n == null ? "" : `${n.toLocaleString("en-US")} tokens`);

export async function openInspector(chatId) {
  const status = h("p", { class: "hint inspect-status", role: "status" }, "Reading the next request…");
  const body = h("div", { class: "inspect-body" });
  const d = sheet("Next request", status, body);
  d.classList.add("inspect-sheet");
  let answer;
  try {
    answer = await get(`/api/chats/${encodeURIComponent(chatId)}/inspect`);
  } catch (err) {
    status.textContent = err.message;
    status.setAttribute("role", "alert");
    return;
  }
  if (!d.open) return;
  const r = readRequest(answer);
  status.textContent = r.total != null ? `${count(r.total)} in all, without your next message.` : "Without your next message.";
  const pre = (text, cls = "") => h("pre", { class: `inspect-pre ${cls}`.trim() }, text);
  const section = (title, tokens, ...children) => h("section", { class: "inspect-section" },
    h("h3", {}, title, tokens != null ? h("span", { class: "hint inspect-tokens" }, ` · ${count(tokens)}`) : null), ...children);
  const raw = JSON.stringify(answer.body ?? {}, null, 2);
  const copy = h("button", { type: "button", class: "ghost", onclick: async () => {
    copy.textContent = await copyText(raw) ? "Copied" : "Could not copy";
  } }, "Copy JSON");
  body.replaceChildren(
    h("dl", { class: "inspect-facts" },
      h("dt", {}, "Wire API"), h("dd", {}, r.wireName || "—"),
      h("dt", {}, "Model"), h("dd", { class: "mono" }, r.model || "—"),
      h("dt", {}, "Address"), h("dd", { class: "mono" }, r.url || "—")),
    section("System text", r.system?.tokens ?? null, r.system ? pre(r.system.text) : h("p", { class: "hint" }, "None.")),
    section(`Messages (${r.messages.length})`, null, r.messages.length
      ? h("ol", { class: "inspect-messages" }, ...r.messages.map((m) => h("li", { class: "inspect-message", dataset: { role: m.role } },
        h("div", { class: "inspect-role" }, h("span", { class: "role-name" }, m.role), m.tokens != null ? h("span", { class: "hint" }, ` · ${count(m.tokens)}`) : null),
        pre(m.text))))
      : h("p", { class: "hint" }, "None yet: your next message will be the first.")),
    section(`Tools offered (${r.tools.length})`, r.toolsTokens, r.tools.length
      ? h("ul", { class: "inspect-tools" }, ...r.tools.map((t) => h("li", {}, h("code", {}, t.name), t.description ? ` — ${t.description}` : "")))
      : h("p", { class: "hint" }, "None.")),
    section("Parameters", null, h("dl", { class: "inspect-params" },
      ...r.params.flatMap(([k, v]) => [h("dt", { class: "mono" }, k), h("dd", { class: "mono" }, v)]))),
    h("details", { class: "inspect-section inspect-raw" }, h("summary", {}, "The whole request body (JSON)"),
      h("div", { class: "row" }, copy), pre(raw)));
}
