"""The decision bar: a small Streamlit custom component (``st.components.v2``, inline html/js/css, no build).

Streamlit's round trip (key → websocket → script run → new page) takes a few hundred milliseconds on a busy
machine; the annotator should see the decision the moment the key goes down. The bar therefore draws the
chosen decision itself, at once (optimistic), sends it to Python as a trigger value, and shows the save
state Python sends back: "saving…" until the store confirms, "saved · version N", or "unsaved — database
busy, retrying" (then it asks Python to retry every couple of seconds until the save lands).

Python stays the one writer: the trigger runs ``on_decide`` (the label panel's ``_decide``), which saves
through the store exactly as the buttons did (drafts, versioned optimistic concurrency, conflicts). Every
event carries the item's key: an event meant for the turn the annotator just left is dropped.

Keys: 0 · 1 · 2 · 3 (as the cheatsheet says), ignored while the focus is in a field or with Ctrl/⌘/Alt held.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from labeler.labels import DECISIONS

KEYS = {"no_call": "0", "same": "1", "different": "2", "clarify": "3"}
RETRY_MS = 2000
RESEND_MS = 1500
"""An event Python has not acknowledged (``ack``) is sent again after this long (at most 8 times)."""

HTML = '<div class="tg-bar" role="group" aria-label="Decision"><div class="tg-ahead" hidden></div>' \
       '<div class="tg-buttons"></div><div class="tg-state" aria-live="polite"></div></div>'

CSS = """
.tg-bar { font-family: var(--st-font); }
.tg-buttons { display: flex; flex-wrap: wrap; gap: 0.5rem; }
.tg-buttons button {
  font: inherit; font-size: 0.95rem; padding: 0.4rem 0.8rem; cursor: pointer;
  border-radius: var(--st-button-radius, 0.5rem); border: 1px solid var(--st-border-color, #d5d5d9);
  background: var(--st-secondary-background-color, #f0f2f6); color: var(--st-text-color, #31333f);
}
.tg-buttons button[aria-pressed="true"] {
  background: var(--st-primary-color, #ff4b4b); border-color: var(--st-primary-color, #ff4b4b); color: #fff;
}
.tg-buttons button:disabled { cursor: not-allowed; opacity: 0.45; }
.tg-buttons kbd { font: inherit; font-size: 0.75rem; opacity: 0.75; margin-left: 0.35rem; }
.tg-state { margin-top: 0.35rem; font-size: 0.85rem; min-height: 1.2rem; color: var(--st-text-color, #31333f); }
.tg-state[data-state="busy"], .tg-state[data-state="error"] { color: var(--st-red-color, #ff2b2b); font-weight: 600; }
.tg-state[data-state="saving"] { opacity: 0.75; }
.tg-ahead { margin-bottom: 0.5rem; padding: 0.4rem 0.6rem; border-left: 3px solid var(--st-primary-color, #ff4b4b);
  background: var(--st-secondary-background-color, #f0f2f6); font-size: 0.9rem; white-space: pre-wrap;
  overflow-wrap: anywhere; max-height: 9rem; overflow: hidden; }
.tg-ahead .tg-head { font-weight: 600; }
"""

# One bar is on screen at a time; its key listener lives on window so a re-render replaces it, never adds one.
JS = """
export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  const bar = parentElement.querySelector('.tg-bar');
  const ahead = bar.querySelector('.tg-ahead');
  const buttons = bar.querySelector('.tg-buttons');
  const stateLine = bar.querySelector('.tg-state');
  const memo = (window.__toolgoldBar = window.__toolgoldBar || { seq: 0, optimistic: null, submit: null, ahead: null,
                                                                   timer: null });
  const RESEND = data.resend_ms, RESENDS = 8;
  // Submit & next shown ahead of the server: confirmed when the next turn's bar arrives, dropped when the
  // server answers for this turn again (the submit was refused: problems, a conflict, a busy database).
  if (memo.ahead) {
    const a = memo.ahead;
    if (a.next.item === data.item || (a.from === data.item && data.submits > a.submits)
        || (a.from !== data.item && a.next.item !== data.item) || Date.now() - a.at > 15000) {
      memo.ahead = null;
    }
  }
  // Every decision (and a submit that carries one) has a sequence number; Python applies each number at most
  // once and acknowledges the highest it applied (data.ack). Until then the event is sent again: a trigger
  // can be lost between runs (sent as one run ends and the next starts, it can be reset with the first), and
  // a resent one Python already applied is dropped by its number.
  const o = memo.optimistic;
  if (o) {
    if (o.item === data.item && o.resend) {  // a key pressed on the next turn before its bar was mounted
      o.resend = false;
      deliver(o, 'decide');
    } else if (o.item === data.item ? data.ack >= o.seq : !(memo.ahead && memo.ahead.next.item === o.item)) {
      memo.optimistic = null;  // Python has applied it (or the annotator is on another turn)
    }
  }
  const sub = memo.submit;
  if (sub && (sub.item !== data.item || data.ack >= sub.seq)) memo.submit = null;  // applied, or moved on

  // Send ``event`` (``{item, seq, ...}``) as trigger ``name`` once the app is idle, then again every
  // RESEND ms while it is the one waiting and Python has not acknowledged it (at most RESENDS times).
  // A resend looks again once the app is idle: the run it waited for may have brought the acknowledgement, and
  // a needless resend is a rerun that redraws the page under the annotator's hands (an open dropdown closes).
  function deliver(event, name) {
    const waiting = () => (name === 'submit' ? memo.submit === event : memo.optimistic === event);
    (function send(tries) {
      whenIdle(() => { if (tries === 0 || waiting()) setTriggerValue(name, event); });
      setTimeout(() => { if (waiting() && tries < RESENDS) send(tries + 1); }, RESEND);
    })(0);
  }

  // A trigger sent while a script run is still drawing the page can be cleared when that run ends (and it
  // leaves the run's stale elements on screen): send it once the app is idle. The screen does not wait.
  function whenIdle(send) {
    const started = Date.now();
    (function tick() {
      const app = document.querySelector('[data-testid="stApp"]');
      const running = app && app.dataset.testScriptState === 'running';
      if (!running || Date.now() - started > 10000) send(); else setTimeout(tick, 15);
    })();
  }

  function view() {  // what is on screen: this turn, or the next one ahead of the server
    if (!memo.ahead) return { item: data.item, options: data.options, decision: data.decision };
    const n = memo.ahead.next;
    return { item: n.item, options: n.options || [], decision: null, next: n };
  }

  function draw() {
    const v = view();
    const o = memo.optimistic;
    const shown = o && o.item === v.item ? o.decision : v.decision;
    if (v.next) {
      const head = document.createElement('div');
      head.className = 'tg-head';
      head.textContent = v.next.head;
      const said = document.createElement('div');
      said.textContent = v.next.context || '';
      ahead.replaceChildren(head, said);
      ahead.hidden = false;
    } else {
      ahead.replaceChildren();
      ahead.hidden = true;
    }
    buttons.replaceChildren(...v.options.map((opt) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.decision = opt.value;
      b.setAttribute('aria-pressed', String(opt.value === shown));
      b.disabled = opt.disabled;
      if (opt.help) b.title = opt.help;
      b.append(opt.label);
      const k = document.createElement('kbd');
      k.textContent = opt.key;
      b.append(k);
      b.onclick = () => choose(opt.value);
      return b;
    }));
    let state = data.state, text = data.message;
    if (v.next) { state = 'saving'; text = 'previous turn: submitting…'; }
    else if (o && o.item === v.item && state !== 'busy') { state = 'saving'; text = 'unsaved · saving…'; }
    stateLine.dataset.state = state;
    stateLine.textContent = text;
    bar.dataset.item = data.item;  // the turn Python has on screen; the one drawn ahead of it is data-ahead
    if (v.next) bar.dataset.ahead = v.item || 'queue'; else delete bar.dataset.ahead;
    bar.dataset.shown = shown || '';
    memo.drawn = { item: v.item, decision: shown || null, state: state, ahead: !!v.next };  // read by the benchmark
  }

  function choose(decision) {
    const v = view();
    const opt = v.options.find((x) => x.value === decision);
    if (!opt || opt.disabled || (!v.next && data.locked) || !v.item) return;
    memo.seq = Math.max(memo.seq, data.ack) + 1;
    memo.optimistic = { item: v.item, decision: decision, seq: memo.seq, resend: !!v.next };
    draw();  // the effect is on screen before anything leaves the browser
    if (!v.next) deliver(memo.optimistic, 'decide');
  }

  function onKey(e) {
    if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
      // Submit & next itself is the panel's button (its Ctrl+Enter shortcut, left to run): the bar only
      // draws the next turn's essentials at once, as Python predicted them.
      const o = memo.optimistic;
      const decided = data.locked || data.decision || (o && o.item === data.item);
      if (memo.submit && memo.submit.item === data.item) {  // already on its way: not a second submit
        e.preventDefault();
        e.stopPropagation();
        return;
      }
      if (o && o.item === data.item && data.ack < o.seq && !data.locked) {
        // The decision has not reached Python yet: the submit goes through the bar instead of the panel's
        // button, as one event that carries the decision, so Python applies the decision, then submits.
        e.preventDefault();
        e.stopPropagation();
        memo.seq = Math.max(memo.seq, data.ack) + 1;
        memo.submit = { item: data.item, decision: o.decision, seq: memo.seq };
        deliver(memo.submit, 'submit');
      }
      if (!memo.ahead && data.next && decided) {
        memo.ahead = { from: data.item, next: data.next, submits: data.submits, at: Date.now() };
        draw();
        setTimeout(() => memo.redraw && memo.redraw(), 15500);
      }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    const t = e.target;
    if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
    const opt = view().options.find((x) => x.key === e.key);
    if (!opt) return;
    e.preventDefault();
    e.stopPropagation();
    choose(opt.value);
  }

  if (memo.onKey) document.removeEventListener('keydown', memo.onKey, true);
  memo.onKey = onKey;
  memo.redraw = () => { if (memo.ahead && Date.now() - memo.ahead.at > 15000) memo.ahead = null; draw(); };
  document.addEventListener('keydown', onKey, true);
  clearTimeout(memo.timer);
  if (data.state === 'busy') {
    memo.timer = setTimeout(() => setTriggerValue('retry', { item: data.item, at: Date.now() }), data.retry_ms);
  }
  draw();
  return () => {
    if (memo.onKey === onKey) { document.removeEventListener('keydown', onKey, true); memo.onKey = null; }
    clearTimeout(memo.timer);
  };
}
"""

_BAR = st.components.v2.component("toolgold_decision_bar", html=HTML, css=CSS, js=JS)


def save_state(status: str | None, version: int, busy: str | None, error: str | None) -> tuple[str, str]:
    """What the bar says about the save, from what Python knows: (state, text)."""
    if busy is not None:
        return "busy", "unsaved — database busy, retrying"
    if error is not None:
        return "error", "unsaved — " + error
    if status is None:
        return "new", "not saved yet"
    if status == "submitted":
        return "saved", f"submitted · saved · version {version}"
    return "saved", f"saved · version {version}"


def options(*, disabled: dict[str, bool], helps: dict[str, str | None], locked: bool = False) -> list[dict[str, Any]]:
    return [{"value": d, "label": label, "key": KEYS[d], "disabled": locked or disabled.get(d, False),
             "help": helps.get(d)} for d, label in DECISIONS.items()]


def ahead(*, item_key: str | None, head: str, context: str = "",
          disabled: dict[str, bool] | None = None) -> dict[str, Any]:
    """What the bar draws of the next turn the moment Submit & next is pressed (``item_key`` None: the
    transcript is done and the queue picks the next one). Shown as text only (inert)."""
    return {"item": item_key, "head": head, "context": context,
            "options": options(disabled=disabled or {}, helps={}) if item_key else []}


def decision_bar(*, item_key: str, decision: str | None, disabled: dict[str, bool], helps: dict[str, str | None],
                 locked: bool, status: str | None, version: int, busy: str | None, error: str | None, ack: int,
                 submits: int, next_turn: dict[str, Any] | None,
                 on_decide: Callable[[str, int], None], on_submit: Callable[[str, int], None],
                 on_retry: Callable[[], None]) -> None:
    """Mount the bar for one item; ``on_decide(decision, seq)`` runs (before the rerun) for each key or click
    meant for this item, ``on_submit(decision, seq)`` for a Ctrl+Enter pressed before that decision was
    acknowledged (apply the decision, then submit). Events come with increasing ``seq`` and may come more
    than once: the caller applies a ``seq`` at most once and passes the highest applied as ``ack``. ``submits`` counts this turn's submit attempts (a new count with the turn still on
    screen means the submit was refused, and the bar drops the next turn it drew ahead); ``next_turn`` is
    ``ahead(...)`` of the turn Submit & next will open."""
    key = f"bar-{item_key}"
    state, message = save_state(status, version, busy, error)

    def event(name: str, then: Callable[[str, int], None]) -> Callable[[], None]:
        def received() -> None:
            sent: Any = (st.session_state.get(key) or {}).get(name)
            if isinstance(sent, dict) and sent.get("item") == item_key and sent.get("decision") in DECISIONS:
                then(str(sent["decision"]), int(sent.get("seq") or 0))
        return received

    _BAR(key=key, data={
        "item": item_key, "decision": decision, "locked": locked, "state": state, "message": message,
        "ack": ack, "retry_ms": RETRY_MS, "resend_ms": RESEND_MS, "submits": submits, "next": next_turn,
        "options": options(disabled=disabled, helps=helps, locked=locked),
    }, on_decide_change=event("decide", on_decide), on_submit_change=event("submit", on_submit),
        on_retry_change=on_retry)


# -- the retry alone, for a panel without the bar (the trajectory panel) -------------------------------

RETRY_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const memo = (window.__toolgoldRetry = window.__toolgoldRetry || { timer: null });
  clearTimeout(memo.timer);
  if (data.busy) memo.timer = setTimeout(() => setTriggerValue('retry', { item: data.item, at: Date.now() }),
                                         data.retry_ms);
  return () => clearTimeout(memo.timer);
}
"""

_RETRY = st.components.v2.component("toolgold_retry", html='<div class="tg-retry" hidden></div>', js=RETRY_JS)


def retry_timer(*, item_key: str, busy: bool) -> None:
    """What the bar does for a save the database was too busy for, without the bar: while ``busy``, ask for a
    run every ``RETRY_MS`` (the trigger reruns the enclosing fragment, whose run retries the pending saves:
    ``editing.retry_pending``). Mount it inside the fragment."""
    _RETRY(key=f"retry-{item_key}", data={"item": item_key, "busy": busy, "retry_ms": RETRY_MS},
           on_retry_change=lambda: None)
