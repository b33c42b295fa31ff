"""The table of settings: one :class:`Setting` per row, and its Markdown rendering.

:mod:`mddframes.config` holds the rows (``SETTINGS``):
:func:`~mddframes.config.resolve_settings` resolves them in a loop, its error messages
name the argument, variable or profile key that gave a value, and docs/settings.md is
made from them (:func:`markdown_table`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class _Required(Enum):
    REQUIRED = "required"


#: The default of a setting that must be given (its absence is an error naming where).
REQUIRED = _Required.REQUIRED

#: ``parse(name, value, source)``: the setting's value, or a ConfigurationError naming both.
Parser = Callable[[str, Any, str], Any]
#: ``then(value, source, earlier, profile_label)``: the final value, given where it came
#: from (None for the default) and the settings resolved before it.
Finisher = Callable[[Any, Any, Mapping[str, Any], str], Any]


@dataclass(frozen=True)
class Setting:
    """One setting: where it is looked for, how its value is parsed, its default.

    Attributes
    ----------
    name : str
        Its argument of :func:`~mddframes.config.resolve_settings` and ``connect()``,
        its field of :class:`~mddframes.config.Settings`.
    variable : str or None
        Its ``MDD_*`` environment variable; None when the environment may not set it.
    parse : callable
        ``parse(name, value, source)`` -> the value (:mod:`mddframes.config_values`);
        raises ConfigurationError naming the setting and where the value came from.
    default : object
        The value when it is given nowhere; :data:`REQUIRED` when it must be given.
    help : str
        One line for the table of settings (docs/settings.md).
    profile_key : str
        Its key in a profile of the configuration file (default: ``name``).
    shown_default : str
        How the table shows the default, when not the default itself.
    empty_is_value : bool
        Whether an empty variable is a value (``MDD_API_PREFIX=""``) rather than unset.
    then : callable or None
        ``then(value, source, earlier, profile_label)`` -> the final value, given where
        it came from (None for the default) and the settings resolved before it (the
        base URL's ``{tenant}``, the realm's default).
    """

    name: str
    variable: str | None
    parse: Parser
    default: Any
    help: str
    profile_key: str = ""
    shown_default: str = ""
    empty_is_value: bool = False
    then: Finisher | None = None

    def __post_init__(self) -> None:
        if not self.profile_key:
            object.__setattr__(self, "profile_key", self.name)

    def lookup(
        self, argument: Any, environ: Mapping[str, str], profile: Mapping[str, Any], label: str
    ) -> tuple[Any, str] | None:
        """The given value and where it came from (argument, variable, profile), or None."""
        if argument is not None:
            return argument, f"argument {self.name}="
        variable = self.variable
        # an empty variable counts as unset, unless "" is a value of this setting
        if variable is not None and (
            environ.get(variable) or (self.empty_is_value and variable in environ)
        ):
            return environ[variable], f"environment variable {variable}"
        if self.profile_key in profile:
            return profile[self.profile_key], f"{self.profile_key} in {label}"
        return None


def markdown_table(settings: Iterable[Setting]) -> str:
    """The settings as a Markdown table: argument, variable, profile key, default, help."""
    lines = [
        "| Argument | Environment variable | Profile key | Default | What it sets |",
        "| --- | --- | --- | --- | --- |",
    ]
    for setting in settings:
        variable = f"`{setting.variable}`" if setting.variable else "(none)"
        lines.append(
            f"| `{setting.name}` | {variable} | `{setting.profile_key}` "
            f"| {_shown_default(setting)} | {setting.help} |"
        )
    return "\n".join(lines) + "\n"


def _shown_default(setting: Setting) -> str:
    if setting.shown_default:
        return setting.shown_default
    if setting.default is REQUIRED:
        return "required"
    if setting.default is None:
        return "none"
    if isinstance(setting.default, str):
        return f'`"{setting.default}"`'
    return f"`{setting.default!r}`"
