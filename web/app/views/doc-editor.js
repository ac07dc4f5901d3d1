// The documents panel's editor: CodeMirror 6 (web/vendor/codemirror/codemirror.js, one vendored
// module, loaded with import() when the panel first opens). One EditorView shows the document
// of the open tab; each document keeps its own EditorState (its undo history, selection and
// scroll) while another is shown. Text goes in as the editor's text, never as markup.
//
// What the person types is reported through `changed()`; what the panel puts in (a stream's
// deltas, a version read) is marked as not theirs, stays out of their undo history and is
// never reported. Colours are the app's CSS variables (documents.css), so the editor follows
// the app's light or dark theme with no code of its own. A language's highlighter is made the
// first time a document of it is shown (the module evaluates each grammar on first use), and
// put in when it is ready.
const REMOTE = "numi.remote";
// How close to the end (px) counts as "at the end": a stream keeps such a view on its newest line.
const FOLLOW_PX = 48;

let loading = null;
/** The CodeMirror module, loaded once. */
export function loadCodeMirror() {
  // A literal path: build/web_bundle.py leaves web/vendor out of the bundle and writes this path
  // as it is from wherever the bundle puts this module.
  return (loading ??= import("../../vendor/codemirror/codemirror.js").catch((err) => { loading = null; throw err; }));
}

/** The editor's highlight colours, named by CSS variables the two themes set (documents.css). */
function highlightStyle(cm) {
  const t = cm.tags;
  const c = (name) => `var(--cm-${name})`;
  return cm.HighlightStyle.define([
    { tag: [t.keyword, t.operatorKeyword, t.modifier, t.controlKeyword, t.definitionKeyword, t.moduleKeyword], color: c("keyword") },
    { tag: [t.string, t.special(t.string), t.regexp, t.character, t.attributeValue], color: c("string") },
    { tag: [t.number, t.bool, t.null, t.atom, t.literal], color: c("number") },
    { tag: [t.comment, t.lineComment, t.blockComment, t.docComment, t.meta], color: c("comment"), fontStyle: "italic" },
    { tag: [t.function(t.variableName), t.function(t.propertyName), t.macroName], color: c("function") },
    { tag: [t.typeName, t.className, t.namespace, t.standard(t.variableName), t.tagName], color: c("type") },
    { tag: [t.propertyName, t.attributeName, t.labelName], color: c("property") },
    { tag: [t.definition(t.variableName), t.definition(t.propertyName)], color: c("definition") },
    { tag: [t.heading, t.strong], fontWeight: "bold", color: c("heading") },
    { tag: t.emphasis, fontStyle: "italic" },
    { tag: t.link, color: c("string"), textDecoration: "underline" },
    { tag: [t.inserted], color: c("inserted") },
    { tag: [t.deleted, t.invalid], color: c("deleted") },
    { tag: [t.operator, t.punctuation, t.bracket], color: c("punctuation") },
  ]);
}

export class DocEditor {
  /** The editor in `host`, once CodeMirror is in. hooks: {changed(), save()} */
  static async create(host, hooks) {
    return new DocEditor(await loadCodeMirror(), host, hooks);
  }

  constructor(cm, host, hooks) {
    this.cm = cm;
    this.hooks = hooks;
    this.states = new Map(); // doc id → its EditorState while another is shown
    this.docId = null;
    this.languages = new Map(); // language → its extension, once made
    this.languageOf = new Map(); // doc id → the language it is shown in
    this.language = new cm.Compartment();
    this.readOnly = new cm.Compartment();
    this.base = [
      cm.lineNumbers(), cm.highlightActiveLineGutter(), cm.highlightSpecialChars(), cm.history(), cm.foldGutter(),
      cm.drawSelection(), cm.dropCursor(), cm.EditorState.allowMultipleSelections.of(true), cm.indentOnInput(),
      cm.syntaxHighlighting(highlightStyle(cm)), cm.bracketMatching(), cm.closeBrackets(), cm.rectangularSelection(),
      cm.crosshairCursor(), cm.highlightActiveLine(), cm.highlightSelectionMatches(), cm.EditorView.lineWrapping,
      cm.keymap.of([
        { key: "Mod-s", run: () => { this.hooks.save(); return true; }, preventDefault: true },
        ...cm.closeBracketsKeymap, ...cm.defaultKeymap, ...cm.searchKeymap, ...cm.historyKeymap, ...cm.foldKeymap,
        cm.indentWithTab,
      ]),
      cm.EditorView.contentAttributes.of({ "aria-label": "Document text" }),
      cm.EditorView.updateListener.of((u) => {
        if (u.docChanged && u.transactions.some((tr) => tr.docChanged && tr.annotation(cm.Transaction.userEvent) !== REMOTE)) {
          this.hooks.changed();
        }
        if (u.selectionSet) this.hooks.selected?.();
      }),
    ];
    this.view = new cm.EditorView({ state: this._state("", "text", false, null), parent: host });
    // Whether the view is at the end of its text, kept as it scrolls: a stream keeps such a view
    // on its newest line without reading the layout in each frame it appends to.
    this.atEnd = true;
    const s = this.view.scrollDOM;
    s.addEventListener("scroll", () => { this.atEnd = s.scrollHeight - s.scrollTop - s.clientHeight <= FOLLOW_PX; },
                       { passive: true });
  }

