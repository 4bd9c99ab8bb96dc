"""``python -m semif_agent`` is the ``semif`` command."""

from .cli import main

main(prog_name="semif")
