CREATE TABLE toolgold_migrations (
	version SERIAL NOT NULL, 
	name VARCHAR NOT NULL, 
	applied_at VARCHAR NOT NULL, 
	PRIMARY KEY (version)
);

CREATE TABLE transcripts (
	id SERIAL NOT NULL, 
	external_id VARCHAR NOT NULL, 
	source VARCHAR NOT NULL, 
	content_hash VARCHAR NOT NULL, 
	title VARCHAR NOT NULL, 
	body VARCHAR NOT NULL, 
	n_messages INTEGER NOT NULL, 
	n_turns INTEGER NOT NULL, 
	n_tool_calls INTEGER NOT NULL, 
	started_at VARCHAR, 
	imported_at VARCHAR NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (external_id), 
	UNIQUE (content_hash)
);

CREATE INDEX ix_transcripts_source ON transcripts (source);

CREATE TABLE tool_schemas (
	hash VARCHAR NOT NULL, 
	name VARCHAR NOT NULL, 
	body VARCHAR NOT NULL, 
	first_seen VARCHAR NOT NULL, 
	PRIMARY KEY (hash)
);

CREATE INDEX ix_tool_schemas_name ON tool_schemas (name);

CREATE TABLE transcript_tools (
	transcript_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	schema_hash VARCHAR NOT NULL, 
	PRIMARY KEY (transcript_id, position), 
	FOREIGN KEY(transcript_id) REFERENCES transcripts (id) ON DELETE CASCADE, 
	FOREIGN KEY(schema_hash) REFERENCES tool_schemas (hash)
);

CREATE INDEX ix_transcript_tools_schema_hash ON transcript_tools (schema_hash);

CREATE TABLE turns (
	id SERIAL NOT NULL, 
	transcript_id INTEGER NOT NULL, 
	ordinal INTEGER NOT NULL, 
	message_index INTEGER NOT NULL, 
	observed VARCHAR NOT NULL, 
	observed_behavior VARCHAR NOT NULL, 
	n_calls INTEGER NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (transcript_id, message_index), 
	FOREIGN KEY(transcript_id) REFERENCES transcripts (id) ON DELETE CASCADE
);

CREATE INDEX ix_turns_transcript_id ON turns (transcript_id);

