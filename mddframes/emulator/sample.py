"""The emulator's deterministic sample data: a data-vault warehouse and a lab system.

:func:`build_sample` returns a :class:`~mddframes.emulator.dataset.Dataset` with two
systems. Two builds are equal (no clock, no unseeded randomness).

``DWH``
    A data-vault 2.0 warehouse, 155 elements on 4 levels: root folders (Sources,
    Staging, Raw Vault, Business Vault, Marts, Reference), source-system and
    subject-area folders, SOURCE_TABLE, STAGE_TABLE, HUB, LINK, SATELLITE (under
    their hub or link), VIEW and REFERENCE_TABLE elements. Element ids are
    ``"dwh-0001"``... in tree order, table ids ``"tbl-0001"``..., mapping ids
    ``"map-0001"``.... Every element of a table type owns a table; every loaded
    element (stage, hub, link, satellite, most views) owns the mapping that loads it,
    so the mapping's ``targetId`` is its owner. The 24 source tables and the 4
    reference tables carry rows: the full ISO 3166-1 country list and ISO 4217
    currency list (``data/*.csv``), and rows with every hard case (see below).

``LAB``
    A small system whose ids are awkward on purpose: element, table and mapping
    ids containing ``/``, ``%``, ``?``, ``#``, ``+``, spaces, non-ASCII, or being
    ``.`` or ``..``, next to resources whose ids are the pieces (``tbl``, ``with``,
    ``slash``, ``100``, ``name``, ``Zürich``, ``a``...) and an id that looks
    already percent-encoded. Each awkward element owns a table and a mapping with
    the same id, whose content names that id, so a test can prove a request
    reached its own resource and no other.

Column ``dataType`` vocabulary and the JSON value each type carries in rows:

=========  ==================================================================
STRING     a string (codes keep leading zeros: ``"0000123"``, ``"004"``)
INTEGER    a JSON integer within 32 bits
BIGINT     a JSON integer, possibly above 2**53 or 2**63 (exact in JSON)
DECIMAL    a string holding a decimal number (``"12.50"``), to keep precision;
           columns also carry ``precision`` and ``scale``
DOUBLE     a JSON number, possibly inexact in binary (``0.1``)
BOOLEAN    ``true`` / ``false``
DATE       a string ``YYYY-MM-DD``
TIMESTAMP  a string, ISO-8601 date-time (``2024-03-04T08:00:00Z``)
JSON       any nested JSON value: an object or a list
=========  ==================================================================

Hard cases in rows (mostly in the tables of ``crm_customer`` and
``erp_sales_order``): keys absent from some rows, nulls, nested objects, lists
(empty, mixed), integers above 2**53 (9007199254740993) and 2**64, decimals as
strings, floats such as 0.1 and 0.30000000000000004, ISO dates and date-times
with and without fractions and offsets, booleans, non-ASCII and astral-plane
text, codes with leading zeros, strings that look like spreadsheet formulas
(``"=SUM(A1:A3)"``, ``"+1"``, ``"-2"``, ``"@x"``), empty strings, a row whose
keys come in another order, and undeclared columns (present in rows, absent
from the metadata: ``legacy_id``, ``_meta``).
"""

from __future__ import annotations

import copy
import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from mddframes.emulator import records
from mddframes.emulator.dataset import Dataset
from mddframes.emulator.objecttypes import build_object_types

JSON = dict[str, Any]

DWH = "DWH"
LAB = "LAB"

# ----------------------------------------------------------------------------------
# The warehouse model, as compact specifications.
#
# A column spec is "name[:TYPE][*][?]": TYPE defaults to STRING, "*" marks a
# primary-key column, "?" a nullable one (other columns are NOT NULL).
# ----------------------------------------------------------------------------------

_SYSTEMS: dict[str, JSON] = {
    "crm": {
        "name": "CRM",
        "vendor": "Salesforce",
        "owner": "crm-team@example.com",
        "port": 5432,
        "description": "Customer relationship management",
    },
    "erp": {
        "name": "ERP",
        "vendor": "SAP S/4HANA",
        "owner": "erp-team@example.com",
        "port": 30015,
        "description": "Enterprise resource planning: products, orders, invoices",
    },
    "shop": {
        "name": "SHOP",
        "vendor": "Shopware",
        "owner": "Søren Ødegård <shop-team@example.com>",
        "port": 3306,
        "description": "Web shop: accounts, sessions, carts, reviews",
    },
}

# (system, table, description, hub it defines, satellite parent, columns)
_SOURCE_TABLES: tuple[tuple[str, str, str, str | None, str, str], ...] = (
    ("crm", "customer", "Customers of all channels", "customer", "hub:customer", ""),
    (
        "crm",
        "contact",
        "Contact persons of customers",
        "contact",
        "hub:contact",
        "contact_id*, customer_no, first_name, last_name, email?, phone?, role, valid_from:DATE",
    ),
    (
        "crm",
        "address",
        "Postal addresses of customers",
        "address",
        "hub:address",
        "address_id*, customer_no, street, postal_code, city, country_code, valid_from:DATE",
    ),
    (
        "crm",
        "employee",
        "Account managers and sales staff",
        "employee",
        "hub:employee",
        "employee_no*, full_name, department, hired_on:DATE, manager_no?",
    ),
    (
        "crm",
        "campaign",
        "Marketing campaigns",
        "campaign",
        "hub:campaign",
        "campaign_code*, name, channel, budget:DECIMAL, start_date:DATE, end_date:DATE?",
    ),
    (
        "crm",
        "campaign_response",
        "Responses of customers to campaigns",
        None,
        "link:campaign_customer",
        "response_id:BIGINT*, campaign_code, customer_no, responded_at:TIMESTAMP, "
        "response_type, score:DOUBLE?",
    ),
    (
        "crm",
        "lead",
        "Sales leads",
        "lead",
        "hub:lead",
        "lead_id*, lead_source, company, status, estimated_value:DECIMAL?, created_at:TIMESTAMP",
    ),
    (
        "crm",
        "opportunity",
        "Sales opportunities",
        "opportunity",
        "hub:opportunity",
        "opportunity_id*, lead_id?, customer_no, stage, amount:DECIMAL, "
        "probability:DOUBLE, close_date:DATE?",
    ),
    (
        "erp",
        "product",
        "Product master data",
        "product",
        "hub:product",
        "product_no*, name, category_code, supplier_no, unit_price:DECIMAL, "
        "weight_kg:DOUBLE?, discontinued:BOOLEAN",
    ),
    (
        "erp",
        "product_category",
        "Product category hierarchy",
        "product_category",
        "hub:product_category",
        "category_code*, name, parent_code?, level:INTEGER",
    ),
    (
        "erp",
        "supplier",
        "Suppliers",
        "supplier",
        "hub:supplier",
        "supplier_no*, name, country_code, vat_id?, rating:INTEGER?",
    ),
    (
        "erp",
        "purchase_order",
        "Purchase orders to suppliers",
        "purchase_order",
        "hub:purchase_order",
        "po_no*, supplier_no, ordered_on:DATE, total:DECIMAL, currency_code, approved:BOOLEAN",
    ),
    ("erp", "sales_order", "Sales order headers", "sales_order", "hub:sales_order", ""),
    (
        "erp",
        "sales_order_line",
        "Sales order lines",
        None,
        "link:sales_order_product",
        "order_no*, line_no:INTEGER*, product_no, quantity:INTEGER, unit_price:DECIMAL, "
        "discount:DOUBLE?",
    ),
    (
        "erp",
        "invoice",
        "Customer invoices",
        "invoice",
        "hub:invoice",
        "invoice_no*, order_no, invoice_date:DATE, due_date:DATE, amount:DECIMAL, "
        "currency_code, paid:BOOLEAN",
    ),
    (
        "erp",
        "payment",
        "Incoming payments",
        "payment",
        "hub:payment",
        "payment_id:BIGINT*, invoice_no, paid_at:TIMESTAMP, amount:DECIMAL, method_code, "
        "reference?",
    ),
    (
        "shop",
        "web_customer",
        "Web shop accounts",
        None,
        "hub:customer",
        "account_id*, customer_no?, email, display_name, newsletter:BOOLEAN, "
        "registered_at:TIMESTAMP",
    ),
    (
        "shop",
        "web_order",
        "Orders placed in the web shop",
        None,
        "hub:sales_order",
        "web_order_id*, account_id, order_no?, placed_at:TIMESTAMP, total:DECIMAL, "
        "currency_code, items_count:INTEGER",
    ),
    (
        "shop",
        "web_order_item",
        "Items of web shop orders",
        None,
        "hub:product",
        "web_order_id*, position:INTEGER*, product_no, quantity:INTEGER, price:DECIMAL",
    ),
    (
        "shop",
        "web_session",
        "Browsing sessions",
        "web_session",
        "hub:web_session",
        "session_id*, account_id?, customer_no?, started_at:TIMESTAMP, device, user_agent, "
        "page_views:INTEGER",
    ),
    (
        "shop",
        "cart_event",
        "Shopping cart events",
        None,
        "hub:web_session",
        "event_id:BIGINT*, session_id, product_no, event_type, occurred_at:TIMESTAMP, "
        "payload:JSON?",
    ),
    (
        "shop",
        "review",
        "Product reviews",
        "review",
        "hub:review",
        "review_id*, product_no, account_id, rating:INTEGER, title, body?, created_at:TIMESTAMP",
    ),
    (
        "shop",
        "voucher",
        "Discount vouchers",
        "voucher",
        "hub:voucher",
        "voucher_code*, discount_pct:DOUBLE, valid_until:DATE?, single_use:BOOLEAN",
    ),
    (
        "shop",
        "shipment",
        "Parcel shipments",
        "shipment",
        "hub:shipment",
        "shipment_id*, order_no, carrier, tracking_no?, shipped_at:TIMESTAMP?, "
        "delivered_at:TIMESTAMP?",
    ),
)

