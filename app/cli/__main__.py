"""`python -m app.cli`: the same as the `trecpool` command."""

from app.cli import main

main()
