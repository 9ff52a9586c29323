"""The LLM judge: two narrow questions, asked only where deterministic comparison cannot decide.

- ``prompts``: the versioned prompts and the forced-tool verdict schema;
- ``questions``: what is asked (semantic argument, flagged mismatch), its inputs and its cache key;
- ``verdicts``: reading a verdict from the structured tool input only;
- ``anthropic_judge``: asking through ``AnthropicGateway`` (one question, or many with a bounded pool);
- ``step``: the judge step of ``toolgold score --judge`` and ``toolgold judge`` (cache, queue, review items);
- ``calibration``: judge-versus-reviewer agreement; ``pricing``: the cost estimate; ``config``: the model.
"""
