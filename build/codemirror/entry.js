// The one CodeMirror 6 module the documents panel loads (web/app/views/doc-editor.js), bundled by
// web/vendor/codemirror-build.sh into web/vendor/codemirror/codemirror.js: the editor's core, the
// extensions the panel puts together, and a highlighter per document language Numi knows
// (docs/PROTOCOL.md "Documents"). No eval, nothing fetched: the page's CSP is `script-src 'self'`.
export { EditorState, EditorSelection, Compartment, StateEffect, StateField, Transaction } from "@codemirror/state";
export {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars,
  drawSelection, dropCursor, rectangularSelection, crosshairCursor, placeholder,
} from "@codemirror/view";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export {
  syntaxHighlighting, HighlightStyle, defaultHighlightStyle, bracketMatching, foldGutter, foldKeymap,
  indentOnInput, indentUnit,
} from "@codemirror/language";
export { search, searchKeymap, highlightSelectionMatches } from "@codemirror/search";
export { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
export { tags } from "@lezer/highlight";

import { StreamLanguage } from "@codemirror/language";

// Each language's grammar is evaluated the first time a document of it is shown, not when this
// module loads: a dynamic import() inside one bundle stays in the file and runs on first use
// (esbuild wraps it), and the grammars are most of this module's start-up work.
const legacy = (load) => () => load().then((parser) => StreamLanguage.define(parser));

/**
 * The highlighter of each document language (the names of backend/features/documents/languages.py):
 * a function that resolves to its extension. `text`, `mermaid` and `csv` have none: they are plain text.
 */
export const languages = {
  javascript: () => import("@codemirror/lang-javascript").then((m) => m.javascript()),
  jsx: () => import("@codemirror/lang-javascript").then((m) => m.javascript({ jsx: true })),
  typescript: () => import("@codemirror/lang-javascript").then((m) => m.javascript({ typescript: true })),
  tsx: () => import("@codemirror/lang-javascript").then((m) => m.javascript({ jsx: true, typescript: true })),
  python: () => import("@codemirror/lang-python").then((m) => m.python()),
  html: () => import("@codemirror/lang-html").then((m) => m.html()),
  svg: () => import("@codemirror/lang-xml").then((m) => m.xml()),
  xml: () => import("@codemirror/lang-xml").then((m) => m.xml()),
  css: () => import("@codemirror/lang-css").then((m) => m.css()),
  json: () => import("@codemirror/lang-json").then((m) => m.json()),
  markdown: () => import("@codemirror/lang-markdown").then((m) => m.markdown()),
  sql: () => import("@codemirror/lang-sql").then((m) => m.sql()),
  rust: () => import("@codemirror/lang-rust").then((m) => m.rust()),
  java: () => import("@codemirror/lang-java").then((m) => m.java()),
  c: () => import("@codemirror/lang-cpp").then((m) => m.cpp()),
  cpp: () => import("@codemirror/lang-cpp").then((m) => m.cpp()),
  go: () => import("@codemirror/lang-go").then((m) => m.go()),
  php: () => import("@codemirror/lang-php").then((m) => m.php()),
  yaml: () => import("@codemirror/lang-yaml").then((m) => m.yaml()),
  shell: legacy(() => import("@codemirror/legacy-modes/mode/shell").then((m) => m.shell)),
  toml: legacy(() => import("@codemirror/legacy-modes/mode/toml").then((m) => m.toml)),
  ruby: legacy(() => import("@codemirror/legacy-modes/mode/ruby").then((m) => m.ruby)),
  lua: legacy(() => import("@codemirror/legacy-modes/mode/lua").then((m) => m.lua)),
  swift: legacy(() => import("@codemirror/legacy-modes/mode/swift").then((m) => m.swift)),
  r: legacy(() => import("@codemirror/legacy-modes/mode/r").then((m) => m.r)),
  latex: legacy(() => import("@codemirror/legacy-modes/mode/stex").then((m) => m.stex)),
  diff: legacy(() => import("@codemirror/legacy-modes/mode/diff").then((m) => m.diff)),
  csharp: legacy(() => import("@codemirror/legacy-modes/mode/clike").then((m) => m.csharp)),
  kotlin: legacy(() => import("@codemirror/legacy-modes/mode/clike").then((m) => m.kotlin)),
};
