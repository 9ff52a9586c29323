"""Render a transcript as a conversation, with every piece of transcript text inert.

Transcript text is untrusted (it comes from users, tools and models): it is only ever passed to
``st.text`` and ``st.code``, which show characters, never Markdown or HTML, with invisible direction controls
made visible. Where Streamlit reads Markdown (``st.error`` and friends, labels, table cells) untrusted values
go through ``md_escape`` / ``md_label``, or the ``error`` / ``warning`` / ``success`` / ``info`` helpers. Labels of expanders and chat
avatars are fixed strings of ours, because Streamlit renders those as Markdown. Containers carry keys, which
Streamlit turns into ``st-key-…`` classes: the test ids browser tests read.
"""

from __future__ import annotations

import json
import re
from typing import Any

import streamlit as st

from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.model import Message, ToolCallRef, ToolSpec, Transcript

PREVIEW_CHARS = 140
MESSAGE_PREVIEW_CHARS = 2_000  # a longer user or assistant message shows this much, the rest on request
FULL_TEXT_CHARS = 200_000  # "show all" shows at most this much at once (a 2 MB line froze a tab for minutes)
CONTEXT_MESSAGES = 30  # messages shown before the decision point; older ones are paged on request
AFTER_MESSAGES = 10  # messages shown after the decision point
PAGE_MESSAGES = 100  # a page of the whole conversation (trajectory and transcript views)

STYLE = """
<style>
div[class*="st-key-err-"] [data-testid="stText"], div[class*="st-key-err-"] [data-testid="stText"] * {
  color: #b42318; font-size: 0.875rem; }
div[class*="st-key-mm-done-"] button { border-bottom: 4px solid #17b26a; }
div[class*="st-key-mm-done-"] button[kind="secondary"] { background: #dcfae6; }
div[class*="st-key-mm-draft-"] button { border-bottom: 4px solid #f79009; }
div[class*="st-key-mm-draft-"] button[kind="secondary"] { background: #fef0c7; }
div[class*="st-key-mm-overlap-"] button { border-bottom: 4px solid #2e90fa; }
div[class*="st-key-mm-overlap-"] button[kind="secondary"] { background: #d1e9ff; }
/* The label panel scrolls on its own beside the conversation; its head (turn, decision bar) and its submit bar
   stay in view. Streamlit wraps each block in a layout wrapper of the same height, and sticky needs room inside
   its parent: so the wrapper that sits in the (tall) column is the sticky one. */
[data-testid="stColumn"] > [data-testid="stVerticalBlock"] > [data-testid="stLayoutWrapper"]:has(.st-key-label-panel) {
  position: sticky; top: 3.75rem; z-index: 2; }
.st-key-panel-head h3 { font-size: 1.15rem; padding: 0.25rem 0 0; }
[data-testid="stMainBlockContainer"]:has(.st-key-label-panel) { padding-bottom: 1rem; }
.st-key-label-panel { max-height: calc(100vh - 6rem); overflow-y: auto; overscroll-behavior: contain; overflow-x: hidden; padding-right: 0.25rem; }
[data-testid="stLayoutWrapper"]:has(> .st-key-panel-head) { position: sticky; top: 0; z-index: 3;
  background: var(--background-color, #fff); border-bottom: 1px solid rgba(49, 51, 63, 0.1); }
[data-testid="stLayoutWrapper"]:has(> .st-key-submit-bar) { position: sticky; bottom: 0; z-index: 3;
  background: var(--background-color, #fff); border-top: 1px solid rgba(49, 51, 63, 0.1); padding: 0.5rem 0; }
.st-key-hidden-keys, .st-key-decision-fallback, .st-key-retry-timer { display: none; }
div[class*="st-key-msg-"] [data-testid="stText"], div[class*="st-key-result-"] [data-testid="stText"] {
  overflow-wrap: anywhere; }
.st-key-after-decision { opacity: 0.42; filter: grayscale(0.6); }
.st-key-decision-point { border-left: 3px solid var(--primary-color, #a86b00); padding-left: 0.5rem; }
div[class*="st-key-call-"] { background: rgba(168, 107, 0, 0.05); }
div[class*="st-key-result-"] { padding-left: 3rem; }
</style>
"""


def inject_style() -> None:
    st.html(STYLE)


# Characters that change how text reads without showing themselves: direction overrides and isolates (so
# "C-\u202e4321" would read as C-1234), marks, zero-width joiners and spaces, the byte-order mark.
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def visible(text: str) -> str:
    """``text`` with every invisible control character shown as ``⟨U+202E⟩``: what you see is what is stored."""
    return _INVISIBLE.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


