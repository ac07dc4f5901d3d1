// Settings → Knowledge (CONTRACT §8): the knowledge bases, each with its state (indexing, with
// the file being read, or ready), its documents and chunks counted, the files it could not
// read and why; making one (a name and its folders or files, one full path per line);
// renaming it, changing its paths, deleting it (asked first); its documents listed (each
// opens in the viewer); and a search box that runs POST …/query, so a base can be tried
// without a model. Results and documents open in the viewer (views/knowledge-viewer.js).
//
// With an embeddings model (settings.knowledge.embeddings: an OpenAI or OpenAI-compatible
// provider's /v1/embeddings) bases are searched by meaning as well as by words.
//
// A base's card is kept while the base is, and updated in place: a redraw never eats a
// query or a path being typed. While any base is being read or embedded the list is read
// again every POLL_MS, for as long as the section is on screen.
import { h } from "../dom.js";
import { del, get, patch, post } from "../api.js";
import { confirmSheet } from "./folders.js";
import { app, schedule } from "../store.js";
import { baseStatus, busy, embeddingsStatus, locatorLabel, parsePaths } from "../../js/knowledge.js";

const enc = encodeURIComponent;
const POLL_MS = 1000;
let seq = 0;

function fieldText(err, name) {
  return err.fields?.[name] || "";
}

function openViewer(source) {
  import("./knowledge-viewer.js").then((m) => m.openKnowledgeViewer(source));
}

export class KnowledgeSection {
  constructor() {
    this.cards = new Map(); // base id → BaseCard
    this.list = h("div", { class: "kb-list", "aria-live": "polite", "aria-busy": "true" });
    this.empty = h("p", { class: "hint kb-empty", hidden: true },
      "No knowledge bases yet. Make one below from folders or files on this computer.");
    this.error = h("p", { class: "field-error kb-load-error", role: "alert" });
    this.el = h("div", { class: "knowledge" },
      h("p", { class: "hint" }, "A knowledge base is folders and files on this computer, read into an index that stays "
        + "here. Chats you give it to can search it, and their replies cite the file and page, heading or lines; "
        + "the citation opens the file inside Numi. Folders are watched: what changes in them is read again."),
      this.error, this.list, this.empty, this._createForm(), this._embeddingsForm());
    this.timer = null;
    this.load();
  }

  /** Read the bases again; again in a moment while any is indexing and the section is shown. */
  async load() {
    clearTimeout(this.timer);
    this.timer = null;
    try {
      const { items } = await get("/api/knowledge");
      this.error.textContent = "";
      this._draw(items);
      if (busy(items)) {
        this.timer = setTimeout(() => { if (this.el.isConnected) this.load(); }, POLL_MS);
      }
    } catch (err) {
      this.error.textContent = `The knowledge bases could not be read: ${err.message}`;
    } finally {
      this.list.setAttribute("aria-busy", "false");
    }
  }

  _draw(items) {
    const ids = new Set(items.map((b) => b.id));
    for (const [id, card] of this.cards) if (!ids.has(id)) { card.el.remove(); this.cards.delete(id); }
    items.forEach((b) => {
      let card = this.cards.get(b.id);
      if (!card) {
        card = new BaseCard(b, { changed: () => this.load() });
        this.cards.set(b.id, card);
      }
      card.update(b);
    });
    const order = items.map((b) => this.cards.get(b.id).el);
    if (order.some((el, i) => this.list.children[i] !== el) || this.list.children.length !== order.length) {
      this.list.replaceChildren(...order);
    }
    this.empty.hidden = items.length > 0;
  }

