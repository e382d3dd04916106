"""The rules, one module each (``dddNNN_short_name.py``), discovered automatically."""

from __future__ import annotations

import importlib
import pkgutil

from ddpify.check.rule import Rule


def _discover() -> list[type[Rule]]:
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(
            value
            for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__
        )
    return sorted(found, key=lambda rule: rule.code)


ALL_RULES: list[type[Rule]] = _discover()
BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}
