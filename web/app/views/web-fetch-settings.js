// Settings → Web fetch (settings.web_fetch, docs/PROTOCOL.md "Fetching and your own network"):
// the sites on this computer or a private network that web_fetch and research may read without
// asking, one origin a line. Saved when the field is left; what the server refuses is said under
// it and the saved list stays.
import { h } from "../dom.js";
import { patch } from "../api.js";
import { app, schedule } from "../store.js";

export class WebFetchSection {
  constructor() {
    const id = "set-web-fetch-private";
    this.error = h("p", { class: "field-error", id: `${id}-error`, role: "alert" });
    this.input = h("textarea", { id, class: "mono", rows: 3, spellcheck: false, autocomplete: "off",
      placeholder: "http://127.0.0.1:8123\nhttp://wiki.lan", "aria-describedby": `${id}-hint ${id}-error`,
      onchange: () => this._save() });
    this.el = h("div", { class: "card web-fetch-settings" },
      h("p", { class: "hint" }, "Pages on this computer or your own network (a router, a NAS, a cloud server's "
        + "metadata) are never fetched because a model or a web page named them: only an address you type in "
        + "your message or approve, or a site listed here."),
      h("div", { class: "field s-row" }, h("label", { for: id }, "Local sites you trust"), this.input,
        h("p", { class: "hint", id: `${id}-hint` }, "One origin a line (scheme, host and port, no path), "
          + "such as an intranet wiki. Everything on it may be read."),
        this.error));
  }

  async _save() {
    const origins = this.input.value.split("\n").map((line) => line.trim()).filter(Boolean);
    try {
      app.settings = await patch("/api/settings", { web_fetch: { allow_private: origins } });
      schedule();
      this.update(true);
    } catch (err) {
      this.error.textContent = err.fields?.["web_fetch.allow_private"] || err.message;
      this.input.setAttribute("aria-invalid", "true");
    }
  }

  /** Show the saved list; `force` also over the field being typed in, and clears what was said. */
  update(force = false) {
    const saved = app.settings?.web_fetch;
    if (!saved) return;
    if (!force && (document.activeElement === this.input || this.input.hasAttribute("aria-invalid"))) return;
    this.input.value = saved.allow_private.join("\n");
    this.input.removeAttribute("aria-invalid");
    this.error.textContent = "";
  }
}