  /** Search by meaning: the embeddings model (PATCH /api/settings {knowledge}); built once, shown by update(). */
  _embeddingsForm() {
    const n = ++seq;
    this.embProvider = h("select", { id: `kb-emb-provider-${n}` });
    this.embModel = h("input", { type: "text", id: `kb-emb-model-${n}`, autocomplete: "off", spellcheck: false,
      placeholder: "e.g. nomic-embed-text or text-embedding-3-small" });
    this.embState = h("p", { class: "hint kb-emb-state" });
    this.embErr = h("div", { class: "field-error", role: "alert" });
    this.embStatus = h("p", { class: "form-status", role: "status" });
    const save = h("button", { type: "submit", class: "primary" }, "Save");
    const form = h("form", { class: "provider-form kb-embeddings", novalidate: true },
      this.embState,
      h("div", { class: "field" }, h("label", { for: this.embProvider.id }, "Embeddings provider"), this.embProvider),
      h("div", { class: "field" }, h("label", { for: this.embModel.id }, "Embeddings model"), this.embModel),
      this.embErr, h("div", { class: "form-row" }, save, this.embStatus));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      this.embErr.textContent = "";
      const provider = this.embProvider.value;
      const model = this.embModel.value.trim();
      if (provider && !model) { this.embErr.textContent = "Name the embeddings model, as the provider knows it."; this.embModel.focus(); return; }
      save.disabled = true;
      try {
        app.settings = await patch("/api/settings", { knowledge: { embeddings: provider ? { provider_id: provider, model } : null } });
        this.embStatus.textContent = provider ? "Saved: the bases are embedded in the background." : "Saved: bases are searched by words alone.";
        this.shown = null;
        this.update();
        schedule();
        this.load();
      } catch (err) {
        this.embErr.textContent = err.fields ? Object.values(err.fields).join(" ") : err.message;
      } finally {
        save.disabled = false;
      }
    });
    return h("details", { class: "card s-row kb-meaning" }, h("summary", {}, "Search by meaning (embeddings)"),
      h("p", { class: "hint" }, "Searching by words always works, offline. An embeddings model from a provider you have "
        + "(OpenAI, or an OpenAI-compatible server such as Ollama, LM Studio or llama.cpp) also finds passages that say "
        + "the same in other words. Nothing is downloaded."), form);
  }

  /** The saved embeddings model and the providers that can make embeddings (called by Settings as its data changes). */
  update() {
    const saved = app.settings?.knowledge?.embeddings || null;
    const providers = (app.providers || []).filter((p) => p.kind === "openai" || p.kind === "openai_compatible");
    const key = JSON.stringify([saved, providers.map((p) => [p.id, p.name])]);
    if (key === this.shown) return;
    this.shown = key;
    this.embProvider.replaceChildren(h("option", { value: "" }, "None: search by words alone"),
      ...providers.map((p) => h("option", { value: p.id, selected: p.id === saved?.provider_id }, p.name)));
    this.embModel.value = saved?.model || "";
    this.embState.textContent = saved
      ? `Bases are searched by meaning with ${saved.model} (${providers.find((p) => p.id === saved.provider_id)?.name || saved.provider_id}).`
      : "Off: bases are searched by words alone.";
  }

  _createForm() {
    const n = ++seq;
    const name = h("input", { type: "text", id: `kb-new-name-${n}`, maxlength: 100, autocomplete: "off", placeholder: "e.g. Project docs" });
    const paths = h("textarea", { id: `kb-new-paths-${n}`, rows: 3, spellcheck: false, class: "mono",
      placeholder: "/home/me/notes\n/home/me/papers/survey.pdf", "aria-describedby": `kb-new-paths-hint-${n} kb-new-paths-err-${n}` });
    const nameErr = h("div", { class: "field-error", id: `kb-new-name-err-${n}`, role: "alert" });
    const pathsErr = h("div", { class: "field-error", id: `kb-new-paths-err-${n}`, role: "alert" });
    name.setAttribute("aria-describedby", nameErr.id);
    const status = h("p", { class: "form-status", role: "status" });
    const submit = h("button", { type: "submit", class: "primary" }, "Create knowledge base");
    const form = h("form", { class: "provider-form kb-create", novalidate: true },
      h("div", { class: "field" }, h("label", { for: name.id }, "Name"), name, nameErr),
      h("div", { class: "field" }, h("label", { for: paths.id }, "Folders and files"), paths,
        h("div", { class: "hint", id: `kb-new-paths-hint-${n}` }, "One full path per line. Folders are read with their "
          + "subfolders: PDF, Word, EPUB, HTML, Markdown, text and code."), pathsErr),
      h("div", { class: "form-row" }, submit, status));
    const clear = () => {
      for (const [err, input] of [[nameErr, name], [pathsErr, paths]]) { err.textContent = ""; input.removeAttribute("aria-invalid"); }
    };
    const fail = (err, input, text) => { err.textContent = text; input.setAttribute("aria-invalid", "true"); input.focus(); };
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      clear();
      status.textContent = "";
      const parsed = parsePaths(paths.value);
      if (!name.value.trim()) return fail(nameErr, name, "Give the knowledge base a name.");
      if (parsed.error) return fail(pathsErr, paths, parsed.error);
      if (!parsed.paths.length) return fail(pathsErr, paths, "Give at least one folder or file, as its full path.");
      submit.disabled = true;
      try {
        const base = await post("/api/knowledge", { name: name.value.trim(), paths: parsed.paths });
        name.value = paths.value = "";
        status.textContent = `Made “${base.name}”: its files are being read.`;
        await this.load();
      } catch (err) {
        if (fieldText(err, "paths")) fail(pathsErr, paths, fieldText(err, "paths"));
        if (fieldText(err, "name")) fail(nameErr, name, fieldText(err, "name"));
        if (!err.fields) status.textContent = err.message;
      } finally {
        submit.disabled = false;
      }
    });
    return h("details", { class: "card s-row kb-new" }, h("summary", {}, "Make a knowledge base"), form);
  }
}

