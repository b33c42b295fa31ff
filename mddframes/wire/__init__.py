"""The wire profile: what mddframes assumes of the service's wire format, as data.

``profile`` holds every spelling and shape of docs/wire-format.md (prefixes, realms,
paths, field names, envelopes, pages, tree shapes, ETags); ``spelling`` renames between
camelCase and snake_case; ``disposition`` reads the file name a ``Content-Disposition``
header gives; ``dialects`` lists the documented alternatives a tenant may speak; ``rows``
and ``page`` make docs/wire-format.md's tables from them. Every reader
of the wire (the client, doctor, the recording learner, the emulator's dialects) takes
its facts from here, so a tenant that differs is taught to all of them in one entry.
This package imports nothing else of mddframes.
"""
