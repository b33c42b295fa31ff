"""The version of mddframes, in the one place setuptools reads it (statically) and every
layer may import it from (``mddframes.__version__`` re-exports it)."""

__version__ = "0.1.0"
