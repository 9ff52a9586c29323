"""Access to hosted models. Only anthropic_gateway.py imports an SDK."""
