"""The Streamlit labeling app. ``main.py`` is the entry (a router); page scripts live in ``pages_/``.

Pages are thin: they call the store and the helpers here, and render. Transcript text is untrusted and
is always shown inert (``render``): never as Markdown or HTML.
"""
