"""Baseline: the schema as the hand-written migrations 1-6 left it (toolgold before Alembic).

Revision ID: 0001_baseline
Revises:
Create Date: 2026-12-01

Each table is created explicitly here, never from today's table classes, so later revisions can change
those classes and fresh and upgraded databases still agree. A database made before Alembic (it has the
``toolgold_migrations`` table) has some or all of these tables already, exactly as created here: only
the missing ones are created, and the old bookkeeping table goes (Alembic's ``alembic_version`` replaces it).
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None

DEFAULT_TAGS = [
    ("happy_path", False, "A clear request: the obvious tool with values stated in the conversation."),
    ("near_duplicate_tools", True, "Several offered tools look right; only one is."),
    ("underspecified", True, "A needed value is vague or missing: asking the user may be right."),
    ("missing_info", True, "The information the call needs is nowhere in the context."),
    ("tool_shaped_language", True, "Words that sound like a tool (\"cancel\", \"book\") where no call is wanted."),
    ("ordered_multi_step", True, "Calls must come in order; a later one needs an earlier result."),
    ("stale_context", True, "A value stated earlier was superseded later in the conversation."),
    ("relative_date", True, "Dates such as \"next Friday\" that resolve against the reference time."),
    ("parallel_calls", True, "Several independent calls belong in the same turn."),
    ("policy_refusal", True, "The policy forbids what the user asks; the right move is to decline or transfer."),
    ("distractor_values", True, "Plausible but wrong values sit in the context."),
]


def _audit_log() -> None:
    op.create_table('audit_log',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('at', sa.String(), nullable=False),
        sa.Column('actor', sa.String(), nullable=False),
        sa.Column('action', sa.String(), nullable=False),
        sa.Column('entity', sa.String(), nullable=False),
        sa.Column('entity_id', sa.String(), nullable=False),
        sa.Column('before', sa.String(), nullable=True),
        sa.Column('after', sa.String(), nullable=True),
        sa.Column('note', sa.String(), nullable=True),
        sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_audit_log_at'), 'audit_log', ['at'], unique=False)
    op.create_index(op.f('ix_audit_log_entity_id'), 'audit_log', ['entity_id'], unique=False)


def _gold_blobs() -> None:
    op.create_table('gold_blobs',
        sa.Column('hash', sa.String(), nullable=False),
        sa.Column('body', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('hash')
    )


def _gold_cases() -> None:
    op.create_table('gold_cases',
        sa.Column('id', sa.String(), nullable=False),
        sa.Column('conversation_id', sa.String(), nullable=True),
        sa.Column('turn', sa.Integer(), nullable=True),
        sa.Column('split', sa.String(), nullable=False),
        sa.Column('kind', sa.String(), nullable=False),
        sa.Column('status', sa.String(), nullable=False),
        sa.Column('behavior', sa.String(), nullable=False),
        sa.Column('tags', sa.String(), nullable=False),
        sa.Column('source', sa.String(), nullable=True),
        sa.Column('body', sa.String(), nullable=False),
        sa.Column('content_hash', sa.String(), nullable=False),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.Column('updated_at', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_gold_cases_conversation_id'), 'gold_cases', ['conversation_id'], unique=False)
    op.create_index('ix_gold_cases_split_status', 'gold_cases', ['split', 'status'], unique=False)


def _gold_versions() -> None:
    op.create_table('gold_versions',
        sa.Column('id', sa.String(), nullable=False),
        sa.Column('split', sa.String(), nullable=False),
        sa.Column('number', sa.Integer(), nullable=False),
        sa.Column('parent_id', sa.String(), nullable=True),
        sa.Column('content_hash', sa.String(), nullable=False),
        sa.Column('n_cases', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.Column('created_by', sa.String(), nullable=False),
        sa.Column('note', sa.String(), nullable=False),
        sa.Column('provenance', sa.String(), nullable=False),
        sa.ForeignKeyConstraint(['parent_id'], ['gold_versions.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('split', 'number')
    )


def _judge_verdicts() -> None:
    op.create_table('judge_verdicts',
        sa.Column('key', sa.String(), nullable=False),
        sa.Column('kind', sa.String(), nullable=False),
        sa.Column('model', sa.String(), nullable=False),
        sa.Column('prompt_version', sa.String(), nullable=False),
        sa.Column('inputs', sa.String(), nullable=False),
        sa.Column('request', sa.String(), nullable=False),
        sa.Column('status', sa.String(), nullable=False),
        sa.Column('verdict', sa.String(), nullable=True),
        sa.Column('rationale', sa.String(), nullable=True),
        sa.Column('confidence', sa.Float(), nullable=True),
        sa.Column('problem', sa.String(), nullable=True),
        sa.Column('reply', sa.String(), nullable=True),
        sa.Column('reply_model', sa.String(), nullable=True),
        sa.Column('input_tokens', sa.Integer(), nullable=False),
        sa.Column('output_tokens', sa.Integer(), nullable=False),
        sa.Column('cost_usd', sa.Float(), nullable=True),
        sa.Column('latency_s', sa.Float(), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.Column('updated_at', sa.String(), nullable=False),
        sa.Column('answered_at', sa.String(), nullable=True),
        sa.PrimaryKeyConstraint('key')
    )
    op.create_index('ix_judge_verdicts_status_model', 'judge_verdicts', ['status', 'model'], unique=False)


def _relabel_items() -> None:
    op.create_table('relabel_items',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('case_id', sa.String(), nullable=False),
        sa.Column('status', sa.String(), nullable=False),
        sa.Column('reasons', sa.String(), nullable=False),
        sa.Column('tools_hash', sa.String(), nullable=False),
        sa.Column('detected_at', sa.String(), nullable=False),
        sa.Column('decided_at', sa.String(), nullable=True),
        sa.Column('decided_by', sa.String(), nullable=True),
        sa.Column('note', sa.String(), nullable=True),
        sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_relabel_items_case_id'), 'relabel_items', ['case_id'], unique=False)


def _review_items() -> None:
    op.create_table('review_items',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(), nullable=False),
        sa.Column('ref', sa.String(), nullable=False),
        sa.Column('status', sa.String(), nullable=False),
        sa.Column('payload', sa.String(), nullable=False),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.Column('created_by', sa.String(), nullable=False),
        sa.Column('decided_at', sa.String(), nullable=True),
        sa.Column('decided_by', sa.String(), nullable=True),
        sa.Column('decision', sa.String(), nullable=True),
        sa.Column('comment', sa.String(), nullable=True),
        sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_review_items_ref'), 'review_items', ['ref'], unique=False)
    op.create_index('ix_review_items_status_kind', 'review_items', ['status', 'kind'], unique=False)


def _review_settings() -> None:
    op.create_table('review_settings',
        sa.Column('key', sa.String(), nullable=False),
        sa.Column('value', sa.String(), nullable=False),
        sa.Column('updated_at', sa.String(), nullable=False),
        sa.Column('updated_by', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('key')
    )


def _run_gold_cases() -> None:
    op.create_table('run_gold_cases',
        sa.Column('digest', sa.String(), nullable=False),
        sa.Column('case_id', sa.String(), nullable=False),
        sa.Column('body', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('digest')
    )


def _runs() -> None:
    op.create_table('runs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('run_id', sa.String(), nullable=False),
        sa.Column('label', sa.String(), nullable=True),
        sa.Column('model', sa.String(), nullable=True),
        sa.Column('prompt_version', sa.String(), nullable=True),
        sa.Column('agent', sa.String(), nullable=True),
        sa.Column('gold_version', sa.String(), nullable=False),
        sa.Column('gold_digest', sa.String(), nullable=False),
        sa.Column('schema_version', sa.String(), nullable=True),
        sa.Column('schema_hash', sa.String(), nullable=False),
        sa.Column('git_commit', sa.String(), nullable=True),
        sa.Column('source', sa.String(), nullable=False),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.Column('results', sa.Integer(), nullable=False),
        sa.Column('passed', sa.Integer(), nullable=False),
        sa.Column('failed', sa.Integer(), nullable=False),
        sa.Column('needs_review', sa.Integer(), nullable=False),
        sa.Column('report', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('run_id')
    )
    op.create_index(op.f('ix_runs_created_at'), 'runs', ['created_at'], unique=False)
    op.create_index(op.f('ix_runs_gold_version'), 'runs', ['gold_version'], unique=False)


def _tag_vocabulary() -> None:
    op.create_table('tag_vocabulary',
        sa.Column('tag', sa.String(), nullable=False),
        sa.Column('adversarial', sa.Boolean(), nullable=False),
        sa.Column('description', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('tag')
    )


def _tool_schemas() -> None:
    op.create_table('tool_schemas',
        sa.Column('hash', sa.String(), nullable=False),
        sa.Column('name', sa.String(), nullable=False),
        sa.Column('body', sa.String(), nullable=False),
        sa.Column('first_seen', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('hash')
    )
    op.create_index(op.f('ix_tool_schemas_name'), 'tool_schemas', ['name'], unique=False)


def _transcripts() -> None:
    op.create_table('transcripts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('external_id', sa.String(), nullable=False),
        sa.Column('source', sa.String(), nullable=False),
        sa.Column('content_hash', sa.String(), nullable=False),
        sa.Column('title', sa.String(), nullable=False),
        sa.Column('body', sa.String(), nullable=False),
        sa.Column('n_messages', sa.Integer(), nullable=False),
        sa.Column('n_turns', sa.Integer(), nullable=False),
        sa.Column('n_tool_calls', sa.Integer(), nullable=False),
        sa.Column('started_at', sa.String(), nullable=True),
        sa.Column('imported_at', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('content_hash'),
        sa.UniqueConstraint('external_id')
    )
    op.create_index(op.f('ix_transcripts_source'), 'transcripts', ['source'], unique=False)


def _users() -> None:
    op.create_table('users',
        sa.Column('name', sa.String(), nullable=False),
        sa.Column('role', sa.String(), nullable=False),
        sa.Column('active', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.PrimaryKeyConstraint('name')
    )


def _gold_case_tags() -> None:
    op.create_table('gold_case_tags',
        sa.Column('case_id', sa.String(), nullable=False),
        sa.Column('tag', sa.String(), nullable=False),
        sa.ForeignKeyConstraint(['case_id'], ['gold_cases.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('case_id', 'tag')
    )
    op.create_index(op.f('ix_gold_case_tags_tag'), 'gold_case_tags', ['tag'], unique=False)


def _gold_version_cases() -> None:
    op.create_table('gold_version_cases',
        sa.Column('version_id', sa.String(), nullable=False),
        sa.Column('case_id', sa.String(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('blob_hash', sa.String(), nullable=False),
        sa.ForeignKeyConstraint(['blob_hash'], ['gold_blobs.hash'], ),
        sa.ForeignKeyConstraint(['version_id'], ['gold_versions.id'], ),
        sa.PrimaryKeyConstraint('version_id', 'case_id')
    )
    op.create_index(op.f('ix_gold_version_cases_blob_hash'), 'gold_version_cases', ['blob_hash'], unique=False)


def _judge_adjudications() -> None:
    op.create_table('judge_adjudications',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('review_item_id', sa.Integer(), nullable=False),
        sa.Column('verdict_key', sa.String(), nullable=False),
        sa.Column('kind', sa.String(), nullable=False),
        sa.Column('model', sa.String(), nullable=False),
        sa.Column('prompt_version', sa.String(), nullable=False),
        sa.Column('judge_verdict', sa.String(), nullable=False),
        sa.Column('reviewer_verdict', sa.String(), nullable=False),
        sa.Column('decision', sa.String(), nullable=False),
        sa.Column('reviewer', sa.String(), nullable=False),
        sa.Column('note', sa.String(), nullable=False),
        sa.Column('new_version', sa.String(), nullable=True),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.ForeignKeyConstraint(['verdict_key'], ['judge_verdicts.key'], ),
        sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_judge_adjudications_created_at'), 'judge_adjudications', ['created_at'], unique=False)
    op.create_index(op.f('ix_judge_adjudications_review_item_id'), 'judge_adjudications', ['review_item_id'], unique=False)
    op.create_index(op.f('ix_judge_adjudications_verdict_key'), 'judge_adjudications', ['verdict_key'], unique=False)


def _judge_uses() -> None:
    op.create_table('judge_uses',
        sa.Column('verdict_key', sa.String(), nullable=False),
        sa.Column('ref_hash', sa.String(), nullable=False),
        sa.Column('kind', sa.String(), nullable=False),
        sa.Column('case_id', sa.String(), nullable=False),
        sa.Column('refs', sa.String(), nullable=False),
        sa.Column('queue_state', sa.String(), nullable=False),
        sa.Column('review_item_id', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.ForeignKeyConstraint(['verdict_key'], ['judge_verdicts.key'], ),
        sa.PrimaryKeyConstraint('verdict_key', 'ref_hash')
    )
    op.create_index(op.f('ix_judge_uses_case_id'), 'judge_uses', ['case_id'], unique=False)
    op.create_index(op.f('ix_judge_uses_queue_state'), 'judge_uses', ['queue_state'], unique=False)
    op.create_index(op.f('ix_judge_uses_review_item_id'), 'judge_uses', ['review_item_id'], unique=False)


def _leases() -> None:
    op.create_table('leases',
        sa.Column('transcript_id', sa.Integer(), nullable=False),
        sa.Column('holder', sa.String(), nullable=False),
        sa.Column('claimed_at', sa.String(), nullable=False),
        sa.Column('expires_at', sa.String(), nullable=False),
        sa.ForeignKeyConstraint(['holder'], ['users.name'], ),
        sa.ForeignKeyConstraint(['transcript_id'], ['transcripts.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('transcript_id')
    )
    op.create_index(op.f('ix_leases_expires_at'), 'leases', ['expires_at'], unique=False)
    op.create_index(op.f('ix_leases_holder'), 'leases', ['holder'], unique=False)


def _run_case_errors() -> None:
    op.create_table('run_case_errors',
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('case_id', sa.String(), nullable=False),
        sa.Column('trial', sa.Integer(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('code', sa.String(), nullable=False),
        sa.Column('pattern', sa.String(), nullable=False),
        sa.Column('tool', sa.String(), nullable=True),
        sa.Column('arg', sa.String(), nullable=True),
        sa.ForeignKeyConstraint(['run_pk'], ['runs.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_pk', 'case_id', 'trial', 'position')
    )
    op.create_index('ix_run_case_errors_pattern', 'run_case_errors', ['run_pk', 'code', 'pattern'], unique=False)


def _run_case_tools() -> None:
    op.create_table('run_case_tools',
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('case_id', sa.String(), nullable=False),
        sa.Column('trial', sa.Integer(), nullable=False),
        sa.Column('tool', sa.String(), nullable=False),
        sa.ForeignKeyConstraint(['run_pk'], ['runs.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_pk', 'case_id', 'trial', 'tool')
    )
    op.create_index('ix_run_case_tools_tool', 'run_case_tools', ['run_pk', 'tool'], unique=False)


def _run_cases() -> None:
    op.create_table('run_cases',
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('case_id', sa.String(), nullable=False),
        sa.Column('trial', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(), nullable=False),
        sa.Column('status', sa.String(), nullable=False),
        sa.Column('matched', sa.String(), nullable=True),
        sa.Column('expected_behavior', sa.String(), nullable=False),
        sa.Column('actual_behavior', sa.String(), nullable=False),
        sa.Column('selection', sa.Boolean(), nullable=True),
        sa.Column('arguments', sa.Boolean(), nullable=True),
        sa.Column('sequencing', sa.Boolean(), nullable=True),
        sa.Column('expected_tools', sa.String(), nullable=False),
        sa.Column('actual_tools', sa.String(), nullable=False),
        sa.Column('error_codes', sa.String(), nullable=False),
        sa.Column('split', sa.String(), nullable=False),
        sa.Column('toolkit_size', sa.Integer(), nullable=False),
        sa.Column('tags', sa.String(), nullable=False),
        sa.Column('gold_digest', sa.String(), nullable=True),
        sa.Column('result', sa.String(), nullable=True),
        sa.Column('actual', sa.String(), nullable=True),
        sa.ForeignKeyConstraint(['gold_digest'], ['run_gold_cases.digest'], ),
        sa.ForeignKeyConstraint(['run_pk'], ['runs.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_pk', 'case_id', 'trial')
    )


def _run_confusion() -> None:
    op.create_table('run_confusion',
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('gold', sa.String(), nullable=False),
        sa.Column('actual', sa.String(), nullable=False),
        sa.Column('count', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['run_pk'], ['runs.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_pk', 'gold', 'actual')
    )


def _run_groups() -> None:
    op.create_table('run_groups',
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(), nullable=False),
        sa.Column('name', sa.String(), nullable=False),
        sa.Column('results', sa.Integer(), nullable=False),
        sa.Column('passed', sa.Integer(), nullable=False),
        sa.Column('selection_ok', sa.Integer(), nullable=False),
        sa.Column('selection_n', sa.Integer(), nullable=False),
        sa.Column('arguments_ok', sa.Integer(), nullable=False),
        sa.Column('arguments_n', sa.Integer(), nullable=False),
        sa.Column('sequencing_ok', sa.Integer(), nullable=False),
        sa.Column('sequencing_n', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['run_pk'], ['runs.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_pk', 'kind', 'name')
    )
    op.create_index('ix_run_groups_kind_name', 'run_groups', ['kind', 'name'], unique=False)


def _run_metrics() -> None:
    op.create_table('run_metrics',
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('metric', sa.String(), nullable=False),
        sa.Column('value', sa.Float(), nullable=True),
        sa.Column('count', sa.Integer(), nullable=True),
        sa.Column('total', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['run_pk'], ['runs.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_pk', 'metric')
    )


def _run_patterns() -> None:
    op.create_table('run_patterns',
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('rank', sa.Integer(), nullable=False),
        sa.Column('code', sa.String(), nullable=False),
        sa.Column('text', sa.String(), nullable=False),
        sa.Column('count', sa.Integer(), nullable=False),
        sa.Column('of', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['run_pk'], ['runs.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_pk', 'rank')
    )


def _trajectory_labels() -> None:
    op.create_table('trajectory_labels',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('transcript_id', sa.Integer(), nullable=False),
        sa.Column('annotator', sa.String(), nullable=False),
        sa.Column('status', sa.String(), nullable=False),
        sa.Column('body', sa.String(), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.Column('updated_at', sa.String(), nullable=False),
        sa.Column('submitted_at', sa.String(), nullable=True),
        sa.ForeignKeyConstraint(['annotator'], ['users.name'], ),
        sa.ForeignKeyConstraint(['transcript_id'], ['transcripts.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('transcript_id', 'annotator')
    )
    op.create_index(op.f('ix_trajectory_labels_annotator'), 'trajectory_labels', ['annotator'], unique=False)


def _transcript_tools() -> None:
    op.create_table('transcript_tools',
        sa.Column('transcript_id', sa.Integer(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('schema_hash', sa.String(), nullable=False),
        sa.ForeignKeyConstraint(['schema_hash'], ['tool_schemas.hash'], ),
        sa.ForeignKeyConstraint(['transcript_id'], ['transcripts.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('transcript_id', 'position')
    )
    op.create_index(op.f('ix_transcript_tools_schema_hash'), 'transcript_tools', ['schema_hash'], unique=False)


def _turns() -> None:
    op.create_table('turns',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('transcript_id', sa.Integer(), nullable=False),
        sa.Column('ordinal', sa.Integer(), nullable=False),
        sa.Column('message_index', sa.Integer(), nullable=False),
        sa.Column('observed', sa.String(), nullable=False),
        sa.Column('observed_behavior', sa.String(), nullable=False),
        sa.Column('n_calls', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['transcript_id'], ['transcripts.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('transcript_id', 'message_index')
    )
    op.create_index(op.f('ix_turns_transcript_id'), 'turns', ['transcript_id'], unique=False)


def _labels() -> None:
    op.create_table('labels',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('turn_id', sa.Integer(), nullable=False),
        sa.Column('transcript_id', sa.Integer(), nullable=False),
        sa.Column('annotator', sa.String(), nullable=False),
        sa.Column('status', sa.String(), nullable=False),
        sa.Column('decision', sa.String(), nullable=True),
        sa.Column('unsure', sa.Boolean(), nullable=False),
        sa.Column('body', sa.String(), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.String(), nullable=False),
        sa.Column('updated_at', sa.String(), nullable=False),
        sa.Column('submitted_at', sa.String(), nullable=True),
        sa.ForeignKeyConstraint(['annotator'], ['users.name'], ),
        sa.ForeignKeyConstraint(['transcript_id'], ['transcripts.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['turn_id'], ['turns.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('turn_id', 'annotator')
    )
    op.create_index('ix_labels_annotator_status', 'labels', ['annotator', 'status'], unique=False)
    op.create_index('ix_labels_transcript_annotator', 'labels', ['transcript_id', 'annotator'], unique=False)

TABLES: list[tuple[str, Callable[[], None]]] = [("audit_log", _audit_log), ("gold_blobs", _gold_blobs), ("gold_cases", _gold_cases), ("gold_versions", _gold_versions), ("judge_verdicts", _judge_verdicts), ("relabel_items", _relabel_items), ("review_items", _review_items), ("review_settings", _review_settings), ("run_gold_cases", _run_gold_cases), ("runs", _runs), ("tag_vocabulary", _tag_vocabulary), ("tool_schemas", _tool_schemas), ("transcripts", _transcripts), ("users", _users), ("gold_case_tags", _gold_case_tags), ("gold_version_cases", _gold_version_cases), ("judge_adjudications", _judge_adjudications), ("judge_uses", _judge_uses), ("leases", _leases), ("run_case_errors", _run_case_errors), ("run_case_tools", _run_case_tools), ("run_cases", _run_cases), ("run_confusion", _run_confusion), ("run_groups", _run_groups), ("run_metrics", _run_metrics), ("run_patterns", _run_patterns), ("trajectory_labels", _trajectory_labels), ("transcript_tools", _transcript_tools), ("turns", _turns), ("labels", _labels)]
"""In dependency order (a table comes after the tables its foreign keys name)."""


def upgrade() -> None:
    existing = set(sa.inspect(op.get_bind()).get_table_names())
    for name, create in TABLES:
        if name not in existing:
            create()
    if "tag_vocabulary" not in existing:
        op.bulk_insert(sa.table("tag_vocabulary", sa.column("tag", sa.String()),
                                sa.column("adversarial", sa.Boolean()), sa.column("description", sa.String())),
                       [{"tag": tag, "adversarial": adversarial, "description": text}
                        for tag, adversarial, text in DEFAULT_TAGS])
    if "toolgold_migrations" in existing:
        op.drop_table("toolgold_migrations")


def downgrade() -> None:
    raise NotImplementedError("toolgold migrates forward only: restore a backup to go back")
