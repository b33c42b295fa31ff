"""The table of settings, read off the fields of :class:`~mddframes.config.Settings`.

A setting is declared once, as a field of ``Settings`` whose annotation carries an
:class:`About` (``Annotated[float | None, About("...", parse_rate, cli=True)] = None``):
its name, resolved type and default are the field's; the ``About`` gives its one-line
help, its parser, its ``MDD_*`` variable (``MDD_`` + the name in capitals unless
``env=False``) and whether the command line has ``--its-name``. :func:`settings_of`
turns the fields into :class:`Setting` rows, from which
:func:`~mddframes.config.resolve_settings` resolves, ``connect()``'s and
``resolve_settings``' parameter docs are written (:func:`parameters_doc`), the command
line's connection options are made, and docs/settings.md's table is rendered
(:func:`markdown_table`). The argument types of ``connect(**settings)`` are the one
other place (:class:`~mddframes.config.SettingArguments`, for the type checker).
"""

from __future__ import annotations

import dataclasses
import re
import typing
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
class About:
    """What a field of :class:`~mddframes.config.Settings` declares of itself as a setting.

    Attributes
    ----------
    help : str
        One sentence (Markdown code spans allowed): the table of settings, the
        parameter docs of ``connect()`` and the command line's option help.
    parse : callable
        ``parse(name, value, source)`` -> the value (:mod:`mddframes.config_values`).
    env : bool
        Whether the environment may set it (as ``MDD_`` + the name in capitals).
    cli : bool
        Whether the command line has an option for it (``--`` + the name, dashed).
    shown_default : str
        How the docs show the default, when not the default itself.
    empty_is_value : bool
        Whether an empty variable is a value (``MDD_API_PREFIX=""``) rather than unset.
    then : callable or None
        ``then(value, source, earlier, profile_label)`` -> the final value.
    optional : bool
        For a field without a default: whether a setting given nowhere is None (which
        ``then`` may replace) rather than an error.
    """

    help: str
    parse: Parser
    env: bool = True
    cli: bool = False
    optional: bool = False
    shown_default: str = ""
    empty_is_value: bool = False
    then: Finisher | None = None


@dataclass(frozen=True)
class Setting:
    """One setting: where it is looked for, how its value is parsed, its default.

    Attributes
    ----------
    name : str
        Its argument of :func:`~mddframes.config.resolve_settings` and ``connect()``,
        its field of :class:`~mddframes.config.Settings`, its profile key.
    variable : str or None
        Its ``MDD_*`` environment variable; None when the environment may not set it.
    parse : callable
        ``parse(name, value, source)`` -> the value (:mod:`mddframes.config_values`);
        raises ConfigurationError naming the setting and where the value came from.
    default : object
        The value when it is given nowhere; :data:`REQUIRED` when it must be given.
    help : str
        One line for the table of settings (docs/settings.md).
    option : str or None
        Its command-line option (``--base-url``); None when the command line has none.
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
    option: str | None = None
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


def settings_of(cls: type) -> tuple[Setting, ...]:
    """The :class:`Setting` rows of the dataclass ``cls``'s fields annotated with an
    :class:`About`, in field order (the order they are resolved in)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    rows = []
    for field in dataclasses.fields(cls):
        metadata = getattr(hints[field.name], "__metadata__", ())
        about = next((m for m in metadata if isinstance(m, About)), None)
        if about is None:
            continue
        default = field.default
        if default is dataclasses.MISSING:
            default = None if about.optional else REQUIRED
        rows.append(
            Setting(
                field.name,
                f"MDD_{field.name.upper()}" if about.env else None,
                about.parse,
                default,
                about.help,
                option="--" + field.name.replace("_", "-") if about.cli else None,
                shown_default=about.shown_default,
                empty_is_value=about.empty_is_value,
                then=about.then,
            )
        )
    return tuple(rows)


def markdown_table(settings: Iterable[Setting]) -> str:
    """The settings as a Markdown table: argument, variable, option, default, help."""
    lines = [
        "| Argument and profile key | Environment variable | Command line | Default | What it sets |",
        "| --- | --- | --- | --- | --- |",
    ]
    for setting in settings:
        variable = f"`{setting.variable}`" if setting.variable else "(none)"
        option = f"`{setting.option}`" if setting.option else "(none)"
        lines.append(
            f"| `{setting.name}` | {variable} | {option} "
            f"| {_shown_default(setting)} | {setting.help} |"
        )
    return "\n".join(lines) + "\n"


def parameters_doc(settings: Iterable[Setting], types: Mapping[str, Any], indent: str) -> str:
    """The numpydoc ``Parameters`` entries of the settings, each typed from ``types``
    (its argument's annotation), with its help, variable, option and default."""
    lines = []
    for setting in settings:
        ways = [f"``{w}``" for w in (setting.variable, setting.option) if w]
        where = f" ({', '.join(ways)})" if ways else " (argument or profile only)"
        default = _shown_default(setting)
        default = "required" if setting.default is REQUIRED else f"default {_rst(default)}"
        lines.append(f"{indent}{setting.name} : {_numpydoc_type(types[setting.name])}")
        lines.append(f"{indent}    {_rst(setting.help.rstrip('.'))}{where}; {default}.")
    return "\n".join(lines)


def attributes_doc(settings: Iterable[Setting], types: Mapping[str, Any], indent: str) -> str:
    """The numpydoc ``Attributes`` entries of the settings, each typed from ``types``
    (its field's annotation), with its help."""
    lines = []
    for setting in settings:
        lines.append(f"{indent}{setting.name} : {_numpydoc_type(types[setting.name])}")
        lines.append(f"{indent}    {_rst(setting.help)}")
    return "\n".join(lines)


def _numpydoc_type(annotation: Any) -> str:
    """``float | str | None`` -> ``float or str`` (None left out: every setting may be
    left out), ``tuple[float, float]`` -> ``(float, float)``, a path-like -> ``path``."""
    if typing.get_origin(annotation) is typing.Union or type(annotation).__name__ == "UnionType":
        parts = [_numpydoc_type(a) for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(dict.fromkeys(parts))
    origin = typing.get_origin(annotation)
    if origin is tuple:
        return "(" + ", ".join(_numpydoc_type(a) for a in typing.get_args(annotation)) + ")"
    if "PathLike" in repr(annotation):
        return "path"
    return str(getattr(annotation, "__name__", annotation))


def _rst(markdown: str) -> str:
    """Markdown code spans as reStructuredText literals."""
    return re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", markdown)


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