# hub entity -> (subject area, business-key column)
_HUBS: dict[str, tuple[str, str]] = {
    "customer": ("Customer", "customer_no"),
    "contact": ("Customer", "contact_id"),
    "address": ("Customer", "address_id"),
    "employee": ("Customer", "employee_no"),
    "campaign": ("Marketing", "campaign_code"),
    "lead": ("Marketing", "lead_id"),
    "opportunity": ("Marketing", "opportunity_id"),
    "product": ("Product", "product_no"),
    "product_category": ("Product", "category_code"),
    "supplier": ("Product", "supplier_no"),
    "review": ("Product", "review_id"),
    "sales_order": ("Sales", "order_no"),
    "purchase_order": ("Sales", "po_no"),
    "voucher": ("Sales", "voucher_code"),
    "web_session": ("Sales", "session_id"),
    "invoice": ("Finance", "invoice_no"),
    "payment": ("Finance", "payment_id"),
    "shipment": ("Logistics", "shipment_id"),
}

_SUBJECT_AREAS = ("Customer", "Marketing", "Product", "Sales", "Finance", "Logistics")

# link -> (hub a, hub b, source table "system.table" that feeds it)
_LINKS: dict[str, tuple[str, str, str]] = {
    "customer_contact": ("customer", "contact", "crm.contact"),
    "customer_address": ("customer", "address", "crm.address"),
    "campaign_customer": ("campaign", "customer", "crm.campaign_response"),
    "opportunity_customer": ("opportunity", "customer", "crm.opportunity"),
    "product_category": ("product", "product_category", "erp.product"),
    "product_supplier": ("product", "supplier", "erp.product"),
    "purchase_order_supplier": ("purchase_order", "supplier", "erp.purchase_order"),
    "sales_order_customer": ("sales_order", "customer", "erp.sales_order"),
    "sales_order_product": ("sales_order", "product", "erp.sales_order_line"),
    "invoice_sales_order": ("invoice", "sales_order", "erp.invoice"),
    "payment_invoice": ("payment", "invoice", "erp.payment"),
    "web_session_customer": ("web_session", "customer", "shop.web_session"),
    "review_product": ("review", "product", "shop.review"),
    "shipment_sales_order": ("shipment", "sales_order", "shop.shipment"),
}

# computed satellite -> (hub, source satellite, description, computed columns)
_BUSINESS_SATELLITES: dict[str, tuple[str, str, str, tuple[tuple[str, str, str], ...]]] = {
    "bsat_customer_lifetime_value": (
        "customer",
        "sat_crm_customer",
        "Customer lifetime value, recomputed nightly",
        (("lifetime_value", "DECIMAL", "ROUND(src.lifetime_value, 2)"),),
    ),
    "bsat_product_margin": (
        "product",
        "sat_erp_product",
        "Gross margin per product",
        (("margin_pct", "DOUBLE", "(src.unit_price - 0.7 * src.unit_price) / src.unit_price"),),
    ),
    "bsat_invoice_overdue": (
        "invoice",
        "sat_erp_invoice",
        "Overdue flag and days overdue of open invoices",
        (
            ("is_overdue", "BOOLEAN", "NOT src.paid AND src.due_date < CURRENT_DATE"),
            ("days_overdue", "INTEGER", "GREATEST(CURRENT_DATE - src.due_date, 0)"),
        ),
    ),
    "bsat_sales_order_totals": (
        "sales_order",
        "sat_erp_sales_order_line",
        "Order totals summed over the order lines",
        (("order_total", "DECIMAL", "SUM(src.quantity * src.unit_price)"),),
    ),
}

# point-in-time tables and bridges (views) -> (source element, description)
_PIT_BRIDGES: dict[str, tuple[str, str]] = {
    "pit_customer": ("hub_customer", "Point-in-time table over the customer satellites"),
    "pit_product": ("hub_product", "Point-in-time table over the product satellites"),
    "brg_sales_order_product": ("lnk_sales_order_product", "Bridge from orders to products"),
    "brg_customer_contact": ("lnk_customer_contact", "Bridge from customers to contacts"),
}

# mart -> ((view, source element or None, description), ...)
_MARTS: dict[str, tuple[tuple[str, str | None, str], ...]] = {
    "Sales Mart": (
        ("dim_customer", "sat_crm_customer", "Customer dimension"),
        ("dim_product", "sat_erp_product", "Product dimension"),
        ("dim_voucher", "sat_shop_voucher", "Voucher dimension"),
        ("dim_date", None, "Calendar dimension, generated"),
        ("fact_sales_order", "sat_erp_sales_order", "One row per sales order"),
        ("fact_sales_order_line", "sat_erp_sales_order_line", "One row per order line"),
    ),
    "Finance Mart": (
        ("dim_currency", "ref_currency", "Currency dimension (ISO 4217)"),
        ("dim_payment_method", "ref_payment_method", "Payment method dimension"),
        ("fact_invoice", "sat_erp_invoice", "One row per invoice"),
        ("fact_payment", "sat_erp_payment", "One row per payment"),
    ),
    "Marketing Mart": (
        ("dim_campaign", "sat_crm_campaign", "Campaign dimension"),
        ("fact_campaign_response", "sat_crm_campaign_response", "Campaign responses"),
        ("fact_web_session", "sat_shop_web_session", "Web sessions"),
        ("dim_country", "ref_country", "Country dimension (ISO 3166-1)"),
    ),
}

