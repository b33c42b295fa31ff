"""``mddframes doctor``: a read-only check of a service against docs/wire-format.md.

Run it first against a real tenant. It gets a token, finds the API prefix, compares the
OpenAPI document with the endpoints table and reads one of each kind, and reports per
check whether the assumption holds (``ok``), differs in a way mddframes copes with
(``differs``, saying how), could not be checked (``unknown``) or would break
(``breaks``). Modules: ``findings`` (the report and exit code), ``access`` (token
realm, API prefix), ``openapi`` (the document and the endpoints), ``shapes`` (the reads),
``etags`` (the ETags of tables and mappings), ``run`` (all of them in order).
"""

from __future__ import annotations

from mddframes.doctor.findings import COLUMNS, RESULTS, Finding, doctor_exit_code, doctor_text
from mddframes.doctor.run import run_doctor

__all__ = ["COLUMNS", "RESULTS", "Finding", "doctor_exit_code", "doctor_text", "run_doctor"]
