"""`python -m labeler.cli` runs the toolgold command line."""

from labeler.cli import main

main()