_TECHNICAL_COLUMNS = ("hash_diff", "load_dts", "record_source")
_TYPE_DETAILS = ("length", "precision", "scale")

# ----------------------------------------------------------------------------------
# Rows with every hard case.
# ----------------------------------------------------------------------------------

_CUSTOMER_COLUMNS: list[JSON] = [
    records.column(
        "customer_no",
        "STRING",
        nullable=False,
        primary_key=True,
        length=10,
        description="Customer number; keeps its leading zeros",
    ),
    records.column("first_name", "STRING", nullable=False, length=100),
    records.column("last_name", "STRING", nullable=False, length=100),
    records.column("email", "STRING", length=254),
    records.column("birth_date", "DATE"),
    records.column("created_at", "TIMESTAMP", nullable=False),
    records.column("is_active", "BOOLEAN"),
    records.column("credit_limit", "DECIMAL", precision=12, scale=2),
    records.column("lifetime_value", "DOUBLE"),
    records.column("loyalty_points", "INTEGER"),
    records.column(
        "external_ref", "BIGINT", description="Id in the legacy billing system (64-bit and more)"
    ),
    records.column("address", "JSON", description="Main address as a nested object"),
    records.column("tags", "JSON", description="Free tags (a list)"),
    records.column("notes", "STRING", description="Free text typed by sales staff"),
    records.column("country_code", "STRING", length=2, description="ISO 3166-1 alpha-2"),
]

_CUSTOMER_ROWS: list[JSON] = [
    {
        "customer_no": "0000123",
        "first_name": "Jürgen",
        "last_name": "Müller",
        "email": "juergen.mueller@example.de",
        "birth_date": "1975-02-28",
        "created_at": "2019-04-01T09:30:00Z",
        "is_active": True,
        "credit_limit": "12.50",
        "lifetime_value": 0.1,
        "loyalty_points": 120,
        "external_ref": 9007199254740993,
        "address": {
            "street": "Königsbrücker Straße 1",
            "postalCode": "01097",
            "city": "Dresden",
            "country": "DE",
            "geo": {"lat": 51.0638, "lon": 13.7469},
        },
        "tags": ["vip", "newsletter"],
        "notes": "=SUM(A1:A3)",
        "country_code": "DE",
        "legacy_id": "L-0001",
    },
    {
        "customer_no": "0000124",
        "first_name": "Zoë",
        "last_name": "Ørsted",
        "email": None,
        "birth_date": None,
        "created_at": "2020-11-15T14:05:09Z",
        "is_active": False,
        "credit_limit": "1000.00",
        "lifetime_value": 1234.5,
        "loyalty_points": 0,
        "external_ref": 9223372036854775807,
        "address": None,
        "tags": [],
        "notes": "+1",
        "country_code": "DK",
        "_meta": {"importedFrom": "crm-2019.csv", "line": 17},
    },
    {
        "customer_no": "0042",
        "first_name": "太郎",
        "last_name": "山田",
        "birth_date": "1988-07-07",
        "created_at": "2021-01-01T00:00:00Z",
        "is_active": True,
        "credit_limit": "0.00",
        "lifetime_value": 0.30000000000000004,
        "loyalty_points": 2147483647,
        "external_ref": -9007199254740993,
        "address": {
            "street": "千代田1-1",
            "postalCode": "100-0001",
            "city": "東京",
            "country": "JP",
        },
        "notes": "-2",
        "country_code": "JP",
    },
    {
        "customer_no": "0000126",
        "first_name": "Thị Minh",
        "last_name": "Nguyễn",
        "email": "minh.nguyen@example.vn",
        "birth_date": "1990-12-31",
        "created_at": "2022-06-30T23:59:59.123Z",
        "is_active": True,
        "credit_limit": "99999999.99",
        "lifetime_value": 1e-07,
        "loyalty_points": 5,
        "external_ref": 18446744073709551616,
        "address": {"street": "", "postalCode": "00501", "city": "Holtsville", "country": "US"},
        "tags": ["a", 1, None, {"k": "v"}, ["nested"]],
        "notes": "@x",
        "country_code": "VN",
    },
    {
        "customer_no": "0000127",
        "first_name": "",
        "last_name": "O'Brien",
        "email": "",
        "birth_date": None,
        "created_at": "2023-03-01T08:00:00+01:00",
        "is_active": None,
        "credit_limit": None,
        "lifetime_value": None,
        "loyalty_points": None,
        "external_ref": None,
        "address": {},
        "tags": None,
        "notes": "",
        "country_code": "IE",
    },
    {
        # Keys in another order than in the other rows, on purpose.
        "notes": 'line one\nline two\t"quoted" ; semi, comma',
        "country_code": "CZ",
        "customer_no": "0000128",
        "last_name": "Dvořák",
        "first_name": "Renée",
        "created_at": "2024-02-29T12:00:00Z",
        "birth_date": "2000-02-29",
        "is_active": False,
        "credit_limit": "-12.30",
        "lifetime_value": -2.5,
        "loyalty_points": -1,
        "external_ref": 9007199254740992,
        "tags": ["ä", "ß", "€"],
        "legacy_id": None,
    },
    {
        "customer_no": "0000129",
        "first_name": "Ωmega",
        "last_name": "Σίσυφος",
        "created_at": "2024-01-01T00:00:00Z",
        "is_active": True,
    },
    {
        "customer_no": "0001000",
        "first_name": "Émile",
        "last_name": "Zola 🙂",
        "email": "emile@example.fr",
        "birth_date": "1840-04-02",
        "created_at": "2024-05-05T05:05:05Z",
        "is_active": True,
        "credit_limit": "0.10",
        "lifetime_value": 3.0,
        "loyalty_points": 7,
        "external_ref": 12345678901234567890,
        "address": {"street": "21 bis, rue de Bruxelles", "postalCode": "75009", "city": "Paris"},
        "tags": ["=cmd|' /C calc'!A0"],
        "notes": '=HYPERLINK("http://example.com","x")',
        "country_code": "FR",
        "legacy_id": "000777",
    },
]

_SALES_ORDER_COLUMNS: list[JSON] = [
    records.column("order_no", "STRING", nullable=False, primary_key=True, length=10),
    records.column("order_id", "BIGINT", nullable=False, description="Technical id (above 2**53)"),
    records.column("customer_no", "STRING", nullable=False, length=10),
    records.column("order_date", "DATE", nullable=False),
    records.column("amount", "DECIMAL", nullable=False, precision=20, scale=2),
    records.column("currency_code", "STRING", nullable=False, length=3),
    records.column("discount", "DOUBLE"),
    records.column("status", "STRING", nullable=False),
    records.column("lines", "JSON", description="Order lines as a list of objects"),
    records.column("shipped_at", "TIMESTAMP"),
    records.column("is_priority", "BOOLEAN", nullable=False),
]