  /** The extension of `language` if made, else []: then made, and put into document `id` when it is. */
  _language(language, id) {
    this.languageOf.set(id, language);
    if (this.languages.has(language)) return this.languages.get(language);
    const make = this.cm.languages[language];
    if (!make) return [];
    make().then((ext) => {
      this.languages.set(language, ext);
      if (this.languageOf.get(id) === language) this._apply(id, { effects: this.language.reconfigure(ext) });
    }, () => { /* shown as plain text */ });
    return [];
  }

  _state(text, language, readOnly, id) {
    const cm = this.cm;
    return cm.EditorState.create({
      doc: text,
      extensions: [this.base, this.language.of(this._language(language, id)),
                   this.readOnly.of([cm.EditorState.readOnly.of(readOnly), cm.EditorView.editable.of(!readOnly)])],
    });
  }

  /** Show document `id`: its kept state, else a new one holding `text`. */
  show(id, text, language, readOnly = false) {
    if (this.docId === id) return;
    if (this.docId !== null) this.states.set(this.docId, this.view.state);
    this.docId = id;
    this.view.setState(this.states.get(id) || this._state(text ?? "", language, readOnly, id));
    this.atEnd = true;
    this.states.delete(id);
  }

  /** The text of document `id` (shown or kept), or null when the editor never held it. */
  textOf(id) {
    if (id === this.docId) return this.view.state.doc.toString();
    return this.states.get(id)?.doc.toString() ?? null;
  }

  /** Forget a document's kept state (it is gone). */
  drop(id) {
    this.states.delete(id);
    this.languageOf.delete(id);
  }

  /** Apply `spec` to document `id`'s state: the shown one, or the one kept for it (none: nothing to do). */
  _apply(id, spec) {
    if (id === this.docId) this.view.dispatch(spec);
    else if (this.states.has(id)) this.states.set(id, this.states.get(id).update(spec).state);
  }

  setLanguage(language, id = this.docId) {
    this._apply(id, { effects: this.language.reconfigure(this._language(language, id)) });
  }

  setReadOnly(readOnly, id = this.docId) {
    const cm = this.cm;
    this._apply(id, { effects: this.readOnly.reconfigure([cm.EditorState.readOnly.of(readOnly),
                                                          cm.EditorView.editable.of(!readOnly)]) });
  }

  /** Replace document `id`'s text with `text` (a version read, a stream's start); not the person's. */
  setText(text, id = this.docId) {
    const state = id === this.docId ? this.view.state : this.states.get(id);
    if (!state) return;
    const doc = state.doc;
    if (doc.length === text.length && doc.toString() === text) return;
    this._apply(id, { changes: { from: 0, to: doc.length, insert: text }, ...this._remote() });
  }

  /** Add `text` at the end (a stream's newest part), keeping a view that was at the end there. */
  append(text) {
    if (!text) return;
    const cm = this.cm;
    const end = this.view.state.doc.length;
    this.view.dispatch({ changes: { from: end, insert: text }, ...this._remote(),
      ...(this.atEnd ? { effects: cm.EditorView.scrollIntoView(end + text.length, { y: "end" }) } : {}) });
  }

  _remote() {
    const cm = this.cm;
    return { annotations: [cm.Transaction.userEvent.of(REMOTE), cm.Transaction.addToHistory.of(false)] };
  }

  /** The person's selection: {fromLine, toLine, text}, or null when nothing is selected. */
  selection() {
    const state = this.view.state;
    const range = state.selection.main;
    if (range.empty) return null;
    // A selection of whole lines ends at the start of the next: that line is not part of it.
    const last = state.doc.lineAt(range.to);
    const toLine = range.to === last.from && last.number > 1 ? last.number - 1 : last.number;
    const fromLine = state.doc.lineAt(range.from).number;
    return { fromLine, toLine: Math.max(fromLine, toLine), text: state.sliceDoc(range.from, range.to) };
  }

  focus() { this.view.focus(); }

  destroy() { this.view.destroy(); }
}
