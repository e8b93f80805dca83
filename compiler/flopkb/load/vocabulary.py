"""The controlled terms of a knowledge base, read from `schema/vocabulary.yaml`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flopkb.report.cut import cut

REQUIRED_BASIS = ("measured", "vendor-spec", "cited", "derived", "unverified")
SECTIONS = ("categories", "parameters", "basis")


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    unit: str
    description: str


@dataclass(frozen=True, slots=True)
class Vocabulary:
    categories: dict[str, str]
    parameters: dict[str, Parameter]
    basis: dict[str, str]

    def terms(self, section: str) -> list[str]:
        return sorted(getattr(self, section))


class VocabularyError(ValueError):
    """The vocabulary file cannot be used; `path` locates the problem inside it."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path


def vocabulary_from_data(data: dict[str, Any]) -> Vocabulary:
    """Build the vocabulary from the parsed file, refusing what cannot work."""
    for section in SECTIONS:
        if not isinstance(data.get(section), dict):
            raise VocabularyError(f"'{section}' must be a mapping of terms", (section,))
    for section, entries in data.items():
        if section not in SECTIONS:
            raise VocabularyError(
                f"unknown section '{cut(section)}'; the vocabulary has {', '.join(SECTIONS)}", (section,)
            )
        for term, entry in entries.items():
            if entry is not None and not isinstance(entry, dict):
                raise VocabularyError(f"the term '{cut(term)}' must map to {{description: ...}}", (section, term))
    parameters = {}
    for name, entry in data["parameters"].items():
        if not entry or not isinstance(entry.get("unit"), str):
            raise VocabularyError(f"the parameter '{cut(name)}' needs a 'unit'", ("parameters", name))
        parameters[name] = Parameter(name, entry["unit"], str(entry.get("description", "")))
    missing = [term for term in REQUIRED_BASIS if term not in data["basis"]]
    if missing:
        raise VocabularyError(f"'basis' lacks the required terms {', '.join(missing)}", ("basis",))

    def descriptions(section: str) -> dict[str, str]:
        return {term: str((entry or {}).get("description", "")) for term, entry in data[section].items()}

    return Vocabulary(descriptions("categories"), parameters, descriptions("basis"))