_SALES_ORDER_ROWS: list[JSON] = [
    {
        "order_no": "0004711",
        "order_id": 9007199254740993,
        "customer_no": "0000123",
        "order_date": "2024-03-01",
        "amount": "12.50",
        "currency_code": "EUR",
        "discount": 0.1,
        "status": "SHIPPED",
        "lines": [
            {"line": 1, "productNo": "000815", "qty": 2, "price": "5.00"},
            {"line": 2, "productNo": "004711", "qty": 1, "price": "2.50"},
        ],
        "shipped_at": "2024-03-02T10:15:00Z",
        "is_priority": False,
    },
    {
        "order_no": "0004712",
        "order_id": 9007199254740994,
        "customer_no": "0042",
        "order_date": "2024-03-02",
        "amount": "12345678901234567.89",
        "currency_code": "JPY",
        "discount": None,
        "status": "OPEN",
        "lines": [],
        "shipped_at": None,
        "is_priority": True,
    },
    {
        "order_no": "0000001",
        "order_id": 9007199254740995,
        "customer_no": "0000124",
        "order_date": "2024-03-03",
        "amount": "0.10",
        "currency_code": "DKK",
        "discount": 0.15,
        "status": "CANCELLED",
        "lines": [{"line": 1, "productNo": "000001", "qty": 1, "price": "0.10", "note": None}],
        "is_priority": False,
    },
    {
        "order_no": "0100000",
        "order_id": 4611686018427387904,
        "customer_no": "0001000",
        "order_date": "2024-02-29",
        "amount": "-5.00",
        "currency_code": "CHF",
        "discount": 0.0,
        "status": "RETURNED",
        "lines": [{"line": 1, "productNo": "000815", "qty": -1, "price": "5.00"}],
        "shipped_at": "2024-03-01T00:00:00.000001Z",
        "is_priority": False,
        "channel": "phone",
    },
    {
        "order_no": "0004713",
        "order_id": 9007199254740996,
        "customer_no": "0000128",
        "order_date": "2024-03-04",
        "amount": "199.99",
        "currency_code": "CZK",
        "status": "OPEN",
        "lines": [{"line": 1, "productNo": "000042", "qty": 3, "price": "66.663333"}],
        "shipped_at": None,
        "is_priority": True,
    },
]

_PAYMENT_METHODS: list[tuple[str, str, str, str, bool]] = [
    ("01", "Credit card", "Kreditkarte", "1.90", True),
    ("02", "Direct debit", "Lastschrift", "0.35", True),
    ("03", "Invoice", "Rechnung", "0.00", True),
    ("04", "PayPal", "PayPal", "2.49", True),
    ("05", "Cash on delivery", "Nachnahme", "3.00", False),
    ("10", "Gift voucher", "Gutschein", "0.00", True),
]

_ORDER_STATUSES: list[tuple[int, str, str, bool]] = [
    (10, "OPEN", "Offen", False),
    (20, "CONFIRMED", "Bestätigt", False),
    (30, "SHIPPED", "Versandt", False),
    (40, "DELIVERED", "Zugestellt", True),
    (90, "CANCELLED", "Storniert", True),
    (99, "RETURNED", "Zurückgegeben", True),
]

# LAB: awkward ids, then the pieces a wrongly quoted path would reach instead.
LAB_AWKWARD_IDS: tuple[str, ...] = (
    "tbl/with/slash",
    "tbl%2Fwith%2Fslash",
    "..",
    ".",
    "100%",
    "name with space",
    "Zürich-Ω",
    "a?b#c",
    "a+b",
    "a b",
)
LAB_PIECE_IDS: tuple[str, ...] = ("tbl", "with", "slash", "100", "name", "Zürich", "a")


# ----------------------------------------------------------------------------------
# Reference data files
# ----------------------------------------------------------------------------------


def _read_csv(file_name: str) -> list[dict[str, str]]:
    text = resources.files("mddframes.emulator").joinpath("data", file_name).read_text("utf-8")
    return list(csv.DictReader(text.splitlines()))


def iso_countries() -> list[JSON]:
    """The ISO 3166-1 country list: ``{"alpha2", "alpha3", "numeric", "name"}`` rows.

    ``numeric`` is a three-digit string that keeps its leading zeros (``"004"``).
    """
    return [
        {"alpha2": r["alpha2"], "alpha3": r["alpha3"], "numeric": r["numeric"], "name": r["name"]}
        for r in _read_csv("iso3166_countries.csv")
    ]


def iso_currencies() -> list[JSON]:
    """The ISO 4217 currency list: ``{"code", "numeric", "minor_units", "name"}`` rows.

    ``numeric`` keeps its leading zeros (``"008"``); ``minor_units`` is an int, or
    None for the funds and metals that have none (``XAU``...).
    """
    return [
        {
            "code": r["code"],
            "numeric": r["numeric"],
            "minor_units": int(r["minor_units"]) if r["minor_units"] else None,
            "name": r["name"],
        }
        for r in _read_csv("iso4217_currencies.csv")
    ]


# ----------------------------------------------------------------------------------
# Building
# ----------------------------------------------------------------------------------


def parse_columns(spec: str) -> list[JSON]:
    """Columns from a compact spec ``"name[:TYPE][*][?], ..."`` (see module comments)."""
    columns = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        primary_key = "*" in item
        nullable = "?" in item and not primary_key
        name, _, data_type = item.replace("*", "").replace("?", "").partition(":")
        data_type = data_type or "STRING"
        extra: JSON = {}
        if data_type == "DECIMAL":
            extra = {"precision": 14, "scale": 2}
        columns.append(
            records.column(name, data_type, nullable=nullable, primary_key=primary_key, **extra)
        )
    return columns


_COUNTRY_CYCLE = ("DE", "AT", "CH", "FR", "NL")
_CURRENCY_CYCLE = ("EUR", "EUR", "CHF", "EUR", "USD")


def generic_value(column: JSON, row: int) -> Any:
    """A plausible, deterministic value of ``column`` for row number ``row`` (0-based)."""
    name, data_type = column["name"], column["dataType"]
    if data_type == "STRING":
        if name.endswith(("_no", "_id", "_code")) and "currency" not in name:
            if "country" in name:
                return _COUNTRY_CYCLE[row % len(_COUNTRY_CYCLE)]
            return f"{row + 1:06d}"
        if "currency" in name:
            return _CURRENCY_CYCLE[row % len(_CURRENCY_CYCLE)]
        if "email" in name:
            return f"user{row + 1}@example.com"
        return f"{records.humanize(name)} {row + 1}"
    if data_type == "INTEGER":
        return (row + 1) * 3
    if data_type == "BIGINT":
        return 10**12 + row
    if data_type == "DECIMAL":
        return f"{(row + 1) * 17}.{(row * 37) % 100:02d}"
    if data_type == "DOUBLE":
        return (row + 1) * 0.25
    if data_type == "BOOLEAN":
        return row % 2 == 0
    if data_type == "DATE":
        return f"2024-{row % 9 + 1:02d}-{row * 7 % 28 + 1:02d}"
    if data_type == "TIMESTAMP":
        return records.timestamp(row * 11 + 3)
    if data_type == "JSON":
        return {"seq": row, "labels": ["x", "y"][: row % 3]}
    return None


def generic_rows(columns: list[JSON], count: int) -> list[JSON]:
    """``count`` rows; the third row holds nulls in every nullable column."""
    return [
        {
            c["name"]: (None if (row == 2 and c["nullable"]) else generic_value(c, row))
            for c in columns
        }
        for row in range(count)
    ]