# Words the Markdown renderer would turn into links even with every character escaped (GFM auto-links bare
# URLs, www. hosts and e-mail addresses after escapes are resolved): shown as code spans, which never link.
_LINKABLE = re.compile(r"://|www\.|@|mailto:|xmpp:", re.IGNORECASE)


def _code_span(word: str) -> str:
    fence = "`" * (max((len(run) for run in re.findall("`+", word)), default=0) + 1)
    pad = " " if word.startswith("`") or word.endswith("`") else ""
    return f"{fence}{pad}{word}{pad}{fence}"


def md_escape(text: str) -> str:
    """``text`` for a place Streamlit reads as Markdown, shown literally: every ASCII punctuation character is
    backslash-escaped (no link, image, markup or directive), a word that would be auto-linked (a bare URL, a
    www. host, an address) becomes a code span, and invisible control characters are made visible."""
    out = []
    for word in re.split(r"(\s+)", visible(str(text))):
        if _LINKABLE.search(word):
            out.append(_code_span(word))
        else:
            out.append("".join("\\" + c if c.isascii() and not c.isalnum() and not c.isspace() else c
                               for c in word))
    return "".join(out)


_PLAIN = re.compile(r"[\w\- ]*")  # no dot: "www.host.example" would be auto-linked


def md_label(text: str) -> str:
    """``text`` for a place that reads Markdown: plain words pass as they are, anything else is escaped."""
    return text if _PLAIN.fullmatch(text) and not _INVISIBLE.search(text) else md_escape(text)


def error(text: str, **kwargs: Any) -> None:
    """``st.error`` of a text that may hold untrusted values (ids from the URL, exception messages): escaped."""
    st.error(md_escape(text), **kwargs)


def warning(text: str, **kwargs: Any) -> None:
    st.warning(md_escape(text), **kwargs)


def success(text: str, **kwargs: Any) -> None:
    st.success(md_escape(text), **kwargs)


def info(text: str, **kwargs: Any) -> None:
    st.info(md_escape(text), **kwargs)


def caption(text: str, **kwargs: Any) -> None:
    st.caption(md_escape(text), **kwargs)


