#!/usr/bin/env bash
# The toolgold regression suite for CI: run the agent on the gold set, score the run against the last saved
# run on the same gold version, gate, write a PR-comment summary, and (SAVE=1) save the run to the history.
#
# Environment:
#   GOLD            the gold set (toolgold.gold/1 JSONL), e.g. exported from a frozen version
#   AGENT           anthropic (default), openai (OPENAI_BASE_URL, OPENAI_API_KEY) or python:module:function
#   MODEL           the model under test (for --agent anthropic)
#   TRIALS          trials per case (default 1; more gives pass^k)
#   GATES           toolgold score gate options, e.g. "--fail-under selection=0.95 --max-tool-drop 0.05"
#   TOOLGOLD_DB     the run history (a PostgreSQL URL shared with the dashboards, or a SQLite file)
#   SAVE=1          save this run to the history (do it on the main line only: it becomes the next baseline)
#   LABEL, PROMPT_VERSION, GIT_COMMIT   what the saved run is called and made from
#   OUT             where the files go (default toolgold-out): runs.jsonl, junit.xml, summary.md, report.json
# Exit: 0 pass, 1 a gate or a per-tool regression failed, 2 bad input or the agent could not run.
set -uo pipefail

: "${GOLD:?set GOLD to the gold set}"
OUT=${OUT:-toolgold-out}
mkdir -p "$OUT"

model=()
[ -n "${MODEL:-}" ] && model=(--model "$MODEL")
read -r -a gates <<< "${GATES:-}"

toolgold runs baseline --gold "$GOLD" --out "$OUT/last.json" --allow-missing || exit 2
baseline=()
[ -f "$OUT/last.json" ] && baseline=(--baseline "$OUT/last.json")

toolgold run "$GOLD" --agent "${AGENT:-anthropic}" "${model[@]}" --trials "${TRIALS:-1}" --out "$OUT/runs.jsonl" \
  || exit 2

score() { toolgold score "$GOLD" "$OUT/runs.jsonl" "${baseline[@]}" "${gates[@]}" "$@"; }

score --format junit --out "$OUT/junit.xml"
gate=$?
[ "$gate" -le 1 ] || exit "$gate"
score --format markdown --out "$OUT/summary.md" || [ $? -eq 1 ] || exit 2

save=()
if [ "${SAVE:-0}" = 1 ]; then
  save=(--save)
  [ -n "${LABEL:-}" ] && save+=(--label "$LABEL")
  [ -n "${PROMPT_VERSION:-}" ] && save+=(--prompt-version "$PROMPT_VERSION")
  [ -n "${GIT_COMMIT:-}" ] && save+=(--git-commit "$GIT_COMMIT")
  [ -n "${MODEL:-}" ] && save+=(--model "$MODEL")
fi
score --format json --out "$OUT/report.json" "${save[@]}" || [ $? -eq 1 ] || exit 2
exit "$gate"
