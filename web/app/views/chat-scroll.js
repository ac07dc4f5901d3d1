// Where the chat's scroller stands: it follows the newest text while the person stays at
// the bottom, keeps a message found by search in view while the chat lays out around it,
// and keeps what the person reads in place when older messages go in above.
//
// A scroll listener notes whether the person is at the bottom; a ResizeObserver scrolls
// after layout, so drawing a frame never forces a layout of its own.
import { schedule } from "../store.js";

// How near the bottom (px) still counts as following the newest text.
const NEAR_BOTTOM = 120;

export class ScrollFollow {
  /** @param scroller the scrolling element; @param content what grows inside it */
  constructor(scroller, content) {
    this.scroller = scroller;
    this.stick = true;   // following the newest text
    this.ownTop = null;  // where this code last put the bottom
    this.hold = null;    // a found message kept in view
    this.found = null;
    scroller.addEventListener("scroll", () => {
      const s = this.scroller;
      // A scroll event comes a frame after the scroll, when more may have gone in below
      // (a finished reply, a queued message's answer) and the composer may have changed
      // height. A position at or below where the view last put the bottom is not the
      // person scrolling away: only a move up from there is read as theirs.
      if (this.ownTop != null && s.scrollTop >= this.ownTop - 2) return;
      this.ownTop = null;
      this.stick = s.scrollHeight - s.scrollTop - s.clientHeight < NEAR_BOTTOM;
    }, { passive: true });
    // A window hidden (to the tray) draws no frames; shown again, it ends where the
    // reply ended if the person was following it when it was hidden.
    this.onVisibility = () => {
      if (!this.scroller.isConnected) { document.removeEventListener("visibilitychange", this.onVisibility); return; }
      if (document.hidden) { this.stickWhenHidden = this.stick && !this.hold; return; }
      if (!this.stickWhenHidden) return;
      this.stick = true;
      this.toBottom();
      schedule();
    };
    document.addEventListener("visibilitychange", this.onVisibility);
    // A message opened from search stays in view while the chat lays out around it
    // (older pages, Markdown drawn later), until the person scrolls or clicks.
    for (const type of ["wheel", "touchstart", "pointerdown", "keydown"]) {
      scroller.addEventListener(type, () => this.release(), { passive: true });
    }
    if (typeof ResizeObserver === "function") {
      this.pin = new ResizeObserver(() => this._follow());
      this.pin.observe(scroller);
      this.pin.observe(content);
    }
  }

  /** Back to the newest text (the person sent something, executed a plan). */
  follow() {
    this.release();
    this.stick = true;
  }

  /** Show `el` (a message search found) and keep it in view until the person moves. */
  holdInView(el) {
    this.release();
    el.tabIndex = -1; // focus goes to it, so a screen reader reads what was found
    el.classList.add("msg-found");
    this.found = this.hold = el;
    this.stick = false;
    el.scrollIntoView({ block: "center" });
    el.focus({ preventScroll: true });
  }

  /** Let a found message go. */
  release() {
    this.hold = null;
    this.found?.classList.remove("msg-found");
    this.found = null;
  }

  /** Put `el` back at `top` (where it was on screen before the frame): a version switched to. */
  placeAt(el, top) {
    this.stick = false;
    this.scroller.scrollTop += el.getBoundingClientRect().top - top;
    this.ownTop = null;
  }

  /**
   * Older messages going in above must not move what the person reads: the first of
   * `list`'s elements is noted before the frame draws, and put back after it (the
   * function returned), unless the view follows the bottom.
   */
  keepPlace(list) {
    const anchor = !this.stick && list.firstElementChild;
    if (!anchor) return () => {};
    const top = anchor.getBoundingClientRect().top;
    return () => {
      if (anchor.isConnected && anchor !== list.firstElementChild) {
        this.scroller.scrollTop += anchor.getBoundingClientRect().top - top;
      }
    };
  }

  /** After a frame: without a ResizeObserver, follow here. */
  drawn() {
    if (!this.pin && this.stick) this.toBottom();
  }

  toBottom() {
    const s = this.scroller;
    s.scrollTop = s.scrollHeight;
    this.ownTop = s.scrollTop;
  }

  /** After layout: keep a found message in view, else follow the newest text. */
  _follow() {
    if (this.hold?.isConnected) this.hold.scrollIntoView({ block: "center" });
    else if (this.stick) this.toBottom();
  }
}