def one_line(text: str | None, limit: int = PREVIEW_CHARS) -> str:
    """``text`` on one line, shortened to ``limit`` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def _pretty_content(text: str) -> tuple[str, str | None]:
    """Tool results are often JSON: indent them; anything else is shown as it is."""
    try:
        return pretty_json(strict_json.loads(text)), "json"
    except InvalidRecord:  # not JSON, or too deep to indent: shown as it is
        return text, None


def tool_call_card(call: ToolCallRef, key: str) -> None:
    """A compact card: the tool name, then the arguments as indented JSON."""
    with st.container(border=True, key=key):
        with st.container(horizontal=True, vertical_alignment="center"):
            st.badge("tool call", icon=":material/build:", color="orange")
            st.text(visible(call.function.name))
        args = call.parsed_arguments()
        if isinstance(args, str):
            st.warning("The arguments are not a JSON object; shown as sent.", icon=":material/warning:")
            st.code(visible(args), language=None, wrap_lines=True)
        elif args:
            st.code(visible(pretty_json(args)), language="json", wrap_lines=True)
        else:
            st.text("(no arguments)")


def full_text(text: str, key: str) -> None:
    """All of a long text on request (a toggle), at most ``FULL_TEXT_CHARS`` at a time: nothing heavy is sent
    to the browser until the reader asks for it."""
    if not st.toggle(f"Show all {len(text):,} characters", key=f"full-{key}"):
        return
    parts = max(1, -(-len(text) // FULL_TEXT_CHARS))
    part = 1
    if parts > 1:
        part = int(st.number_input(f"Part (of {parts}, {FULL_TEXT_CHARS:,} characters each)", min_value=1,
                                   max_value=parts, value=1, step=1, key=f"part-{key}"))
    st.code(visible(text[(part - 1) * FULL_TEXT_CHARS: part * FULL_TEXT_CHARS]), language=None, wrap_lines=True)


def message_text(text: str, key: str) -> None:
    """A user or assistant message: in full when short, else its beginning and the rest on request."""
    if len(text) <= MESSAGE_PREVIEW_CHARS:
        st.text(visible(text))
        return
    st.text(visible(text[:MESSAGE_PREVIEW_CHARS]) + "…")
    full_text(text, key)


def tool_result(message: Message, tool_name: str | None, key: str) -> None:
    """A tool result, collapsed: one line of preview, the full text in an expander (on request when long)."""
    content = message.content or ""
    with st.container(key=key):
        st.text(visible(f"↳ {tool_name or 'tool'} → {one_line(content[:10 * PREVIEW_CHARS]) or '(empty)'}"))
        if len(content) > FULL_TEXT_CHARS // 10:
            full_text(content, key)
        elif len(content) > 0:
            with st.expander(f"Full result ({len(content):,} characters)"):
                body, language = _pretty_content(content)
                st.code(visible(body), language=language, wrap_lines=True)


def message(tr: Transcript, index: int, call_names: dict[str, str]) -> None:
    m = tr.messages[index]
    key = f"msg-{index}"
    if m.role == "system":
        with st.container(key=key), st.expander("System prompt", icon=":material/settings:"):
            message_text(m.content or "", key)
        return
    if m.role == "tool":
        tool_result(m, call_names.get(m.tool_call_id or ""), key=f"result-{index}")
        return
    with st.container(key=key), st.chat_message(m.role):
        if m.content:
            message_text(m.content, key)
        for n, call in enumerate(m.tool_calls):
            tool_call_card(call, key=f"call-{index}-{n}")
        if not m.content and not m.tool_calls:
            st.text("(empty message)")


def _earlier_button(tr: Transcript, start: int) -> None:
    key = f"earlier:{tr.id}"

    def more() -> None:  # the earlier messages land in the fold: open it, or they would not be drawn
        st.session_state[key] = st.session_state.get(key, 0) + PAGE_MESSAGES
        st.session_state[f"earlier-open:{tr.id}"] = True

    st.button(f"Show {min(PAGE_MESSAGES, start)} earlier messages ({start:,} not shown)", key=f"earlier-{start}",
              icon=":material/expand_less:", type="tertiary", on_click=more)


def conversation(tr: Transcript, decision_index: int | None = None, *, fold_before: int = 0) -> None:
    """The conversation. With ``decision_index``, that message is marked as the decision point and what comes
    after it is greyed out: a label is decided with what the agent knew then. Messages before ``fold_before``
    sit in a collapsed expander, so the decision point is near the top of the screen.

    Only a window is drawn, so the cost of a turn does not grow with the transcript: the last
    ``CONTEXT_MESSAGES`` before the decision point (more on request), ``AFTER_MESSAGES`` after it; without a
    decision point, pages of ``PAGE_MESSAGES``."""
    call_names = {c.id: c.function.name for m in tr.messages for c in m.tool_calls}
    if decision_index is None:
        pages = max(1, -(-len(tr.messages) // PAGE_MESSAGES))
        page = 1
        if pages > 1:
            page = int(st.number_input(f"Messages page (of {pages}, {PAGE_MESSAGES} each)", min_value=1,
                                       max_value=pages, value=1, step=1, key=f"messages-page:{tr.id}"))
        for index in range((page - 1) * PAGE_MESSAGES, min(page * PAGE_MESSAGES, len(tr.messages))):
            message(tr, index, call_names)
        return
    cut = min(decision_index, len(tr.messages))
    extra = st.session_state.get(f"earlier:{tr.id}", 0)
    start = max(0, cut - CONTEXT_MESSAGES - extra)
    fold = max(min(fold_before, cut), start)
    if start > 0:
        _earlier_button(tr, start)
    if fold > start:
        # Drawn only while open (a rerun opens it): a turn's run does not pay for messages it keeps folded.
        with st.expander(f"Earlier in the conversation ({fold - start} messages)", icon=":material/history:",
                         key=f"earlier-open:{tr.id}", on_change="rerun") as earlier:
            if earlier.open:
                for index in range(start, fold):
                    message(tr, index, call_names)
    for index in range(fold, cut):
        message(tr, index, call_names)
    with st.container(key="decision-point"):
        st.caption("▶ Decision point: what should the agent do here?")
        if decision_index < len(tr.messages):
            message(tr, decision_index, call_names)
        else:
            st.text("(the agent has not answered yet)")
    end = min(len(tr.messages), decision_index + 1 + AFTER_MESSAGES)
    if decision_index + 1 < len(tr.messages):
        with st.container(key="after-decision"):
            st.caption("After the decision point (not known to the agent then)")
            for index in range(decision_index + 1, end):
                message(tr, index, call_names)
            if end < len(tr.messages):
                st.caption(f"… {len(tr.messages) - end:,} more messages after these")


def tool_specs(tools: tuple[ToolSpec, ...]) -> None:
    """The tools offered, each with its description and JSON Schema (inert)."""
    for spec in tools:
        with st.container(key=f"tool-{spec.name}"):
            st.text(visible(spec.name + (f": {one_line(spec.description, 300)}" if spec.description else "")))
            st.code(pretty_json(spec.parameters), language="json", wrap_lines=True)