@dataclass
class _SystemBuilder:
    """Accumulates the records of one system; ids come from counters or are given."""

    system: str
    prefix: str
    elements: list[JSON] = field(default_factory=list)
    tables: list[JSON] = field(default_factory=list)
    mappings: list[JSON] = field(default_factory=list)
    by_name: dict[str, JSON] = field(default_factory=dict)
    table_of: dict[str, JSON] = field(default_factory=dict)  # element id -> table
    _table_ids: dict[str, str] = field(default_factory=dict)  # element id -> table id
    _mapping_ids: dict[str, str] = field(default_factory=dict)  # element id -> mapping id

    def add(
        self,
        name: str,
        type: str,
        parent: JSON | None,
        attributes: JSON,
        *,
        id: str | None = None,
    ) -> JSON:
        number = len(self.elements) + 1
        record = records.element(
            id=id or f"{self.prefix}-{number:04d}",
            name=name,
            type=type,
            parent_id=parent["id"] if parent else None,
            system=self.system,
            version=1 + (number * 7) % 5,
            modified_at=records.timestamp(number),
            deployment_id=None,
            attributes=attributes,
        )
        self.elements.append(record)
        self.by_name.setdefault(name, record)
        return record

    def add_table(
        self,
        owner: JSON,
        *,
        description: str,
        columns: list[JSON],
        data: list[JSON],
        id: str | None = None,
        **metadata: Any,
    ) -> JSON:
        table_id = id or f"tbl-{len(self.tables) + 1:04d}"
        record = records.table(
            id=table_id,
            name=owner["name"],
            structure_id=owner["id"],
            description=description,
            columns=columns,
            data=data,
            **metadata,
        )
        self.tables.append(record)
        self.table_of[owner["id"]] = record
        self._table_ids[owner["id"]] = table_id
        return record

    def add_mapping(
        self,
        source: JSON,
        target: JSON,
        *,
        description: str,
        column_mappings: list[JSON],
        id: str | None = None,
    ) -> JSON:
        mapping_id = id or f"map-{len(self.mappings) + 1:04d}"
        record = records.mapping(
            id=mapping_id,
            name=f"{source['name']} -> {target['name']}",
            source_id=source["id"],
            target_id=target["id"],
            description=description,
            column_mappings=column_mappings,
        )
        self.mappings.append(record)
        self._mapping_ids[target["id"]] = mapping_id
        return record

    def columns_of(self, element_name: str) -> list[JSON]:
        table = self.table_of.get(self.by_name[element_name]["id"])
        return table["metadata"]["columns"] if table else []

    def finish(self, deployments: dict[str, str]) -> list[JSON]:
        """The elements with deployment state and owned ids, in contract key order."""
        finished = []
        for e in self.elements:
            finished.append(
                records.element(
                    id=e["id"],
                    name=e["name"],
                    type=e["type"],
                    parent_id=e["parentId"],
                    system=e["systemName"],
                    version=e["version"],
                    modified_at=e["modifiedAt"],
                    deployment_id=deployments.get(e["id"]),
                    attributes=e["attributes"],
                    table_id=self._table_ids.get(e["id"]),
                    mapping_id=self._mapping_ids.get(e["id"]),
                )
            )
        return finished


def _md5(expression: str) -> str:
    return f"MD5(UPPER(TRIM(CAST({expression} AS VARCHAR))))"


