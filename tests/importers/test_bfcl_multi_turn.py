"""BFCL v4 multi-turn questions -> one transcript per question and one turn case per user turn.

Expectations are recomputed from the raw files: the gold call strings are run here against recording
stand-ins (the importer itself only parses them with ``ast``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scorer.importers import detect
from tests.importers.helpers import REAL, SHARED, convert, needs_shared, write_lines

BFCL = REAL / "bfcl"
QUESTIONS = BFCL / "BFCL_v4_multi_turn_base.json"
ANSWERS = BFCL / "possible_answer" / QUESTIONS.name
DOCS = BFCL / "multi_turn_func_doc"
FULL = SHARED / "traces" / "bfcl-multi-turn" / QUESTIONS.name


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recorded_call(text: str, docs: dict[str, list[str]]) -> tuple[str, dict[str, Any]]:
    """What a call string asks for, found by running it against stand-ins that record their arguments."""
    def stand_in(name: str) -> Any:
        return lambda *args, **kwargs: (name, {**dict(zip(docs[name], args, strict=False)), **kwargs})
    return eval(text, {"__builtins__": {}, **{name: stand_in(name) for name in docs}})


def doc_params() -> dict[str, list[str]]:
    return {f["name"]: list(f["parameters"]["properties"]) for p in DOCS.glob("*.json") for f in jsonl(p)}


def test_every_user_turn_is_a_decision_point_with_the_turns_gold_calls() -> None:
    questions, answers = jsonl(QUESTIONS), {a["id"]: a["ground_truth"] for a in jsonl(ANSWERS)}
    result = convert(QUESTIONS)
    assert detect(QUESTIONS).NAME == "bfcl"
    assert result.errors == []
    turns = sum(len(q["question"]) for q in questions)
    gold_calls = sum(len(turn) for q in questions for turn in answers[q["id"]])
    empty = sum(1 for q in questions for turn in answers[q["id"]] if not turn)
    assert (len(result.transcripts), turns, gold_calls, empty) == (12, 48, 74, 3)
    assert len(result.gold) == turns == result.decision_points
    assert sum(len(c.expected.calls) for c in result.gold) == gold_calls == result.tool_calls
    assert sum(c.expected.behavior == "no_call" for c in result.gold) == empty
    params = doc_params()
    for question in questions:
        cases = [c for c in result.gold if c.conversation_id == f"bfcl/{question['id']}"]
        assert len(cases) == len(question["question"])
        for case, user_turn, gold in zip(cases, question["question"], answers[question["id"]], strict=True):
            assert case.messages[-1].content == user_turn[-1]["content"]
            assert [(c.name, c.arguments) for c in case.expected.calls] == [recorded_call(g, params) for g in gold]


def test_the_transcript_carries_the_reference_path_and_tools_from_the_function_docs() -> None:
    question = jsonl(QUESTIONS)[0]
    transcript = convert(QUESTIONS).transcript(f"bfcl/{question['id']}")
    docs = {f["name"]: f for p in DOCS.glob("*.json") for f in jsonl(p)}
    classes = {"GorillaFileSystem": "gorilla_file_system.json", "TwitterAPI": "posting_api.json"}
    offered = [f["name"] for c in question["involved_classes"] for f in jsonl(DOCS / classes[c])
               if f["name"] not in question["excluded_function"]]
    assert [t.name for t in transcript.tools] == offered
    assert "cp" in question["excluded_function"] and "cp" not in offered
    cat = next(t for t in transcript.tools if t.name == "cat")
    assert cat.parameters["type"] == "object" and docs["cat"]["parameters"]["type"] == "dict"
    assert [m.role for m in transcript.messages][:6] == ["user", "assistant", "tool", "tool", "tool", "user"]
    assert transcript.messages[2].content.startswith("[not executed:")
    assert transcript.metadata["results"] == "not_recorded"
    sort_call = next(c for m in transcript.messages for c in m.tool_calls if c.function.name == "sort")
    assert json.loads(sort_call.function.arguments) == {"file_name": "final_report.pdf"}  # positional argument


def test_an_empty_turn_is_clarify_in_the_missing_parameter_category(tmp_path: Path) -> None:
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "multi_turn_func_doc").symlink_to(DOCS)
    line = next(q for q in QUESTIONS.read_text().splitlines() if '"multi_turn_base_167"' in q)
    answer = next(a for a in ANSWERS.read_text().splitlines() if '"multi_turn_base_167"' in a)
    name = "BFCL_v4_multi_turn_miss_param.json"
    write_lines(tmp_path / name, [line.replace("multi_turn_base_167", "multi_turn_miss_param_167")])
    write_lines(tmp_path / "possible_answer" / name, [answer.replace("multi_turn_base_167", "multi_turn_miss_param_167")])
    result = convert(tmp_path / name)
    empty = [i for i, turn in enumerate(json.loads(answer)["ground_truth"]) if not turn]
    assert [c.expected.behavior for c in result.gold] == [
        "clarify" if i in empty else "call" for i in range(len(result.gold))]
    assert result.gold[empty[0]].tags == ("bfcl", "multi_turn_miss_param")


def test_call_strings_that_cannot_be_read_without_running_them_are_refused_at_their_line(tmp_path: Path) -> None:
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "multi_turn_func_doc").symlink_to(DOCS)
    questions = QUESTIONS.read_text().splitlines()[:4]
    answers = [json.loads(a) for a in ANSWERS.read_text().splitlines()[:4]]
    answers[0]["ground_truth"][0][0] = "cd(folder=os.getcwd())"
    answers[1]["ground_truth"][1][0] = "rm_rf(path='/')"
    answers[2]["ground_truth"][0][0] = "cd(folder='a'"
    answers[3]["ground_truth"] = answers[3]["ground_truth"][:-1]
    write_lines(tmp_path / QUESTIONS.name, questions)
    write_lines(tmp_path / "possible_answer" / QUESTIONS.name, [json.dumps(a) for a in answers])
    result = convert(tmp_path / QUESTIONS.name)
    at = f"(answer at {tmp_path}/possible_answer/{QUESTIONS.name}"
    assert result.transcripts == [] and result.gold == []
    n = len(json.loads(questions[3])["question"])
    assert result.error_lines == [
        f"{tmp_path}/{QUESTIONS.name}:1: ground_truth[0] {at}:1): 'cd(folder=os.getcwd())' has an argument "
        "that is not a literal (os.getcwd())",
        f"{tmp_path}/{QUESTIONS.name}:2: ground_truth[1] {at}:2): \"rm_rf(path='/')\" calls 'rm_rf', which is "
        "not among the question's functions",
        f"{tmp_path}/{QUESTIONS.name}:3: ground_truth[0] {at}:3): \"cd(folder='a'\" is not a Python call "
        "('(' was never closed)",
        f"{tmp_path}/{QUESTIONS.name}:4: {n} turns but {n - 1} answers {at}:4)",
    ]


def test_missing_function_docs_are_named(tmp_path: Path) -> None:
    (tmp_path / "possible_answer").mkdir()
    write_lines(tmp_path / QUESTIONS.name, QUESTIONS.read_text().splitlines()[:1])
    write_lines(tmp_path / "possible_answer" / QUESTIONS.name, ANSWERS.read_text().splitlines()[:1])
    result = convert(tmp_path / QUESTIONS.name)
    assert result.error_lines == [
        f"{tmp_path}/{QUESTIONS.name}:1: no function docs for TwitterAPI: expected "
        f"{tmp_path}/multi_turn_func_doc/posting_api.json (BFCL keeps them in multi_turn_func_doc/ "
        "beside the question file)"]


@needs_shared
@pytest.mark.skipif(not FULL.is_file(), reason=f"{FULL} is not there")
def test_the_whole_base_category_imports_with_the_counts_of_its_files() -> None:
    result = convert(FULL)
    assert result.errors == []
    assert (len(result.transcripts), result.decision_points, result.tool_calls) == (200, 734, 1142)
    assert sum(c.expected.behavior == "no_call" for c in result.gold) == 3
