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

HTML = '<div class="tg-bar" role="group" aria-label="Decision"><div class="tg-buttons"></div>' \
       '<div class="tg-state" aria-live="polite"></div></div>'

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
"""

# One bar is on screen at a time; its key listener lives on window so a re-render replaces it, never adds one.
JS = """
export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  const bar = parentElement.querySelector('.tg-bar');
  const buttons = bar.querySelector('.tg-buttons');
  const stateLine = bar.querySelector('.tg-state');
  const memo = (window.__toolgoldBar = window.__toolgoldBar || { seq: 0, optimistic: null, timer: null });
  if (memo.optimistic && (memo.optimistic.item !== data.item || data.ack >= memo.optimistic.seq)) {
    memo.optimistic = null;  // Python has applied it (or the annotator is on another turn)
  }
  bar.dataset.item = data.item;

  function draw() {
    const shown = memo.optimistic ? memo.optimistic.decision : data.decision;
    buttons.replaceChildren(...data.options.map((o) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.decision = o.value;
      b.setAttribute('aria-pressed', String(o.value === shown));
      b.disabled = o.disabled;
      if (o.help) b.title = o.help;
      b.append(o.label);
      const k = document.createElement('kbd');
      k.textContent = o.key;
      b.append(k);
      b.onclick = () => choose(o.value);
      return b;
    }));
    let state = data.state, text = data.message;
    if (memo.optimistic) { state = 'saving'; text = 'unsaved · saving…'; }
    stateLine.dataset.state = state;
    stateLine.textContent = text;
    bar.dataset.shown = shown || '';
  }

  function choose(decision) {
    const option = data.options.find((o) => o.value === decision);
    if (!option || option.disabled || data.locked) return;
    memo.seq = Math.max(memo.seq, data.ack) + 1;
    memo.optimistic = { item: data.item, decision: decision, seq: memo.seq };
    draw();  // the effect is on screen before anything leaves the browser
    setTriggerValue('decide', { item: data.item, decision: decision, seq: memo.seq });
  }

  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    const t = e.target;
    if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
    const option = data.options.find((o) => o.key === e.key);
    if (!option) return;
    e.preventDefault();
    e.stopPropagation();
    choose(option.value);
  }

  if (memo.onKey) document.removeEventListener('keydown', memo.onKey, true);
  memo.onKey = onKey;
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


def decision_bar(*, item_key: str, decision: str | None, disabled: dict[str, bool], helps: dict[str, str | None],
                 locked: bool, status: str | None, version: int, busy: str | None, error: str | None, ack: int,
                 on_decide: Callable[[str, int], None], on_retry: Callable[[], None]) -> None:
    """Mount the bar for one item; ``on_decide(decision, seq)`` runs (before the rerun) for each key or click
    meant for this item."""
    key = f"bar-{item_key}"
    state, message = save_state(status, version, busy, error)

    def decided() -> None:
        event: Any = (st.session_state.get(key) or {}).get("decide")
        if isinstance(event, dict) and event.get("item") == item_key and event.get("decision") in DECISIONS:
            on_decide(str(event["decision"]), int(event.get("seq") or 0))

    _BAR(key=key, data={
        "item": item_key, "decision": decision, "locked": locked, "state": state, "message": message,
        "ack": ack, "retry_ms": RETRY_MS,
        "options": [{"value": d, "label": label, "key": KEYS[d], "disabled": locked or disabled.get(d, False),
                     "help": helps.get(d)} for d, label in DECISIONS.items()],
    }, on_decide_change=decided, on_retry_change=on_retry)