class _Warehouse:
    """Builds the DWH system: tree first (parents before children), then mappings."""

    def __init__(self) -> None:
        self.b = _SystemBuilder(DWH, "dwh")
        self.source_columns: dict[str, list[JSON]] = {}  # "crm.customer" -> columns
        self.hubs_fed: dict[str, list[str]] = {}  # "crm.customer" -> hub entities
        self.links_fed: dict[str, list[str]] = {}  # "crm.contact" -> link names

    # -- tree ---------------------------------------------------------------------

    def build(self) -> None:
        for system, table, _desc, hub, parent, _cols in _SOURCE_TABLES:
            key = f"{system}.{table}"
            self.hubs_fed[key] = [hub] if hub else []
            kind, _, name = parent.partition(":")
            if kind == "hub" and name not in self.hubs_fed[key]:
                self.hubs_fed[key].append(name)
            self.links_fed[key] = [link for link, spec in _LINKS.items() if spec[2] == key]
            for link in self.links_fed[key]:
                for entity in _LINKS[link][:2]:
                    if entity not in self.hubs_fed[key]:
                        self.hubs_fed[key].append(entity)
        self._sources()
        self._staging()
        self._raw_vault()
        self._business_vault()
        self._marts()
        self._reference()
        self._mappings()

    def _sources(self) -> None:
        b = self.b
        root = b.add("Sources", "FOLDER", None, {"description": "Operational source systems"})
        folders = {}
        for key, info in _SYSTEMS.items():
            folders[key] = b.add(
                info["name"],
                "FOLDER",
                root,
                {"description": info["description"], "owner": info["owner"]},
            )
        for system, table, description, _hub, _parent, spec in _SOURCE_TABLES:
            info = _SYSTEMS[system]
            if (system, table) == ("crm", "customer"):
                columns, rows = _CUSTOMER_COLUMNS, _CUSTOMER_ROWS
            elif (system, table) == ("erp", "sales_order"):
                columns, rows = _SALES_ORDER_COLUMNS, _SALES_ORDER_ROWS
            else:
                columns = parse_columns(spec)
                rows = generic_rows(columns, 3 + len(columns) % 3)
            has_timestamp = any(c["dataType"] == "TIMESTAMP" for c in columns)
            element = b.add(
                f"{system}_{table}",
                "SOURCE_TABLE",
                folders[system],
                {
                    "schema": f"src_{system}",
                    "description": description,
                    "owner": info["owner"],
                    "loadType": "DELTA" if has_timestamp else "FULL",
                    "sourceSystem": {
                        "name": info["name"],
                        "vendor": info["vendor"],
                        "connection": {
                            "type": "jdbc",
                            "host": f"{system}.db.example.internal",
                            "port": info["port"],
                        },
                    },
                    "tags": ["source", system],
                },
            )
            self.source_columns[f"{system}.{table}"] = columns
            b.add_table(
                element,
                description=description,
                columns=copy.deepcopy(columns),
                data=copy.deepcopy(rows),
                schema=f"src_{system}",
            )

    def _staging(self) -> None:
        b = self.b
        root = b.add("Staging", "FOLDER", None, {"description": "Staged, hashed copies"})
        folders = {
            key: b.add(f"stg_{key}", "FOLDER", root, {"description": f"Staging of {info['name']}"})
            for key, info in _SYSTEMS.items()
        }
        for system, table, _description, _hub, _parent, _spec in _SOURCE_TABLES:
            key = f"{system}.{table}"
            element = b.add(
                f"stg_{system}_{table}",
                "STAGE_TABLE",
                folders[system],
                {
                    "schema": "stage",
                    "description": f"Staged copy of {_SYSTEMS[system]['name']}.{table}",
                    "owner": "dwh-team@example.com",
                    "loadType": "TRUNCATE_INSERT",
                    "recordSource": f"{_SYSTEMS[system]['name']}.{table}",
                    "hashAlgorithm": "MD5",
                },
            )
            columns = [
                records.column(
                    c["name"],
                    c["dataType"],
                    description=c["description"],
                    **{k: v for k, v in c.items() if k in _TYPE_DETAILS},
                )
                for c in self.source_columns[key]
            ]
            columns += [
                records.column(
                    f"hk_{hub}",
                    "STRING",
                    nullable=False,
                    length=32,
                    description=f"Hash key of hub_{hub}",
                )
                for hub in self.hubs_fed[key]
            ]
            columns += [
                records.column(
                    f"hk_lnk_{link}",
                    "STRING",
                    nullable=False,
                    length=32,
                    description=f"Hash key of lnk_{link}",
                )
                for link in self.links_fed[key]
            ]
            columns += _technical_columns(with_hash_diff=True)
            b.add_table(
                element, description=f"Stage of {key}", columns=columns, data=[], schema="stage"
            )

    def _raw_vault(self) -> None:
        b = self.b
        root = b.add("Raw Vault", "FOLDER", None, {"description": "Hubs, links, satellites"})
        areas = {
            area: b.add(area, "FOLDER", root, {"description": f"Subject area {area}"})
            for area in _SUBJECT_AREAS
        }
        satellites_of: dict[str, list[str]] = {}  # "hub:x" / "link:y" -> source keys
        for system, table, _desc, _hub, parent, _spec in _SOURCE_TABLES:
            satellites_of.setdefault(parent, []).append(f"{system}.{table}")
        for area in _SUBJECT_AREAS:
            for entity, (hub_area, business_key) in _HUBS.items():
                if hub_area != area:
                    continue
                hub = b.add(
                    f"hub_{entity}",
                    "HUB",
                    areas[area],
                    {
                        "schema": "raw_vault",
                        "description": f"Hub of the business entity {entity.replace('_', ' ')}",
                        "owner": "dwh-team@example.com",
                        "businessKey": [business_key],
                        "hashKey": f"hk_{entity}",
                    },
                )
                key_column = self._key_column(business_key)
                b.add_table(
                    hub,
                    description=f"Hub {entity}",
                    columns=[
                        records.column(
                            f"hk_{entity}",
                            "STRING",
                            nullable=False,
                            primary_key=True,
                            length=32,
                            description="Hash key",
                        ),
                        key_column,
                        *_technical_columns(with_hash_diff=False),
                    ],
                    data=[],
                    schema="raw_vault",
                )
                for source_key in satellites_of.get(f"hub:{entity}", []):
                    self._satellite(hub, f"hk_{entity}", source_key)
            for link, (hub_a, hub_b, _feeder) in _LINKS.items():
                if _HUBS[hub_a][0] != area:
                    continue
                element = b.add(
                    f"lnk_{link}",
                    "LINK",
                    areas[area],
                    {
                        "schema": "raw_vault",
                        "description": f"Relationship between {hub_a} and {hub_b}",
                        "owner": "dwh-team@example.com",
                        "hubs": [f"hub_{hub_a}", f"hub_{hub_b}"],
                        "hashKey": f"hk_lnk_{link}",
                    },
                )
                b.add_table(
                    element,
                    description=f"Link {link}",
                    columns=[
                        records.column(
                            f"hk_lnk_{link}",
                            "STRING",
                            nullable=False,
                            primary_key=True,
                            length=32,
                            description="Hash key",
                        ),
                        records.column(f"hk_{hub_a}", "STRING", nullable=False, length=32),
                        records.column(f"hk_{hub_b}", "STRING", nullable=False, length=32),
                        *_technical_columns(with_hash_diff=False),
                    ],
                    data=[],
                    schema="raw_vault",
                )
                for sat_source in satellites_of.get(f"link:{link}", []):
                    self._satellite(element, f"hk_lnk_{link}", sat_source)

    def _key_column(self, business_key: str) -> JSON:
        for columns in self.source_columns.values():
            for c in columns:
                if c["name"] == business_key and c["primaryKey"]:
                    return records.column(
                        business_key,
                        c["dataType"],
                        nullable=False,
                        description=f"Business key ({c['description']})",
                    )
        raise AssertionError(f"no source defines the business key {business_key}")

    def _satellite(self, parent: JSON, hash_key: str, source_key: str) -> None:
        system, table = source_key.split(".")
        element = self.b.add(
            f"sat_{system}_{table}",
            "SATELLITE",
            parent,
            {
                "schema": "raw_vault",
                "description": f"Descriptive attributes of {parent['name']} from "
                f"{_SYSTEMS[system]['name']}.{table}",
                "owner": "dwh-team@example.com",
                "parent": parent["name"],
                "hashDiff": "hash_diff",
                "historization": {"type": "SCD2", "validFrom": "load_dts", "validTo": None},
            },
        )
        descriptive = [
            records.column(
                c["name"],
                c["dataType"],
                description=c["description"],
                **{k: v for k, v in c.items() if k in _TYPE_DETAILS},
            )
            for c in self.source_columns[source_key]
            if not c["primaryKey"]
        ]
        self.b.add_table(
            element,
            description=f"Satellite of {parent['name']} from {source_key}",
            columns=[
                records.column(hash_key, "STRING", nullable=False, primary_key=True, length=32),
                records.column(
                    "load_dts",
                    "TIMESTAMP",
                    nullable=False,
                    primary_key=True,
                    description="Load date-time",
                ),
                records.column(
                    "hash_diff",
                    "STRING",
                    nullable=False,
                    length=32,
                    description="Hash of the descriptive columns",
                ),
                *descriptive,
            ],
            data=[],
            schema="raw_vault",
        )

    def _business_vault(self) -> None:
        b = self.b
        root = b.add("Business Vault", "FOLDER", None, {"description": "Derived structures"})
        computed = b.add("Computed Satellites", "FOLDER", root, {"description": "Business rules"})
        for name, (entity, _source, description, derived) in _BUSINESS_SATELLITES.items():
            element = b.add(
                name,
                "SATELLITE",
                computed,
                {
                    "schema": "business_vault",
                    "description": description,
                    "owner": "analytics@example.com",
                    "parent": f"hub_{entity}",
                    "hashDiff": None,
                    "schedule": {"cron": "0 2 * * *", "timezone": "Europe/Berlin"},
                },
            )
            b.add_table(
                element,
                description=description,
                columns=[
                    records.column(
                        f"hk_{entity}", "STRING", nullable=False, primary_key=True, length=32
                    ),
                    records.column("load_dts", "TIMESTAMP", nullable=False, primary_key=True),
                    *[
                        records.column(
                            col,
                            data_type,
                            **({"precision": 18, "scale": 2} if data_type == "DECIMAL" else {}),
                        )
                        for col, data_type, _expr in derived
                    ],
                ],
                data=[],
                schema="business_vault",
            )
        pits = b.add("PIT and Bridges", "FOLDER", root, {"description": "Query helpers"})
        for name, (_source, description) in _PIT_BRIDGES.items():
            b.add(
                name,
                "VIEW",
                pits,
                {
                    "schema": "business_vault",
                    "description": description,
                    "owner": "analytics@example.com",
                    "materialization": "view",
                },
            )

    def _marts(self) -> None:
        b = self.b
        root = b.add("Marts", "FOLDER", None, {"description": "Star schemas for reporting"})
        for mart, views in _MARTS.items():
            schema = "mart_" + mart.split()[0].lower()
            folder = b.add(mart, "FOLDER", root, {"description": f"{mart} (schema {schema})"})
            for name, _source, description in views:
                b.add(
                    name,
                    "VIEW",
                    folder,
                    {
                        "schema": schema,
                        "description": description,
                        "owner": "bi-team@example.com",
                        "materialization": "view",
                        "grain": description,
                    },
                )

    def _reference(self) -> None:
        b = self.b
        root = b.add("Reference", "FOLDER", None, {"description": "Reference and code lists"})
        iso = b.add("ISO", "FOLDER", root, {"description": "International standards"})
        codes = b.add("Codes", "FOLDER", root, {"description": "Internal code lists"})

        def reference(folder: JSON, name: str, description: str, standard: str) -> JSON:
            return b.add(
                name,
                "REFERENCE_TABLE",
                folder,
                {
                    "schema": "reference",
                    "description": description,
                    "owner": "data-governance@example.com",
                    "standard": standard,
                    "refresh": {"frequency": "yearly", "lastRefresh": "2024-01-15"},
                },
            )

        country = reference(iso, "ref_country", "ISO 3166-1 countries", "ISO 3166-1")
        b.add_table(
            country,
            description="ISO 3166-1 country codes (all 249 officially assigned)",
            columns=[
                records.column("alpha2", "STRING", nullable=False, primary_key=True, length=2),
                records.column("alpha3", "STRING", nullable=False, length=3),
                records.column(
                    "numeric",
                    "STRING",
                    nullable=False,
                    length=3,
                    description="Numeric code with leading zeros",
                ),
                records.column("name", "STRING", nullable=False, description="English short name"),
            ],
            data=iso_countries(),
            schema="reference",
            source={"standard": "ISO 3166-1", "edition": "2020", "retrieved": "2024-01-15"},
        )
        currency = reference(iso, "ref_currency", "ISO 4217 currencies", "ISO 4217")
        b.add_table(
            currency,
            description="ISO 4217 currency codes (current list)",
            columns=[
                records.column("code", "STRING", nullable=False, primary_key=True, length=3),
                records.column(
                    "numeric",
                    "STRING",
                    nullable=False,
                    length=3,
                    description="Numeric code with leading zeros",
                ),
                records.column(
                    "minor_units",
                    "INTEGER",
                    description="Digits after the decimal separator; null if N.A.",
                ),
                records.column("name", "STRING", nullable=False),
            ],
            data=iso_currencies(),
            schema="reference",
            source={"standard": "ISO 4217", "edition": "2015", "retrieved": "2024-01-15"},
        )
        method = reference(codes, "ref_payment_method", "Payment methods", "internal")
        b.add_table(
            method,
            description="Payment method codes (two digits, leading zero)",
            columns=[
                records.column("code", "STRING", nullable=False, primary_key=True, length=2),
                records.column("name", "STRING", nullable=False),
                records.column("name_de", "STRING", description="German name"),
                records.column("fee_pct", "DECIMAL", precision=5, scale=2),
                records.column("active", "BOOLEAN", nullable=False),
            ],
            data=[
                {"code": c, "name": n, "name_de": de, "fee_pct": fee, "active": active}
                for c, n, de, fee, active in _PAYMENT_METHODS
            ],
            schema="reference",
        )
        status = reference(codes, "ref_order_status", "Order status codes", "internal")
        b.add_table(
            status,
            description="Order status codes",
            columns=[
                records.column("code", "INTEGER", nullable=False, primary_key=True),
                records.column("name", "STRING", nullable=False),
                records.column("name_de", "STRING"),
                records.column("is_final", "BOOLEAN", nullable=False),
            ],
            data=[
                {"code": c, "name": n, "name_de": de, "is_final": final}
                for c, n, de, final in _ORDER_STATUSES
            ],
            schema="reference",
        )

    # -- mappings -----------------------------------------------------------------

    def _mappings(self) -> None:
        b = self.b
        for system, table, _desc, hub, parent, _spec in _SOURCE_TABLES:
            key = f"{system}.{table}"
            source = b.by_name[f"{system}_{table}"]
            stage = b.by_name[f"stg_{system}_{table}"]
            b.add_mapping(
                source, stage, description=f"Stage {key}", column_mappings=self._stage_entries(key)
            )
            if hub:
                business_key = _HUBS[hub][1]
                b.add_mapping(
                    stage,
                    b.by_name[f"hub_{hub}"],
                    description=f"Load hub_{hub} from {key}",
                    column_mappings=[
                        {"source": f"hk_{hub}", "target": f"hk_{hub}", "transformation": None},
                        {
                            "source": business_key,
                            "target": business_key,
                            "transformation": None,
                            "businessKey": True,
                        },
                        *_technical_entries(),
                    ],
                )
            for link in self.links_fed[key]:
                hub_a, hub_b, _ = _LINKS[link]
                b.add_mapping(
                    stage,
                    b.by_name[f"lnk_{link}"],
                    description=f"Load lnk_{link} from {key}",
                    column_mappings=[
                        {
                            "source": f"hk_lnk_{link}",
                            "target": f"hk_lnk_{link}",
                            "transformation": None,
                        },
                        {"source": f"hk_{hub_a}", "target": f"hk_{hub_a}"},
                        {"source": f"hk_{hub_b}", "target": f"hk_{hub_b}"},
                        *_technical_entries(),
                    ],
                )
            kind, _, name = parent.partition(":")
            hash_key = f"hk_{name}" if kind == "hub" else f"hk_lnk_{name}"
            satellite = b.by_name[f"sat_{system}_{table}"]
            b.add_mapping(
                stage,
                satellite,
                description=f"Load {satellite['name']} from {key}",
                column_mappings=[
                    {"source": hash_key, "target": hash_key, "transformation": None},
                    {"source": "load_dts", "target": "load_dts", "transformation": None},
                    {"source": "hash_diff", "target": "hash_diff", "transformation": None},
                    *[
                        {"source": c["name"], "target": c["name"]}
                        for c in self.source_columns[key]
                        if not c["primaryKey"]
                    ],
                ],
            )
        for name, (entity, source, description, derived) in _BUSINESS_SATELLITES.items():
            b.add_mapping(
                b.by_name[source],
                b.by_name[name],
                description=description,
                column_mappings=[
                    {"source": f"hk_{entity}", "target": f"hk_{entity}", "transformation": None},
                    {"source": None, "target": "load_dts", "transformation": "CURRENT_TIMESTAMP"},
                    *[
                        {
                            "source": None,
                            "target": col,
                            "transformation": expr,
                            "comment": f"business rule {i + 1} of {name}",
                        }
                        for i, (col, _type, expr) in enumerate(derived)
                    ],
                ],
            )
        for name, (source, description) in _PIT_BRIDGES.items():
            self._view_mapping(source, name, description)
        for views in _MARTS.values():
            for name, source, description in views:
                if source is not None:
                    self._view_mapping(source, name, description)

    def _view_mapping(self, source: str, target: str, description: str) -> None:
        columns = [c for c in self.b.columns_of(source) if c["name"] not in _TECHNICAL_COLUMNS]
        self.b.add_mapping(
            self.b.by_name[source],
            self.b.by_name[target],
            description=description,
            column_mappings=[
                {
                    "source": c["name"],
                    "target": c["name"],
                    "transformation": None,
                    "description": c["description"],
                }
                for c in columns[:8]
            ],
        )

    def _stage_entries(self, key: str) -> list[JSON]:
        system, table = key.split(".")
        entries: list[JSON] = []
        for i, c in enumerate(self.source_columns[key]):
            entry: JSON = {"source": c["name"], "target": c["name"]}
            # Some entries carry no transformation key at all (an optional key).
            if c["dataType"] == "STRING":
                entry["transformation"] = f"TRIM(src.{c['name']})"
            elif i % 2 == 0:
                entry["transformation"] = None
            entries.append(entry)
        for hub in self.hubs_fed[key]:
            business_key = _HUBS[hub][1]
            entries.append(
                {
                    "source": business_key
                    if _has_column(self.source_columns[key], business_key)
                    else None,
                    "target": f"hk_{hub}",
                    "transformation": _md5(f"src.{business_key}"),
                }
            )
        for link in self.links_fed[key]:
            keys = [_HUBS[h][1] for h in _LINKS[link][:2]]
            entries.append(
                {
                    "source": None,
                    "target": f"hk_lnk_{link}",
                    "transformation": _md5(
                        "CONCAT_WS('|', " + ", ".join(f"src.{k}" for k in keys) + ")"
                    ),
                    "inputs": keys,
                }
            )
        descriptive = [c["name"] for c in self.source_columns[key] if not c["primaryKey"]]
        entries += [
            {
                "source": None,
                "target": "hash_diff",
                "transformation": _md5(
                    "CONCAT_WS('|', " + ", ".join(f"src.{d}" for d in descriptive) + ")"
                ),
                "inputs": descriptive,
            },
            {"source": None, "target": "load_dts", "transformation": "CURRENT_TIMESTAMP"},
            {
                "source": None,
                "target": "record_source",
                "transformation": f"'{_SYSTEMS[system]['name']}.{table}'",
            },
        ]
        return entries


