"""`toolgold run`: produce run records by replaying the gold set's turn cases through an agent."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from tqdm import tqdm

from scorer.errors import InvalidRecord
from scorer.formats import read_records
from scorer.model import GoldCase


def _load_gold(path: Path) -> list[GoldCase]:
    with path.open("rb") as fh:
        return [case for _, case in read_records(fh, str(path), expect=GoldCase)]


@click.command("run")
@click.argument("gold", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--agent", default="anthropic", show_default=True,
              help="anthropic, openai (any OpenAI-compatible chat-completions endpoint), or python:module:function "
                   "(called as fn(messages, tools)).")
@click.option("--model", default=None, help="Model for --agent anthropic [default: $TOOLGOLD_MODEL or built-in].")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Run records (JSONL). An existing file is resumed: finished cases are not asked again.")
@click.option("--trials", default=1, show_default=True, type=click.IntRange(1), help="Trials per case (pass^k).")
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 64))
@click.option("--run-id", default=None, help="Run id to record [default: resumed file's, or a timestamp].")
@click.option("--temperature", default=None, type=float)
@click.option("--base-url", default=None,
              help="For --agent openai: the API root [default: $OPENAI_BASE_URL or https://api.openai.com/v1]; "
                   "the key is $OPENAI_API_KEY.")
def run_cmd(gold: Path, agent: str, model: str | None, out: Path, trials: int, concurrency: int,
            run_id: str | None, temperature: float | None, base_url: str | None) -> None:
    """Replay each turn case of GOLD through an agent and write toolgold.run/1 records to --out."""
    # Imported here: the SDK takes a second to import and the other commands never need it.
    from labeler.llm.anthropic_gateway import AnthropicGateway, default_model
    from labeler.runners.agents import AgentError, AgentFn, AnthropicAgent, load_python_agent
    from labeler.runners.run import run_cases

    cases = _load_gold(gold)
    agent_fn: AgentFn
    if agent == "anthropic":
        model = model or default_model()
        agent_fn = AnthropicAgent(AnthropicGateway(), model, temperature=temperature)
    elif agent == "openai":
        from labeler.runners.openai_chat import OpenAIChatAgent

        if not model:
            raise AgentError("--agent openai needs --model (the name the endpoint serves)")
        agent_fn = OpenAIChatAgent(model, base_url=base_url, temperature=temperature)
    else:
        agent_fn = load_python_agent(agent)
    if not any(c.kind == "turn" for c in cases):
        what = "no gold cases (it is empty)" if not cases else "only trajectory cases; toolgold run replays turn cases"
        raise InvalidRecord(what, source=str(gold))
    todo = sum(trials for c in cases if c.kind == "turn")
    with tqdm(total=todo, desc="run", unit=" cases", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:

        def advance(n: int) -> None:
            bar.update(n)

        summary = run_cases(cases, agent_fn, out, trials=trials, concurrency=concurrency, model=model,
                            run_id=run_id, metadata={"agent": agent}, on_progress=advance)
    click.echo(summary.line)
    for case_id, trial, reason in summary.failures[:10]:
        click.echo(f"  {case_id} (trial {trial}): {reason}", err=True)
    if summary.failures:
        sys.exit(1)


COMMANDS = [run_cmd]
