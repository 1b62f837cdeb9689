"""The CLI and the page loop: expand -> claim -> render -> OCR -> write -> commit."""

__version__ = "0.1.0"
