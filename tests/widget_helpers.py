"""Helpers for the headless widget tests: walk a panel, read its Output."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import ipywidgets as widgets


def walk(widget: widgets.Widget) -> Iterator[widgets.Widget]:
    """The widget and every widget inside it (children, and widgets held as state)."""
    seen: set[int] = set()
    todo = [widget]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for name in current.keys:
            value = getattr(current, name, None)
            values = value if isinstance(value, list | tuple) else [value]
            todo.extend(v for v in values if isinstance(v, widgets.Widget))


def everything_shown(panel: widgets.Widget) -> str:
    """The state of every widget in ``panel`` and every output it holds, as one text."""
    parts = [repr(panel)]
    for widget in walk(panel):
        state = widget.get_state()
        state.pop("value", None) if isinstance(widget, widgets.FileUpload) else None
        parts.append(json.dumps(state, default=str))
        if isinstance(widget, widgets.Output):
            parts.append(json.dumps(widget.outputs, default=str))
    return "\n".join(parts)


def output_text(output: widgets.Output) -> str:
    """The text of an Output's streams and the text/plain of its displays."""
    texts: list[str] = []
    for item in output.outputs:
        if item["output_type"] == "stream":
            texts.append(item["text"])
        else:
            texts.append(str(item.get("data", {}).get("text/plain", "")))
    return "".join(texts)


def stderr_text(output: widgets.Output) -> str:
    """What the panel wrote as an error or warning."""
    return "".join(
        item["text"]
        for item in output.outputs
        if item["output_type"] == "stream" and item["name"] == "stderr"
    )


def displayed(output: widgets.Output) -> list[dict[str, Any]]:
    """The display_data bundles of an Output."""
    return [item["data"] for item in output.outputs if item["output_type"] == "display_data"]