def _has_column(columns: Iterable[JSON], name: str) -> bool:
    return any(c["name"] == name for c in columns)


def _technical_columns(*, with_hash_diff: bool) -> list[JSON]:
    columns = []
    if with_hash_diff:
        columns.append(
            records.column(
                "hash_diff",
                "STRING",
                nullable=False,
                length=32,
                description="Hash of the descriptive columns",
            )
        )
    columns += [
        records.column("load_dts", "TIMESTAMP", nullable=False, description="Load date-time"),
        records.column(
            "record_source",
            "STRING",
            nullable=False,
            length=64,
            description="Where the row came from",
        ),
    ]
    return columns


def _technical_entries() -> list[JSON]:
    return [
        {"source": "load_dts", "target": "load_dts", "transformation": None},
        {"source": "record_source", "target": "record_source", "transformation": None},
    ]


def _dwh_deployments(elements: list[JSON]) -> dict[str, str]:
    """Element id -> deployment id: most non-folder elements of the first layers."""
    deployments = {}
    layers = ("SOURCE_TABLE", "STAGE_TABLE", "HUB", "LINK", "SATELLITE", "REFERENCE_TABLE")
    for number, e in enumerate(elements, start=1):
        if e["type"] in layers and number % 5 != 0:
            deployments[e["id"]] = "deploy-2024-04-30.1" if number % 2 else "deploy-2024-06-14.1"
    return deployments


