"""The CLI and the page loop: expand -> claim -> render -> OCR -> write -> commit."""

__version__ = "0.1.0"


def main() -> None:
    """The `pagerunner` command. The console script imports this module, and so does every worker
    process that multiprocessing spawns (it re-imports the main script): the CLI's own imports
    (Typer, rich, the exporters, the text layer) are made here, in the command's process only."""
    from runner.cli import main as cli_main

    cli_main()
