// "Add a provider" form, shared by Settings and the first-run screen. Field
// errors from a 422 are shown next to their fields; the key goes to the OS keyring.
import { h } from "../dom.js";
import { post } from "../api.js";
import { app } from "../store.js";
import { KIND_LABEL, BASE_URL_HINT } from "../catalog.js";

let uid = 0;

/** Where a key typed now will be kept, as GET /api/settings `keyring` says (one sentence). */
export function keyKeptWhere(keyring) {
  if (keyring?.available) return "Kept in the system keyring, never in Numi's files.";
  if (keyring?.cause) return `Kept for this run only, because ${keyring.cause}.`;
  return "Never kept in Numi's files.";
}

const keyHint = () => `${keyKeptWhere(app.settings?.keyring)} Local servers usually need none.`;

/** Say again where keys go in every open form (after Settings looked for the keyring again). */
export function refreshKeyHints() {
  for (const el of document.querySelectorAll(".hint[data-key-kept]")) el.textContent = keyHint();
}

export function providerForm({ onAdded, submitLabel = "Add provider", kind = "openai_compatible" }) {
  const id = (n) => `pf${uid}-${n}`;
  uid += 1;
  const field = (name, label, input, help) => {
    input.id = id(name);
    // The help and the server's complaint are read with the field, not only where they sit.
    const hint = help ? h("div", { class: "hint", id: id(name) + "-hint" }, help) : null;
    const err = h("div", { class: "field-error", id: id(name) + "-err", role: "alert" });
    input.setAttribute("aria-describedby", [hint?.id, err.id].filter(Boolean).join(" "));
    errors[name] = { err, input };
    // The server's complaint is about what was sent: once the person changes the field, it is gone.
    const edited = () => {
      if (!err.textContent) return;
      showError(name, "");
      if (!Object.values(errors).some((e) => e.err.textContent)) status.textContent = "";
    };
    input.addEventListener("input", edited);
    input.addEventListener("change", edited);
    return h("div", { class: "field" }, h("label", { for: input.id }, label), input, hint, err);
  };
  const showError = (name, msg) => {
    errors[name].err.textContent = msg;
    if (msg) errors[name].input.setAttribute("aria-invalid", "true");
    else errors[name].input.removeAttribute("aria-invalid");
  };
  const errors = {};
  const kindSel = h("select", {}, ...Object.entries(KIND_LABEL).map(([v, t]) => h("option", { value: v, selected: v === kind }, t)));
  const name = h("input", { type: "text", autocomplete: "off", placeholder: "e.g. Ollama", maxlength: 100 });
  const baseUrl = h("input", { type: "url", autocomplete: "off", spellcheck: false });
  const apiKey = h("input", { type: "password", autocomplete: "off", placeholder: "sk-…" });
  const status = h("div", { class: "form-status", role: "status" });
  const submit = h("button", { type: "submit", class: "primary" }, submitLabel);
  let addressHint = null; // a found server's address, shown as the example for its kind
  const syncKind = () => {
    baseUrl.placeholder = (kindSel.value === addressHint?.kind && addressHint.url) || BASE_URL_HINT[kindSel.value];
    if (!name.value || Object.values(KIND_LABEL).includes(name.dataset.auto)) {
      const auto = kindSel.value === "openai_compatible" ? "" : KIND_LABEL[kindSel.value];
      name.value = auto;
      name.dataset.auto = auto;
    }
  };
  let kindChosen = false; // the person picked a kind: a late suggestion must not change it
  kindSel.addEventListener("change", () => { kindChosen = true; syncKind(); });
  syncKind();
  const form = h("form", { class: "provider-form", novalidate: true },
    field("kind", "Kind", kindSel),
    field("name", "Name", name),
    field("base_url", "API address", baseUrl, "For OpenAI-compatible servers: the root including /v1."),
    field("api_key", "API key", apiKey, keyHint()),
    h("div", { class: "form-row" }, submit, status));
  form.querySelector(`#${id("api_key")}-hint`).dataset.keyKept = "";
  const clear = () => {
    name.value = baseUrl.value = apiKey.value = "";
    kindSel.value = kind;
    kindChosen = false;
    syncKind();
  };
  /** Start on `kind` (what was found on this computer) with `url` as the address example, unless a kind was picked. */
  form.startOn = (startKind, url) => {
    kind = startKind;
    addressHint = { kind: startKind, url };
    if (kindChosen || (name.value && name.value !== name.dataset.auto) || baseUrl.value.trim() || apiKey.value) return;
    kindSel.value = startKind;
    syncKind();
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    Object.keys(errors).forEach((k) => showError(k, ""));
    status.textContent = "Adding…";
    submit.disabled = true;
    const body = { kind: kindSel.value, name: name.value.trim() || KIND_LABEL[kindSel.value] };
    if (baseUrl.value.trim()) body.base_url = baseUrl.value.trim();
    if (apiKey.value.trim()) body.api_key = apiKey.value.trim();
    try {
      const provider = await post("/api/providers", body);
      status.textContent = "";
      apiKey.value = "";
      await onAdded(provider, status);
      clear(); // connected: the form is ready for another provider, not showing this one
    } catch (err) {
      status.textContent = err.fields ? "Check the fields above." : err.message;
      for (const [k, msg] of Object.entries(err.fields || {})) if (errors[k]) showError(k, msg);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