def _dwh_packages(elements: list[JSON]) -> list[JSON]:
    ids = [e["id"] for e in elements if e["type"] != "FOLDER"]
    april = [e["id"] for e in elements if e["deploymentId"] == "deploy-2024-04-30.1"]
    june = [e["id"] for e in elements if e["deploymentId"] == "deploy-2024-06-14.1"]
    undeployed = [i for i in ids if i not in set(april) | set(june)]
    return [
        records.package(
            system=DWH,
            name="release-2024.04",
            description="April release",
            status="CLOSED",
            created_at="2024-04-22T07:00:00Z",
            structure_ids=april[:15],
        ),
        records.package(
            system=DWH,
            name="release-2024.06",
            description="June release",
            status="CLOSED",
            created_at="2024-06-03T07:00:00Z",
            structure_ids=june[:15],
        ),
        records.package(
            system=DWH,
            name="release-2024.07",
            description="July release: marts",
            status="OPEN",
            created_at="2024-07-01T07:00:00Z",
            structure_ids=undeployed[:10],
        ),
        records.package(
            system=DWH,
            name="hotfix-2024.07.1",
            description="Empty hotfix package",
            status="OPEN",
            created_at="2024-07-09T12:30:00Z",
            structure_ids=[],
        ),
    ]


def _lab() -> tuple[list[JSON], list[JSON], list[JSON], list[JSON]]:
    """The LAB system: awkward ids and their pieces, each a distinct resource."""
    b = _SystemBuilder(LAB, "lab")
    root = b.add(
        "Lab", "FOLDER", None, {"description": "Ids that break naive URL building"}, id="lab"
    )
    source = b.add(
        "lab_source",
        "SOURCE_TABLE",
        root,
        {"schema": "lab", "description": "Where every lab mapping reads from"},
        id="lab-source",
    )
    b.add_table(
        source,
        id="lab-source",
        description="The lab's source table",
        columns=[
            records.column("id", "STRING", nullable=False, primary_key=True),
            records.column("label", "STRING"),
        ],
        data=[{"id": "x", "label": "the lab source"}],
        schema="lab",
    )
    awkward = b.add(
        "awkward ids",
        "FOLDER",
        root,
        {"description": "Ids with reserved characters, and the ids of their pieces"},
        id="lab-awkward",
    )
    for resource_id in LAB_AWKWARD_IDS + LAB_PIECE_IDS:
        element = b.add(
            resource_id,
            "STAGE_TABLE",
            awkward,
            {
                "schema": "lab",
                "description": f"The element whose id is {resource_id!r}",
                "owner": "lab@example.com",
            },
            id=resource_id,
        )
        b.add_table(
            element,
            id=resource_id,
            description=f"The table whose id is {resource_id!r}",
            columns=[
                records.column("id", "STRING", nullable=False, primary_key=True),
                records.column("label", "STRING"),
            ],
            data=[{"id": resource_id, "label": f"row of table {resource_id}"}],
            schema="lab",
        )
        b.add_mapping(
            source,
            element,
            id=resource_id,
            description=f"The mapping whose id is {resource_id!r}",
            column_mappings=[
                {"source": "id", "target": "id", "transformation": None},
                {"source": "label", "target": "label"},
            ],
        )
    elements = b.finish({"tbl": "lab-deploy-1", "..": "lab-deploy-1"})
    packages = [
        records.package(
            system=LAB,
            name="sandbox/Zürich 1",
            description="Awkward package name",
            status="OPEN",
            created_at="2024-05-01T10:00:00Z",
            structure_ids=["tbl/with/slash", "..", "100%"],
        ),
        records.package(
            system=LAB,
            name="sandbox",
            description="A piece of the awkward name",
            status="OPEN",
            created_at="2024-05-01T10:05:00Z",
            structure_ids=["tbl"],
        ),
        records.package(
            system=LAB,
            name="archive 2023",
            description="Closed long ago",
            status="CLOSED",
            created_at="2023-12-01T10:00:00Z",
            structure_ids=["tbl", ".."],
        ),
    ]
    return elements, b.tables, b.mappings, packages


def build_sample() -> Dataset:
    """The deterministic sample data of the emulator (systems ``DWH`` and ``LAB``).

    Returns
    -------
    Dataset
        Fresh records on every call (callers may mutate them); two calls return
        equal datasets.
    """
    warehouse = _Warehouse()
    warehouse.build()
    dwh = warehouse.b
    dwh_elements = dwh.finish(_dwh_deployments(dwh.elements))
    lab_elements, lab_tables, lab_mappings, lab_packages = _lab()
    return Dataset(
        systems=[
            {"name": DWH, "description": "Enterprise data warehouse (data vault 2.0)"},
            {"name": LAB, "description": "Lab system with awkward identifiers"},
        ],
        elements=dwh_elements + lab_elements,
        tables=dwh.tables + lab_tables,
        mappings=dwh.mappings + lab_mappings,
        object_types=build_object_types(),
        packages=_dwh_packages(dwh_elements) + lab_packages,
    )
