"""``run_doctor``: every check, in order, read-only, as one report frame."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.doc_sections import documented
from mddframes.doctor.access import check_api_prefix, check_token_realm
from mddframes.doctor.findings import Finding, report_frame
from mddframes.doctor.openapi import check_endpoints, fetch_document
from mddframes.doctor.shapes import object_types_check, observe, read_checks
from mddframes.errors import MddError

if TYPE_CHECKING:
    from mddframes.api import Api

logger = logging.getLogger(__name__)

_AFTER_TOKEN = (("API prefix", "2"), ("OpenAPI document", "3"), ("endpoints", "2, 3"),
                ("object types", "14"), ("tree", "11"), ("element", "12"), ("raw data", "13"),
                ("table", "15"), ("mapping", "17"), ("packages", "18"),
                ("ETag", "29"))  # fmt: skip


@documented
def run_doctor(api: Api, system: str | None = None) -> pd.DataFrame:
    """Check a service against the assumptions of docs/wire-format.md, read-only.

    Gets a token (trying the configured realm, then ``tenat`` or the tenant), reads the
    object types under the configured API prefix (then without it), fetches the
    OpenAPI document and compares its operation ids, methods and paths with the
    endpoints table, then reads one of each kind (tree, element, raw data, table,
    mapping, packages of ``system``) and compares envelopes and field names with the
    assumptions, and whether the table and the mapping are read with an ``ETag`` a
    write can send back as ``If-Match``. It sends no write: only the token request and
    GETs.

    Parameters
    ----------
    {api}
    system : str, optional
        A system whose tree, elements, table, mapping and packages are read; without
        it those checks are ``unknown``.

    Returns
    -------
    pandas.DataFrame
        One row per check: ``check``, ``row`` (of docs/wire-format.md), ``result``
        (``ok``, ``differs``: mddframes copes, ``unknown``: not checked, ``breaks``:
        mddframes would fail), ``evidence`` (what the service answered) and
        ``action`` (what mddframes does about it). Never holds the secret or a token.
        :func:`~mddframes.doctor.doctor_exit_code` turns it into an exit code.

    Examples
    --------
    >>> report = client.doctor("DWH")  # only reads
    >>> report.columns.tolist()
    ['check', 'row', 'result', 'evidence', 'action']
    >>> mddframes.doctor_exit_code(report)  # 0: every assumption holds
    0
    """
    findings = [check_token_realm(api)]
    if findings[0].result != "breaks":
        findings.extend(_with_token(api, system))
    else:
        findings.extend(Finding(c, r, "unknown", "no token") for c, r in _AFTER_TOKEN)
    report = report_frame(findings, _secrets(api))
    logger.info("doctor: %s", dict(report["result"].value_counts()))
    return report


def _with_token(api: Api, system: str | None) -> list[Finding]:
    answer: Any = None
    error: MddError | None = None
    try:
        answer, seen = observe(api, "getObjectTypes", api.get_object_types)
    except MddError as exc:
        error = exc
    findings = [check_api_prefix(api, error)]
    document_finding, document = fetch_document(api)
    findings += [document_finding, check_endpoints(api, document)]
    if error is not None:
        findings.append(Finding("object types", "14", "breaks", str(error)))
    else:
        findings.append(object_types_check(api, answer, seen))
    findings.extend(read_checks(api, system))
    return findings


def _secrets(api: Api) -> list[str]:
    """The values the report must never show: the client secret and the current token."""
    values = [api.settings.client_secret.reveal()]
    try:
        values.append(api.http.tokens.token().reveal())  # the cached one: no new request
    except MddError:
        pass
    return values