CREATE TABLE gold_cases (
	id VARCHAR NOT NULL, 
	conversation_id VARCHAR, 
	turn INTEGER, 
	split VARCHAR NOT NULL, 
	kind VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	behavior VARCHAR NOT NULL, 
	tags VARCHAR NOT NULL, 
	source VARCHAR, 
	body VARCHAR NOT NULL, 
	content_hash VARCHAR NOT NULL, 
	created_at VARCHAR NOT NULL, 
	updated_at VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE INDEX ix_gold_cases_conversation_id ON gold_cases (conversation_id);

CREATE INDEX ix_gold_cases_split_status ON gold_cases (split, status);

CREATE TABLE gold_case_tags (
	case_id VARCHAR NOT NULL, 
	tag VARCHAR NOT NULL, 
	PRIMARY KEY (case_id, tag), 
	FOREIGN KEY(case_id) REFERENCES gold_cases (id) ON DELETE CASCADE
);

CREATE INDEX ix_gold_case_tags_tag ON gold_case_tags (tag);

CREATE TABLE audit_log (
	id SERIAL NOT NULL, 
	at VARCHAR NOT NULL, 
	actor VARCHAR NOT NULL, 
	action VARCHAR NOT NULL, 
	entity VARCHAR NOT NULL, 
	entity_id VARCHAR NOT NULL, 
	before VARCHAR, 
	after VARCHAR, 
	note VARCHAR, 
	PRIMARY KEY (id)
);

CREATE INDEX ix_audit_log_at ON audit_log (at);

CREATE INDEX ix_audit_log_entity_id ON audit_log (entity_id);

CREATE TABLE users (
	name VARCHAR NOT NULL, 
	role VARCHAR NOT NULL, 
	active BOOLEAN NOT NULL, 
	created_at VARCHAR NOT NULL, 
	PRIMARY KEY (name)
);

CREATE TABLE labels (
	id SERIAL NOT NULL, 
	turn_id INTEGER NOT NULL, 
	transcript_id INTEGER NOT NULL, 
	annotator VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	decision VARCHAR, 
	unsure BOOLEAN NOT NULL, 
	body VARCHAR NOT NULL, 
	version INTEGER NOT NULL, 
	created_at VARCHAR NOT NULL, 
	updated_at VARCHAR NOT NULL, 
	submitted_at VARCHAR, 
	PRIMARY KEY (id), 
	UNIQUE (turn_id, annotator), 
	FOREIGN KEY(turn_id) REFERENCES turns (id) ON DELETE CASCADE, 
	FOREIGN KEY(transcript_id) REFERENCES transcripts (id) ON DELETE CASCADE, 
	FOREIGN KEY(annotator) REFERENCES users (name)
);

CREATE INDEX ix_labels_annotator_status ON labels (annotator, status);

CREATE INDEX ix_labels_transcript_annotator ON labels (transcript_id, annotator);

CREATE TABLE leases (
	transcript_id INTEGER NOT NULL, 
	holder VARCHAR NOT NULL, 
	claimed_at VARCHAR NOT NULL, 
	expires_at VARCHAR NOT NULL, 
	PRIMARY KEY (transcript_id), 
	FOREIGN KEY(transcript_id) REFERENCES transcripts (id) ON DELETE CASCADE, 
	FOREIGN KEY(holder) REFERENCES users (name)
);

CREATE INDEX ix_leases_expires_at ON leases (expires_at);

CREATE INDEX ix_leases_holder ON leases (holder);

CREATE TABLE tag_vocabulary (
	tag VARCHAR NOT NULL, 
	adversarial BOOLEAN NOT NULL, 
	description VARCHAR NOT NULL, 
	PRIMARY KEY (tag)
);

CREATE TABLE gold_blobs (
	hash VARCHAR NOT NULL, 
	body VARCHAR NOT NULL, 
	PRIMARY KEY (hash)
);

CREATE TABLE gold_versions (
	id VARCHAR NOT NULL, 
	split VARCHAR NOT NULL, 
	number INTEGER NOT NULL, 
	parent_id VARCHAR, 
	content_hash VARCHAR NOT NULL, 
	n_cases INTEGER NOT NULL, 
	created_at VARCHAR NOT NULL, 
	created_by VARCHAR NOT NULL, 
	note VARCHAR NOT NULL, 
	provenance VARCHAR NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (split, number), 
	FOREIGN KEY(parent_id) REFERENCES gold_versions (id)
);

CREATE TABLE gold_version_cases (
	version_id VARCHAR NOT NULL, 
	case_id VARCHAR NOT NULL, 
	position INTEGER NOT NULL, 
	blob_hash VARCHAR NOT NULL, 
	PRIMARY KEY (version_id, case_id), 
	FOREIGN KEY(version_id) REFERENCES gold_versions (id), 
	FOREIGN KEY(blob_hash) REFERENCES gold_blobs (hash)
);

CREATE INDEX ix_gold_version_cases_blob_hash ON gold_version_cases (blob_hash);

CREATE TABLE review_items (
	id SERIAL NOT NULL, 
	kind VARCHAR NOT NULL, 
	ref VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	payload VARCHAR NOT NULL, 
	created_at VARCHAR NOT NULL, 
	created_by VARCHAR NOT NULL, 
	decided_at VARCHAR, 
	decided_by VARCHAR, 
	decision VARCHAR, 
	comment VARCHAR, 
	PRIMARY KEY (id)
);

CREATE INDEX ix_review_items_ref ON review_items (ref);

CREATE INDEX ix_review_items_status_kind ON review_items (status, kind);

CREATE TABLE review_settings (
	key VARCHAR NOT NULL, 
	value VARCHAR NOT NULL, 
	updated_at VARCHAR NOT NULL, 
	updated_by VARCHAR NOT NULL, 
	PRIMARY KEY (key)
);

CREATE TABLE relabel_items (
	id SERIAL NOT NULL, 
	case_id VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	reasons VARCHAR NOT NULL, 
	tools_hash VARCHAR NOT NULL, 
	detected_at VARCHAR NOT NULL, 
	decided_at VARCHAR, 
	decided_by VARCHAR, 
	note VARCHAR, 
	PRIMARY KEY (id)
);

CREATE INDEX ix_relabel_items_case_id ON relabel_items (case_id);

CREATE TABLE trajectory_labels (
	id SERIAL NOT NULL, 
	transcript_id INTEGER NOT NULL, 
	annotator VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	body VARCHAR NOT NULL, 
	version INTEGER NOT NULL, 
	created_at VARCHAR NOT NULL, 
	updated_at VARCHAR NOT NULL, 
	submitted_at VARCHAR, 
	PRIMARY KEY (id), 
	UNIQUE (transcript_id, annotator), 
	FOREIGN KEY(transcript_id) REFERENCES transcripts (id) ON DELETE CASCADE, 
	FOREIGN KEY(annotator) REFERENCES users (name)
);

CREATE INDEX ix_trajectory_labels_annotator ON trajectory_labels (annotator);

CREATE TABLE judge_verdicts (
	key VARCHAR NOT NULL, 
	kind VARCHAR NOT NULL, 
	model VARCHAR NOT NULL, 
	prompt_version VARCHAR NOT NULL, 
	inputs VARCHAR NOT NULL, 
	request VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	verdict VARCHAR, 
	rationale VARCHAR, 
	confidence FLOAT, 
	problem VARCHAR, 
	reply VARCHAR, 
	reply_model VARCHAR, 
	input_tokens INTEGER NOT NULL, 
	output_tokens INTEGER NOT NULL, 
	cost_usd FLOAT, 
	latency_s FLOAT, 
	attempts INTEGER NOT NULL, 
	created_at VARCHAR NOT NULL, 
	updated_at VARCHAR NOT NULL, 
	answered_at VARCHAR, 
	PRIMARY KEY (key)
);

CREATE INDEX ix_judge_verdicts_status_model ON judge_verdicts (status, model);

CREATE TABLE judge_uses (
	verdict_key VARCHAR NOT NULL, 
	ref_hash VARCHAR NOT NULL, 
	kind VARCHAR NOT NULL, 
	case_id VARCHAR NOT NULL, 
	refs VARCHAR NOT NULL, 
	queue_state VARCHAR NOT NULL, 
	review_item_id INTEGER, 
	created_at VARCHAR NOT NULL, 
	PRIMARY KEY (verdict_key, ref_hash), 
	FOREIGN KEY(verdict_key) REFERENCES judge_verdicts (key)
);

CREATE INDEX ix_judge_uses_case_id ON judge_uses (case_id);

CREATE INDEX ix_judge_uses_queue_state ON judge_uses (queue_state);

CREATE INDEX ix_judge_uses_review_item_id ON judge_uses (review_item_id);

CREATE TABLE judge_adjudications (
	id SERIAL NOT NULL, 
	review_item_id INTEGER NOT NULL, 
	verdict_key VARCHAR NOT NULL, 
	kind VARCHAR NOT NULL, 
	model VARCHAR NOT NULL, 
	prompt_version VARCHAR NOT NULL, 
	judge_verdict VARCHAR NOT NULL, 
	reviewer_verdict VARCHAR NOT NULL, 
	decision VARCHAR NOT NULL, 
	reviewer VARCHAR NOT NULL, 
	note VARCHAR NOT NULL, 
	new_version VARCHAR, 
	created_at VARCHAR NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(verdict_key) REFERENCES judge_verdicts (key)
);

CREATE INDEX ix_judge_adjudications_created_at ON judge_adjudications (created_at);

CREATE INDEX ix_judge_adjudications_review_item_id ON judge_adjudications (review_item_id);

CREATE INDEX ix_judge_adjudications_verdict_key ON judge_adjudications (verdict_key);

CREATE TABLE runs (
	id SERIAL NOT NULL, 
	run_id VARCHAR NOT NULL, 
	label VARCHAR, 
	model VARCHAR, 
	prompt_version VARCHAR, 
	agent VARCHAR, 
	gold_version VARCHAR NOT NULL, 
	gold_digest VARCHAR NOT NULL, 
	schema_version VARCHAR, 
	schema_hash VARCHAR NOT NULL, 
	git_commit VARCHAR, 
	source VARCHAR NOT NULL, 
	created_at VARCHAR NOT NULL, 
	results INTEGER NOT NULL, 
	passed INTEGER NOT NULL, 
	failed INTEGER NOT NULL, 
	needs_review INTEGER NOT NULL, 
	report VARCHAR NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (run_id)
);

CREATE INDEX ix_runs_created_at ON runs (created_at);

CREATE INDEX ix_runs_gold_version ON runs (gold_version);

CREATE TABLE run_metrics (
	run_pk INTEGER NOT NULL, 
	metric VARCHAR NOT NULL, 
	value FLOAT, 
	count INTEGER, 
	total INTEGER, 
	PRIMARY KEY (run_pk, metric), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE
);

CREATE TABLE run_groups (
	run_pk INTEGER NOT NULL, 
	kind VARCHAR NOT NULL, 
	name VARCHAR NOT NULL, 
	results INTEGER NOT NULL, 
	passed INTEGER NOT NULL, 
	selection_ok INTEGER NOT NULL, 
	selection_n INTEGER NOT NULL, 
	arguments_ok INTEGER NOT NULL, 
	arguments_n INTEGER NOT NULL, 
	sequencing_ok INTEGER NOT NULL, 
	sequencing_n INTEGER NOT NULL, 
	PRIMARY KEY (run_pk, kind, name), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE
);

CREATE INDEX ix_run_groups_kind_name ON run_groups (kind, name);

CREATE TABLE run_confusion (
	run_pk INTEGER NOT NULL, 
	gold VARCHAR NOT NULL, 
	actual VARCHAR NOT NULL, 
	count INTEGER NOT NULL, 
	PRIMARY KEY (run_pk, gold, actual), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE
);

CREATE TABLE run_patterns (
	run_pk INTEGER NOT NULL, 
	rank INTEGER NOT NULL, 
	code VARCHAR NOT NULL, 
	text VARCHAR NOT NULL, 
	count INTEGER NOT NULL, 
	"of" INTEGER NOT NULL, 
	PRIMARY KEY (run_pk, rank), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE
);

CREATE TABLE run_gold_cases (
	digest VARCHAR NOT NULL, 
	case_id VARCHAR NOT NULL, 
	body VARCHAR NOT NULL, 
	PRIMARY KEY (digest)
);

CREATE TABLE run_cases (
	run_pk INTEGER NOT NULL, 
	case_id VARCHAR NOT NULL, 
	trial INTEGER NOT NULL, 
	kind VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	matched VARCHAR, 
	expected_behavior VARCHAR NOT NULL, 
	actual_behavior VARCHAR NOT NULL, 
	selection BOOLEAN, 
	arguments BOOLEAN, 
	sequencing BOOLEAN, 
	expected_tools VARCHAR NOT NULL, 
	actual_tools VARCHAR NOT NULL, 
	error_codes VARCHAR NOT NULL, 
	split VARCHAR NOT NULL, 
	toolkit_size INTEGER NOT NULL, 
	tags VARCHAR NOT NULL, 
	gold_digest VARCHAR, 
	result VARCHAR, 
	actual VARCHAR, 
	PRIMARY KEY (run_pk, case_id, trial), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE, 
	FOREIGN KEY(gold_digest) REFERENCES run_gold_cases (digest)
);

CREATE TABLE run_case_tools (
	run_pk INTEGER NOT NULL, 
	case_id VARCHAR NOT NULL, 
	trial INTEGER NOT NULL, 
	tool VARCHAR NOT NULL, 
	PRIMARY KEY (run_pk, case_id, trial, tool), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE
);

CREATE INDEX ix_run_case_tools_tool ON run_case_tools (run_pk, tool);

CREATE TABLE run_case_errors (
	run_pk INTEGER NOT NULL, 
	case_id VARCHAR NOT NULL, 
	trial INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	code VARCHAR NOT NULL, 
	pattern VARCHAR NOT NULL, 
	tool VARCHAR, 
	arg VARCHAR, 
	PRIMARY KEY (run_pk, case_id, trial, position), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE
);

CREATE INDEX ix_run_case_errors_pattern ON run_case_errors (run_pk, code, pattern);
