"""``Store``: the facade the app, the CLI and the tests use, one per database (see ``labeler.store``).

Building the class imports no aggregate: each action is a stand-in (``_Action``) until first used, when its
module is imported and the function takes the stand-in's place on the class. Importing this module loads
the engine (SQLAlchemy) and the tables; ``labeler.store`` itself loads it only when ``Store`` is first named.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from labeler.store.engine import Database

if TYPE_CHECKING:
    from labeler.store import adjudication as _adjudication
    from labeler.store import drift as _drift
    from labeler.store import gold as _gold
    from labeler.store import hygiene as _hygiene
    from labeler.store import judge as _judge
    from labeler.store import labels as _labels
    from labeler.store import review as _review
    from labeler.store import runs as _runs
    from labeler.store import synthetic as _synthetic
    from labeler.store import transcripts as _transcripts
    from labeler.store import users as _users
    from labeler.store import versions as _versions
    from labeler.store.pending import PendingJournal
else:

    class _Action:
        """``Store.NAME``, standing in for ``MODULE.NAME`` until first used: then the module is imported and
        the function takes this one's place on the class, so every later call is a plain method call."""

        def __init__(self, module: str, name: str) -> None:
            self.module, self.name = module, name

        def __set_name__(self, owner: type, attr: str) -> None:
            self.owner, self.attr = owner, attr

        def __get__(self, obj: object, objtype: type | None = None) -> Any:
            function = getattr(importlib.import_module(self.module), self.name)
            setattr(self.owner, self.attr, function)
            return function if obj is None else function.__get__(obj, objtype)

    class _Aggregate:
        """An aggregate module not imported yet: ``_transcripts.import_items`` in ``Store``'s body is an
        ``_Action``, so building the class imports nothing."""

        def __init__(self, name: str) -> None:
            self.module = f"labeler.store.{name}"

        def __getattr__(self, name: str) -> _Action:
            return _Action(self.module, name)

    _adjudication = _Aggregate("adjudication")
    _drift = _Aggregate("drift")
    _gold = _Aggregate("gold")
    _hygiene = _Aggregate("hygiene")
    _judge = _Aggregate("judge")
    _labels = _Aggregate("labels")
    _review = _Aggregate("review")
    _runs = _Aggregate("runs")
    _synthetic = _Aggregate("synthetic")
    _transcripts = _Aggregate("transcripts")
    _users = _Aggregate("users")
    _versions = _Aggregate("versions")