/** One base: its state, problems, paths (edited in place), documents, and a search box. */
class BaseCard {
  constructor(base, { changed }) {
    const n = ++seq;
    this.id = base.id;
    this.changed = changed;
    this.name = h("strong", { class: "kb-name" });
    this.chip = h("span", { class: "chip kb-state" });
    this.status = h("p", { class: "hint kb-status" });
    this.meaning = h("p", { class: "hint kb-meaning-status", hidden: true });
    this.paths = h("ul", { class: "kb-paths mono" });
    this.problems = h("details", { class: "kb-problems", hidden: true }, h("summary", {}), h("ul", {}));
    this.editBtn = h("button", { type: "button", class: "ghost", onclick: () => this._edit() }, "Edit");
    this.deleteBtn = h("button", { type: "button", class: "ghost danger-text", onclick: () => this._delete() }, "Delete");
    this.editor = h("div", { class: "kb-edit", hidden: true });
    this.docs = h("ul", { class: "kb-docs" });
    this.docsBox = h("details", { class: "kb-documents" }, h("summary", {}, "Documents"), this.docs);
    this.docsBox.addEventListener("toggle", () => { if (this.docsBox.open) this._loadDocs(); });
    this.query = h("input", { type: "search", id: `kb-q-${n}`, autocomplete: "off", placeholder: "Words to look for" });
    this.queryLabel = h("label", { for: this.query.id, class: "sr-only" });
    this.results = h("ol", { class: "kb-results" });
    this.resultStatus = h("p", { class: "hint kb-result-status", role: "status" });
    const search = h("form", { class: "kb-search", role: "search" }, this.queryLabel,
      h("div", { class: "row" }, this.query, h("button", { type: "submit", class: "ghost accent" }, "Search")));
    search.addEventListener("submit", (e) => { e.preventDefault(); this._search(); });
    this.el = h("section", { class: "card kb-base s-row", dataset: { id: base.id }, "aria-labelledby": `kb-name-${n}` },
      h("div", { class: "row" }, h("span", { class: "grow" }, this.name), this.chip, this.editBtn, this.deleteBtn),
      this.status, this.meaning, this.paths, this.problems, this.editor, this.docsBox, search, this.resultStatus, this.results);
    this.name.id = `kb-name-${n}`;
    this.base = null;
  }

