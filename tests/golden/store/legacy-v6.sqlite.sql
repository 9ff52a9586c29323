BEGIN TRANSACTION;
CREATE TABLE audit_log (
	id INTEGER NOT NULL, 
	at VARCHAR NOT NULL, 
	actor VARCHAR NOT NULL, 
	action VARCHAR NOT NULL, 
	entity VARCHAR NOT NULL, 
	entity_id VARCHAR NOT NULL, 
	"before" VARCHAR, 
	"after" VARCHAR, 
	note VARCHAR, 
	PRIMARY KEY (id)
);
INSERT INTO "audit_log" VALUES(1,'2026-12-01T09:42:10.990Z','ana','user.add','user','ana',NULL,'{"active":true,"role":"admin"}',NULL);
INSERT INTO "audit_log" VALUES(2,'2026-12-01T09:42:10.995Z','import','import','batch','2026-12-01T09:42:10.995Z',NULL,'{"gold_cases":1,"sources":["f.jsonl","g.jsonl"],"transcripts":1}',NULL);
INSERT INTO "audit_log" VALUES(3,'2026-12-01T09:42:10.998Z','ana','label.save','label','t1#t2@ana',NULL,'{"body":{"calls":[{"arguments":{"customer_id":"C-1042"},"name":"search_orders"}],"decision":"same","rationale":"look it up","tags":["happy_path"]},"status":"draft","version":1}',NULL);
INSERT INTO "audit_log" VALUES(4,'2026-12-01T09:42:11.002Z','ana','label.submit','label','t1#t2@ana','{"body":{"calls":[{"arguments":{"customer_id":"C-1042"},"name":"search_orders"}],"decision":"same","rationale":"look it up","tags":["happy_path"]},"status":"draft","version":1}','{"body":{"calls":[{"arguments":{"customer_id":"C-1042"},"name":"search_orders"}],"decision":"same","rationale":"look it up","tags":["happy_path"]},"status":"submitted","version":2}',NULL);
INSERT INTO "audit_log" VALUES(5,'2026-12-01T09:42:11.004Z','ana','gold.materialize','gold_case','t1#t2',NULL,'{"annotators":["ana"],"expected":{"behavior":"call","calls":[{"arguments":{"customer_id":"C-1042"},"name":"search_orders"}],"tool_only":false},"tags":["happy_path"]}',NULL);
CREATE TABLE gold_blobs (
	hash VARCHAR NOT NULL, 
	body VARCHAR NOT NULL, 
	PRIMARY KEY (hash)
);
CREATE TABLE gold_case_tags (
	case_id VARCHAR NOT NULL, 
	tag VARCHAR NOT NULL, 
	PRIMARY KEY (case_id, tag), 
	FOREIGN KEY(case_id) REFERENCES gold_cases (id) ON DELETE CASCADE
);
INSERT INTO "gold_case_tags" VALUES('g1','happy_path');
INSERT INTO "gold_case_tags" VALUES('t1#t2','happy_path');
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
INSERT INTO "gold_cases" VALUES('g1','t1',2,'regression','turn','approved','call','["happy_path"]','g.jsonl','{"after":[],"alternatives":[],"arg_rules":{},"conversation_id":"t1","expected":{"behavior":"call","calls":[{"arguments":{"customer_id":"C-1042"},"name":"search_orders"}],"tool_only":false},"forbidden":[],"format":"toolgold.gold/1","id":"g1","kind":"turn","messages":[{"content":"You are a support agent.","name":null,"role":"system","tool_call_id":null,"tool_calls":[]},{"content":"Where is my order? I''m C-1042.","name":null,"role":"user","tool_call_id":null,"tool_calls":[]}],"order":null,"provenance":{"annotators":[],"gold_version":null,"labeled_at":null,"reviewer":null,"source":null,"status":"approved"},"rationale":"","reference_time":null,"required_args":null,"split":"regression","tags":["happy_path"],"tools":[{"description":"Find orders","name":"search_orders","parameters":{"properties":{"customer_id":{"type":"string"}},"required":["customer_id"],"type":"object"}}],"turn":2}','39c47ccbb23a2fc83c3b2268028c1a279b1c023fb4aef621dc76937711da8a06','2026-12-01T09:42:10.994Z','2026-12-01T09:42:10.994Z');
INSERT INTO "gold_cases" VALUES('t1#t2','t1',2,'regression','turn','submitted','call','["happy_path"]','unit','{"after":[],"alternatives":[],"arg_rules":{},"conversation_id":"t1","expected":{"behavior":"call","calls":[{"arguments":{"customer_id":"C-1042"},"name":"search_orders"}],"tool_only":false},"forbidden":[],"format":"toolgold.gold/1","id":"t1#t2","kind":"turn","messages":[{"content":"You are a support agent.","name":null,"role":"system","tool_call_id":null,"tool_calls":[]},{"content":"Where is my order? I''m C-1042.","name":null,"role":"user","tool_call_id":null,"tool_calls":[]}],"order":null,"provenance":{"annotators":["ana"],"gold_version":null,"labeled_at":"2026-12-01T09:42:11Z","reviewer":null,"source":"unit","status":"submitted"},"rationale":"look it up","reference_time":null,"required_args":null,"split":"regression","tags":["happy_path"],"tools":[{"description":"Find orders","name":"search_orders","parameters":{"properties":{"customer_id":{"type":"string"}},"required":["customer_id"],"type":"object"}}],"turn":2}','c9800e709a3bd8dff2cb5946bc4c92936cc3844a51ac2f567f8be03d846098d9','2026-12-01T09:42:11.003Z','2026-12-01T09:42:11.003Z');
CREATE TABLE gold_version_cases (
	version_id VARCHAR NOT NULL, 
	case_id VARCHAR NOT NULL, 
	position INTEGER NOT NULL, 
	blob_hash VARCHAR NOT NULL, 
	PRIMARY KEY (version_id, case_id), 
	FOREIGN KEY(version_id) REFERENCES gold_versions (id), 
	FOREIGN KEY(blob_hash) REFERENCES gold_blobs (hash)
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
CREATE TABLE judge_adjudications (
	id INTEGER NOT NULL, 
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
	FOREIGN KEY(verdict_key) REFERENCES judge_verdicts ("key")
);
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
	FOREIGN KEY(verdict_key) REFERENCES judge_verdicts ("key")
);
CREATE TABLE judge_verdicts (
	"key" VARCHAR NOT NULL, 
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
	PRIMARY KEY ("key")
);
CREATE TABLE labels (
	id INTEGER NOT NULL, 
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
INSERT INTO "labels" VALUES(1,1,1,'ana','submitted','same',0,'{"calls":[{"arguments":{"customer_id":"C-1042"},"name":"search_orders"}],"decision":"same","rationale":"look it up","tags":["happy_path"]}',2,'2026-12-01T09:42:10.997Z','2026-12-01T09:42:11.000Z','2026-12-01T09:42:11.000Z');
CREATE TABLE leases (
	transcript_id INTEGER NOT NULL, 
	holder VARCHAR NOT NULL, 
	claimed_at VARCHAR NOT NULL, 
	expires_at VARCHAR NOT NULL, 
	PRIMARY KEY (transcript_id), 
	FOREIGN KEY(transcript_id) REFERENCES transcripts (id) ON DELETE CASCADE, 
	FOREIGN KEY(holder) REFERENCES users (name)
);
CREATE TABLE relabel_items (
	id INTEGER NOT NULL, 
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
CREATE TABLE review_items (
	id INTEGER NOT NULL, 
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
CREATE TABLE review_settings (
	"key" VARCHAR NOT NULL, 
	value VARCHAR NOT NULL, 
	updated_at VARCHAR NOT NULL, 
	updated_by VARCHAR NOT NULL, 
	PRIMARY KEY ("key")
);
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
CREATE TABLE run_case_tools (
	run_pk INTEGER NOT NULL, 
	case_id VARCHAR NOT NULL, 
	trial INTEGER NOT NULL, 
	tool VARCHAR NOT NULL, 
	PRIMARY KEY (run_pk, case_id, trial, tool), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE
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
CREATE TABLE run_confusion (
	run_pk INTEGER NOT NULL, 
	gold VARCHAR NOT NULL, 
	actual VARCHAR NOT NULL, 
	count INTEGER NOT NULL, 
	PRIMARY KEY (run_pk, gold, actual), 
	FOREIGN KEY(run_pk) REFERENCES runs (id) ON DELETE CASCADE
);
CREATE TABLE run_gold_cases (
	digest VARCHAR NOT NULL, 
	case_id VARCHAR NOT NULL, 
	body VARCHAR NOT NULL, 
	PRIMARY KEY (digest)
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
CREATE TABLE run_metrics (
	run_pk INTEGER NOT NULL, 
	metric VARCHAR NOT NULL, 
	value FLOAT, 
	count INTEGER, 
	total INTEGER, 
	PRIMARY KEY (run_pk, metric), 
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
CREATE TABLE runs (
	id INTEGER NOT NULL, 
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
CREATE TABLE tag_vocabulary (
	tag VARCHAR NOT NULL, 
	adversarial BOOLEAN NOT NULL, 
	description VARCHAR NOT NULL, 
	PRIMARY KEY (tag)
);
INSERT INTO "tag_vocabulary" VALUES('happy_path',0,'A clear request: the obvious tool with values stated in the conversation.');
INSERT INTO "tag_vocabulary" VALUES('near_duplicate_tools',1,'Several offered tools look right; only one is.');
INSERT INTO "tag_vocabulary" VALUES('underspecified',1,'A needed value is vague or missing: asking the user may be right.');
INSERT INTO "tag_vocabulary" VALUES('missing_info',1,'The information the call needs is nowhere in the context.');
INSERT INTO "tag_vocabulary" VALUES('tool_shaped_language',1,'Words that sound like a tool ("cancel", "book") where no call is wanted.');
INSERT INTO "tag_vocabulary" VALUES('ordered_multi_step',1,'Calls must come in order; a later one needs an earlier result.');
INSERT INTO "tag_vocabulary" VALUES('stale_context',1,'A value stated earlier was superseded later in the conversation.');
INSERT INTO "tag_vocabulary" VALUES('relative_date',1,'Dates such as "next Friday" that resolve against the reference time.');
INSERT INTO "tag_vocabulary" VALUES('parallel_calls',1,'Several independent calls belong in the same turn.');
INSERT INTO "tag_vocabulary" VALUES('policy_refusal',1,'The policy forbids what the user asks; the right move is to decline or transfer.');
INSERT INTO "tag_vocabulary" VALUES('distractor_values',1,'Plausible but wrong values sit in the context.');
CREATE TABLE tool_schemas (
	hash VARCHAR NOT NULL, 
	name VARCHAR NOT NULL, 
	body VARCHAR NOT NULL, 
	first_seen VARCHAR NOT NULL, 
	PRIMARY KEY (hash)
);
INSERT INTO "tool_schemas" VALUES('36f80235e9eed27ac4c578da09f142ade5a9443de4631f0dc10db10164aec16c','search_orders','{"description":"Find orders","name":"search_orders","parameters":{"properties":{"customer_id":{"type":"string"}},"required":["customer_id"],"type":"object"}}','2026-12-01T09:42:10.993Z');
CREATE TABLE toolgold_migrations (
	version INTEGER NOT NULL, 
	name VARCHAR NOT NULL, 
	applied_at VARCHAR NOT NULL, 
	PRIMARY KEY (version)
);
INSERT INTO "toolgold_migrations" VALUES(1,'initial tables','2026-12-01T09:42:10.977Z');
INSERT INTO "toolgold_migrations" VALUES(2,'labeling: users, labels, leases, tag vocabulary','2026-12-01T09:42:10.980Z');
INSERT INTO "toolgold_migrations" VALUES(3,'review and gold versions: versions, review queue, settings, re-labeling queue','2026-12-01T09:42:10.982Z');
INSERT INTO "toolgold_migrations" VALUES(4,'trajectory labels','2026-12-01T09:42:10.983Z');
INSERT INTO "toolgold_migrations" VALUES(5,'judge verdicts and queue: verdict cache, where questions came from, adjudications','2026-12-01T09:42:10.985Z');
INSERT INTO "toolgold_migrations" VALUES(6,'run history: saved runs, their numbers and per-case outcomes','2026-12-01T09:42:10.988Z');
CREATE TABLE trajectory_labels (
	id INTEGER NOT NULL, 
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
CREATE TABLE transcript_tools (
	transcript_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	schema_hash VARCHAR NOT NULL, 
	PRIMARY KEY (transcript_id, position), 
	FOREIGN KEY(transcript_id) REFERENCES transcripts (id) ON DELETE CASCADE, 
	FOREIGN KEY(schema_hash) REFERENCES tool_schemas (hash)
);
INSERT INTO "transcript_tools" VALUES(1,0,'36f80235e9eed27ac4c578da09f142ade5a9443de4631f0dc10db10164aec16c');
CREATE TABLE transcripts (
	id INTEGER NOT NULL, 
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
INSERT INTO "transcripts" VALUES(1,'t1','unit','259e733c51091859eae49db131394cb274d0b21fa825db48db4a482be83ad964','Where is my order? I''m C-1042.','{"format":"toolgold.transcript/1","id":"t1","messages":[{"content":"You are a support agent.","name":null,"role":"system","tool_call_id":null,"tool_calls":[]},{"content":"Where is my order? I''m C-1042.","name":null,"role":"user","tool_call_id":null,"tool_calls":[]},{"content":null,"name":null,"role":"assistant","tool_call_id":null,"tool_calls":[{"function":{"arguments":"{\"customer_id\": \"C-1042\"}","name":"search_orders"},"id":"c1","type":"function"}]},{"content":"{\"order_id\": \"O-7\"}","name":null,"role":"tool","tool_call_id":"c1","tool_calls":[]},{"content":"Found it","name":null,"role":"assistant","tool_call_id":null,"tool_calls":[]}],"metadata":{"source":"unit","timestamp":"2026-01-05T10:00:00Z"}}',5,2,1,'2026-01-05T10:00:00Z','2026-12-01T09:42:10.992Z');
CREATE TABLE turns (
	id INTEGER NOT NULL, 
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
INSERT INTO "turns" VALUES(1,1,0,2,'[{"arguments":{"customer_id":"C-1042"},"name":"search_orders"}]','call',1);
INSERT INTO "turns" VALUES(2,1,1,4,'[]','text',0);
CREATE TABLE users (
	name VARCHAR NOT NULL, 
	role VARCHAR NOT NULL, 
	active BOOLEAN NOT NULL, 
	created_at VARCHAR NOT NULL, 
	PRIMARY KEY (name)
);
INSERT INTO "users" VALUES('ana','admin',1,'2026-12-01T09:42:10.990Z');
CREATE INDEX ix_transcripts_source ON transcripts (source);
CREATE INDEX ix_tool_schemas_name ON tool_schemas (name);
CREATE INDEX ix_gold_cases_split_status ON gold_cases (split, status);
CREATE INDEX ix_gold_cases_conversation_id ON gold_cases (conversation_id);
CREATE INDEX ix_audit_log_at ON audit_log (at);
CREATE INDEX ix_audit_log_entity_id ON audit_log (entity_id);
CREATE INDEX ix_transcript_tools_schema_hash ON transcript_tools (schema_hash);
CREATE INDEX ix_turns_transcript_id ON turns (transcript_id);
CREATE INDEX ix_gold_case_tags_tag ON gold_case_tags (tag);
CREATE INDEX ix_labels_annotator_status ON labels (annotator, status);
CREATE INDEX ix_labels_transcript_annotator ON labels (transcript_id, annotator);
CREATE INDEX ix_leases_expires_at ON leases (expires_at);
CREATE INDEX ix_leases_holder ON leases (holder);
CREATE INDEX ix_review_items_ref ON review_items (ref);
CREATE INDEX ix_review_items_status_kind ON review_items (status, kind);
CREATE INDEX ix_relabel_items_case_id ON relabel_items (case_id);
CREATE INDEX ix_gold_version_cases_blob_hash ON gold_version_cases (blob_hash);
CREATE INDEX ix_trajectory_labels_annotator ON trajectory_labels (annotator);
CREATE INDEX ix_judge_verdicts_status_model ON judge_verdicts (status, model);
CREATE INDEX ix_judge_uses_case_id ON judge_uses (case_id);
CREATE INDEX ix_judge_uses_queue_state ON judge_uses (queue_state);
CREATE INDEX ix_judge_uses_review_item_id ON judge_uses (review_item_id);
CREATE INDEX ix_judge_adjudications_created_at ON judge_adjudications (created_at);
CREATE INDEX ix_judge_adjudications_verdict_key ON judge_adjudications (verdict_key);
CREATE INDEX ix_judge_adjudications_review_item_id ON judge_adjudications (review_item_id);
CREATE INDEX ix_runs_created_at ON runs (created_at);
CREATE INDEX ix_runs_gold_version ON runs (gold_version);
CREATE INDEX ix_run_groups_kind_name ON run_groups (kind, name);
CREATE INDEX ix_run_case_tools_tool ON run_case_tools (run_pk, tool);
CREATE INDEX ix_run_case_errors_pattern ON run_case_errors (run_pk, code, pattern);
COMMIT;
