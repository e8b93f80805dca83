"""Which record model owns the mapping at a path of a record's data: where validation's messages and hints look up
a mapping's fields."""

from __future__ import annotations

from typing import Any, get_args, get_origin

from pydantic import BaseModel

from flopkb.load.source import Path


def model_at(model: type, path: Path) -> type[BaseModel] | None:
    """The model of the mapping at `path` in a record of `model` (nested rows included), or None."""
    current: Any = model
    keyed = False
    for part in path:
        if keyed:  # a key of a mapping of models (`specs.<parameter>`): the model is its value's
            keyed = False
            continue
        if isinstance(part, int) or not (isinstance(current, type) and issubclass(current, BaseModel)):
            continue
        field = current.model_fields.get(part)
        current = inner_model(field.annotation) if field else None
        keyed = field is not None and is_mapping(field.annotation)
    if keyed:
        return None  # the mapping of models itself, whose keys are no fields
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def is_mapping(annotation: Any) -> bool:
    """Whether `annotation` is `dict[K, V]` (or that, optional or annotated)."""
    origin = get_origin(annotation)
    if origin is dict:
        return True
    return origin is not None and any(is_mapping(arg) for arg in get_args(annotation))


def inner_model(annotation: Any) -> Any:
    """The model class inside `list[M]`, `dict[K, M]` or `M | None`, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = inner_model(arg)
        if found is not None:
            return found
    return None
