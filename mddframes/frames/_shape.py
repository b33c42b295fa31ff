"""Moved (issue 20): :mod:`mddframes.frames.shaping`, :mod:`~mddframes.frames.record_frames`
and :mod:`~mddframes.frames.stacking`. Only ``snake_case`` is left here, for
``mddframes/writing/single.py`` until it imports it from :mod:`mddframes.frames.shaping`;
then this module goes.
"""

from mddframes.frames.shaping import snake_case

__all__ = ["snake_case"]
