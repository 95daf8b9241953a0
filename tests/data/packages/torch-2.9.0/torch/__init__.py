"""A stand-in for torch with just what the demo package touches (no PyPI here)."""
from . import compiler, version
