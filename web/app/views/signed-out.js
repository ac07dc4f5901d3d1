// The whole window when the page has no valid sign-in (an API call answered 401): one
// laid-out screen saying what to do, instead of an app whose every part fails.
import { h } from "../dom.js";

export const SIGNED_OUT = "You are signed out of Numi: open it from its window, or the address `numi --headless` printed.";

/** Replace everything in `root` (and the toasts) with the signed-out screen. */
export function showSignedOut(root) {
  const icon = document.querySelector('link[rel="icon"]')?.href;
  const [before, command, after] = SIGNED_OUT.split("`");
  root.replaceChildren(h("main", { class: "signed-out", "aria-labelledby": "signed-out-title" },
    h("div", { class: "signed-out-card", role: "alert" },
      icon ? h("img", { src: icon, alt: "", width: 40, height: 40 }) : null,
      h("h1", { id: "signed-out-title" }, "Signed out"),
      h("p", {}, before, h("code", {}, command), after))));
  document.querySelector(".toasts")?.setAttribute("hidden", "");
  document.title = "Numi — signed out";
}
