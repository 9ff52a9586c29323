"""The label page's window on a transcript: the open decision point and a few around it, with the totals
counted in SQL, agree with the whole list of turn states (the oracle) on every backend."""

from __future__ import annotations

import pytest

from labeler.labels import LabelBody
from labeler.store import Store, StoreError, TurnState
from tests.app.long_transcripts import add, many_turns

N = 40  # decision points at messages 2, 4, ..., 80
SPAN = 3


@pytest.fixture
def long_store(any_store: Store) -> Store:
    s = any_store
    s.add_user("root", "admin")
    for name in ("ann", "bob", "cy"):
        s.add_user(name, "annotator", actor="root")
    add(s, many_turns("long", N))
    add(s, many_turns("other", 3))
    for turn in (2, 4, 10, 30):  # ann's own submitted labels
        s.submit_label("long", turn, "ann", LabelBody(decision="no_call"), version=0)
    s.save_label("long", 6, "ann", LabelBody(decision="clarify"), version=0)  # a draft is not done
    for turn in (4, 8, 12, 20, 40, 60, 62):  # bob's: gold where ann has none, or agrees with hers
        s.submit_label("long", turn, "bob", LabelBody(decision="no_call"), version=0)
    s.submit_label("other", 2, "ann", LabelBody(decision="no_call"), version=0)  # another transcript's
    return s


def oracle(states: list[TurnState], selected: int | None, span: int) -> dict[str, object]:
    indexes = [s.message_index for s in states]
    if selected not in indexes:
        selected = next((s.message_index for s in states if not s.done), indexes[0])
    pos = indexes.index(selected)
    shown = sorted({0, len(states) - 1, *range(max(0, pos - span), min(len(states), pos + span + 1))})
    waiting = [s.ordinal for s in states if s.awaits_overlap and s.label_status != "submitted"]
    return {"selected": states[pos], "states": tuple(states[n] for n in shown), "total": len(states),
            "done": sum(s.done for s in states), "previous": indexes[pos - 1] if pos else None,
            "following": indexes[pos + 1] if pos + 1 < len(states) else None,
            "awaiting_overlap": tuple(waiting[:20]), "n_awaiting_overlap": len(waiting)}


def window_of(store: Store, annotator: str | None, selected: int | None) -> dict[str, object]:
    w = store.turn_window("long", annotator, selected, span=SPAN)
    return {"selected": w.selected, "states": w.states, "total": w.total, "done": w.done, "previous": w.previous,
            "following": w.following, "awaiting_overlap": w.awaiting_overlap,
            "n_awaiting_overlap": w.n_awaiting_overlap}


@pytest.mark.parametrize("overlap", [False, True])
def test_the_window_agrees_with_every_turn_state(long_store: Store, overlap: bool) -> None:
    if overlap:  # every turn sampled for 2 annotators: bob's gold awaits cy's label (and ann's where she has none)
        long_store.set_overlap(2, 100.0, actor="root")
    for annotator in ("ann", "bob", "cy", None):
        states = long_store.turn_states("long", annotator)
        for selected in [None, 3, 999, 2, 4, 6, 8, 12, 40, 78, 80]:
            assert window_of(long_store, annotator, selected) == oracle(states, selected, SPAN), (annotator, selected)
    if overlap:
        # Gold at 10 turns; turn 4 has its 2 labels (ann, bob), the other 9 await cy's; turn 4 is cy's one done.
        cy = long_store.turn_window("long", "cy", 2)
        assert (cy.n_awaiting_overlap, cy.done) == (9, 1)


def test_the_window_stays_small_and_says_where_submit_and_next_goes(long_store: Store) -> None:
    window = long_store.turn_window("long", "ann", 40, span=SPAN)
    assert [s.message_index for s in window.states] == [2, 34, 36, 38, 40, 42, 44, 46, 80]
    assert (window.position, window.at(0).message_index, window.at(5)) == (19, 2, None)  # type: ignore[union-attr]
    # Next without ann's submitted label after 40 (bob's gold at 60 counts: she opened it to label it).
    assert long_store.next_to_label("long", "ann", 40) == 42
    assert long_store.next_to_label("long", "ann", 8) == 12
    states = long_store.turn_states("long", "ann")
    for after in [s.message_index for s in states]:
        later = [s.message_index for s in states if s.message_index > after and s.label_status != "submitted"]
        earlier = [s.message_index for s in states if s.message_index <= after and not s.done]
        assert long_store.next_to_label("long", "ann", after) == (later or earlier or [None])[0], after
    with pytest.raises(StoreError, match="no transcript with id 'nope'"):
        long_store.turn_window("nope", "ann")