class Store(Database):
    """All persistence for toolgold. Construct once per process (the app caches it)."""

    # -- edits the database was too busy for, kept on disk beside it until a save lands (labeler.store.pending)
    def pending_journal(self) -> PendingJournal:
        from labeler.store.pending import PendingJournal, journal_dir

        return PendingJournal(journal_dir(self.url))

    # -- transcripts, turns and import; the live gold set as read
    import_items = _transcripts.import_items
    list_transcripts = _transcripts.list_transcripts
    sources = _transcripts.sources
    count_transcripts = _transcripts.count_transcripts
    get_transcript = _transcripts.get_transcript
    count_gold = _gold.count_gold
    iter_gold_lines = _gold.iter_gold_lines
    iter_gold_blocks = _gold.iter_gold_blocks
    authorize_gold_export = _gold.authorize_gold_export
    get_gold = _gold.get_gold
    gold_cases = _gold.gold_cases
    iter_gold_cases = _gold.iter_gold_cases
    gold_hygiene = _hygiene.gold_hygiene
    gold_revision = _gold.gold_revision
    kept_gold_hygiene = _hygiene.kept_gold_hygiene
    tool_names = _transcripts.tool_names
    coverage = _transcripts.coverage

    # -- synthetic candidates (toolgold synthesize)
    require_proposer = _synthetic.require_proposer
    propose_candidates = _synthetic.propose_candidates
    synthetic_ids = _synthetic.synthetic_ids
    synthetic_candidates = _synthetic.synthetic_candidates
    stats = _transcripts.stats

    # -- labels, leases and the annotator's queue
    get_label = _labels.get_label
    labels_for_turn = _labels.labels_for_turn
    save_label = _labels.save_label
    submit_label = _labels.submit_label
    get_trajectory_label = _labels.get_trajectory_label
    save_trajectory_label = _labels.save_trajectory_label
    turn_states = _labels.turn_states
    turn_window = _labels.turn_window
    next_to_label = _labels.next_to_label
    queue = _labels.queue
    claim_next = _labels.claim_next
    take_lease = _labels.take_lease
    release_leases = _labels.release_leases
    annotator_totals = _labels.annotator_totals

    # -- the review queue and overlap
    enqueue_review = _review.enqueue_review
    sync_review_queue = _review.sync_review_queue
    review_queue = _review.review_queue
    review_counts = _review.review_counts
    review_detail = _review.review_detail
    accept_review = _review.accept_review
    edit_and_accept = _review.edit_and_accept
    reject_review = _review.reject_review
    escalate_review = _review.escalate_review
    approvable_cases = _review.approvable_cases
    approve_cases = _review.approve_cases
    overlap = _review.overlap
    set_overlap = _review.set_overlap
    agreement_labels = _review.agreement_labels
    review_item_for = _review.review_item_for
    returned_to = _review.returned_to

    # -- frozen gold versions
    freeze = _versions.freeze
    derive_version = _versions.derive_version
    list_versions = _versions.list_versions
    get_version = _versions.get_version
    latest_version = _versions.latest_version
    iter_version_lines = _versions.iter_version_lines
    version_cases = _versions.version_cases
    version_case = _versions.version_case
    diff_versions = _versions.diff_versions
    note_export = _versions.note_export

    # -- schema drift: the re-labeling queue
    current_tools = _drift.current_tools
    check_schema_drift = _drift.check_schema_drift
    relabel_queue = _drift.relabel_queue
    resolve_relabel = _drift.resolve_relabel
    dismiss_relabel = _drift.dismiss_relabel

    # -- run history
    save_run = _runs.save_run
    delete_run = _runs.delete_run
    get_run = _runs.get_run
    list_runs = _runs.list_runs
    gold_versions = _runs.gold_versions
    run_report = _runs.run_report
    result_lines = _runs.result_lines
    history = _runs.history
    run_groups = _runs.run_groups
    confusion = _runs.confusion
    failure_patterns = _runs.failure_patterns
    failing_cases = _runs.failing_cases
    case_detail = _runs.case_detail
    diff_runs = _runs.diff_runs

    # -- the judge's questions, verdicts and settings
    remember_judge_questions = _judge.remember_judge_questions
    judge_answers = _judge.judge_answers
    judge_verdict = _judge.judge_verdict
    judge_verdicts = _judge.judge_verdicts
    pending_judge_questions = _judge.pending_judge_questions
    record_judge_outcome = _judge.record_judge_outcome
    note_judge_skipped = _judge.note_judge_skipped
    judge_status = _judge.judge_status
    judge_uses_to_queue = _judge.judge_uses_to_queue
    set_judge_use_state = _judge.set_judge_use_state
    gold_case_known = _judge.gold_case_known
    judge_adjudications = _judge.judge_adjudications
    judge_model_setting = _judge.judge_model_setting
    set_judge_model_setting = _judge.set_judge_model_setting

    # -- deciding judge items (across judge, review and versions)
    adjudication_queue = _adjudication.adjudication_queue
    adjudication_item = _adjudication.adjudication_item
    adjudicate = _adjudication.adjudicate

    # -- users, the tag vocabulary, the audit log
    add_user = _users.add_user
    set_user = _users.set_user
    users = _users.users
    get_user = _users.get_user
    tags = _users.tags
    set_tag = _users.set_tag
    remove_tag = _users.remove_tag


__all__ = ["Store"]