  update(base) {
    const was = this.base;
    this.base = base;
    if (this.name.textContent !== base.name) this.name.textContent = base.name;
    this.queryLabel.textContent = `Search ${base.name}`;
    this.chip.textContent = base.status === "indexing" ? "indexing" : "ready";
    this.chip.className = `chip kb-state${base.status === "indexing" ? "" : " ok"}`;
    this.el.dataset.status = base.status;
    const status = baseStatus(base);
    if (this.status.textContent !== status) this.status.textContent = status;
    const meaning = embeddingsStatus(base);
    if (this.meaning.textContent !== meaning) this.meaning.textContent = meaning;
    this.meaning.hidden = !meaning;
    this.meaning.classList.toggle("warn-text", base.embeddings?.status === "error");
    const shownPaths = [...base.paths, ...base.file_ids.map((id) => `uploaded file ${id}`)];
    if (JSON.stringify(shownPaths) !== JSON.stringify(was && [...was.paths, ...was.file_ids.map((id) => `uploaded file ${id}`)])) {
      this.paths.replaceChildren(...shownPaths.map((p) => h("li", {}, p)));
    }
    const problems = base.problems || [];
    if (JSON.stringify(problems) !== JSON.stringify(was?.problems || [])) {
      this.problems.hidden = !problems.length;
      this.problems.firstChild.textContent = `${problems.length} file${problems.length === 1 ? "" : "s"} could not be read`;
      this.problems.lastChild.replaceChildren(...problems.map((p) => h("li", {},
        h("span", { class: "mono kb-problem-path" }, p.path), h("span", { class: "kb-problem-reason" }, p.reason))));
    }
    // A base read again lists its documents again, if they are shown.
    if (this.docsBox.open && was && (was.status !== base.status || was.documents !== base.documents)) this._loadDocs();
  }

  async _loadDocs() {
    try {
      const { items } = await get(`/api/knowledge/${enc(this.id)}/documents`);
      this.docs.replaceChildren(...(items.length ? items.map((d) => this._doc(d))
        : [h("li", { class: "hint" }, "No documents yet.")]));
    } catch (err) {
      this.docs.replaceChildren(h("li", { class: "field-error" }, err.message));
    }
  }

  _doc(d) {
    const where = d.path || `uploaded file ${d.file_id}`;
    const state = d.status === "indexed" ? `${d.chunks} chunk${d.chunks === 1 ? "" : "s"}`
      : d.status === "pending" ? "waiting to be read" : d.reason || "could not be read";
    const said = h("span", { class: "hint kb-doc-said", role: "status" });
    // A file by path opens in its own app, also one Numi could not read (a password-protected PDF).
    const open = d.path ? h("button", { type: "button", class: "ghost kb-doc-file", "aria-label": `Open ${d.title} in its app`,
      onclick: async () => {
        try { await post(`/api/knowledge/${enc(this.id)}/documents/${enc(d.id)}/open`); said.textContent = " Opened in its app."; }
        catch (err) { said.textContent = ` ${err.message}`; }
      } }, "Open file") : null;
    return h("li", { class: "kb-doc", dataset: { status: d.status } },
      d.status === "indexed"
        ? h("button", { type: "button", class: "link kb-doc-open", "aria-haspopup": "dialog",
                        onclick: () => openViewer({ title: d.title, knowledge: { knowledge_id: this.id, document_id: d.id, locator: null } }) }, d.title)
        : h("span", {}, d.title),
      h("span", { class: "hint mono" }, ` ${where}`), h("span", { class: "hint" }, ` · ${state}`), open, said);
  }

  async _search() {
    const q = this.query.value.trim();
    if (!q) { this.resultStatus.textContent = "Type a few words to look for."; this.query.focus(); return; }
    this.resultStatus.textContent = "Searching…";
    try {
      const { items } = await post(`/api/knowledge/${enc(this.id)}/query`, { q, limit: 10 });
      this.resultStatus.textContent = items.length ? `${items.length} passage${items.length === 1 ? "" : "s"} found.`
        : "Nothing found. Try other words.";
      this.results.replaceChildren(...items.map((r) => this._result(r)));
    } catch (err) {
      this.results.replaceChildren();
      this.resultStatus.textContent = err.fields?.q || err.message;
    }
  }

  _result(r) {
    const place = locatorLabel(r.locator);
    const source = { title: r.title, snippet: r.snippet, knowledge: { knowledge_id: this.id, document_id: r.document_id, locator: r.locator } };
    return h("li", { class: "kb-result" },
      h("button", { type: "button", class: "link kb-result-title", "aria-haspopup": "dialog", onclick: () => openViewer(source) }, r.title),
      place ? h("span", { class: "kb-result-place" }, ` · ${place}`) : null,
      h("div", { class: "hint mono kb-result-file" }, String(r.file ?? "")),
      h("p", { class: "kb-result-snippet" }, r.snippet));
  }

  _edit() {
    if (!this.editor.hidden) { this.editor.hidden = true; this.editBtn.setAttribute("aria-expanded", "false"); return; }
    const n = ++seq;
    const name = h("input", { type: "text", id: `kb-ed-name-${n}`, maxlength: 100, value: this.base.name, autocomplete: "off" });
    const paths = h("textarea", { id: `kb-ed-paths-${n}`, rows: Math.max(2, this.base.paths.length + 1), class: "mono",
      spellcheck: false, value: this.base.paths.join("\n") });
    const err = h("div", { class: "field-error", role: "alert" });
    const save = h("button", { type: "submit", class: "primary" }, "Save");
    const cancel = h("button", { type: "button", class: "ghost", onclick: () => { this.editor.hidden = true; this.editBtn.focus(); } }, "Cancel");
    const form = h("form", { class: "provider-form", novalidate: true },
      h("div", { class: "field" }, h("label", { for: name.id }, "Name"), name),
      h("div", { class: "field" }, h("label", { for: paths.id }, "Folders and files (one full path per line)"), paths),
      err, h("div", { class: "form-row" }, save, cancel));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      err.textContent = "";
      const parsed = parsePaths(paths.value);
      if (parsed.error) { err.textContent = parsed.error; paths.focus(); return; }
      const body = {};
      if (name.value.trim() !== this.base.name) body.name = name.value.trim();
      if (JSON.stringify(parsed.paths) !== JSON.stringify(this.base.paths)) body.paths = parsed.paths;
      save.disabled = true;
      try {
        if (Object.keys(body).length) await patch(`/api/knowledge/${enc(this.id)}`, body);
        this.editor.hidden = true;
        this.editBtn.setAttribute("aria-expanded", "false");
        this.editBtn.focus();
        this.changed();
      } catch (e2) {
        err.textContent = e2.fields ? Object.values(e2.fields).join(" ") : e2.message;
      } finally {
        save.disabled = false;
      }
    });
    this.editor.replaceChildren(form);
    this.editor.hidden = false;
    this.editBtn.setAttribute("aria-expanded", "true");
    name.focus();
  }

  async _delete() {
    const sure = await confirmSheet({ title: `Delete “${this.base.name}”?`, confirm: "Delete knowledge base",
      message: "Its index is removed and chats stop searching it. The files themselves are not touched." });
    if (!sure) return;
    try {
      await del(`/api/knowledge/${enc(this.id)}`);
      this.changed();
    } catch (err) {
      this.resultStatus.textContent = err.message;
    }
  }
}
