"""The rules of a record's mapping that read more than one of its fields, told beside its fields' own problems."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError, ValidatorFunctionWrapHandler, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError


class ExactlyOne:
    """A rule of a mapping: it has exactly one of two fields. It is judged on the keys as written, whatever their
    values (a key set to null is none), beside the checks of the fields' values.

    Pydantic runs a model's "after" validator only once every field is valid:
    a claim with both `value` and `measured` and a wrong `rel_tol` would be
    told its rel_tol only, and the rest left to the next run. Judged on the
    keys as written, in a "wrap" validator that also runs the field checks
    (`rule`), the rule is told with them. Its break names the fields it reads
    (`reads`): a field left out for being wrong, or written under a misspelt
    key, breaks no rule (`flopkb.load.validate`).
    """

    def __init__(self, owner: str, fields: tuple[str, str], both: str, neither: str) -> None:
        self.first, self.second = fields
        self.message = f"{owner} has exactly one of '{self.first}' and '{self.second}'"
        self.hints = {True: both, False: neither}

    def broken(self, data: Any) -> PydanticCustomError | None:
        """What is wrong with the mapping `data` as written, or None (and when `data` is no mapping: its type error
        is told)."""
        if type(data) is not dict or (data.get(self.first) is None) != (data.get(self.second) is None):
            return None  # every valid claim and formula comes here: one test, no call
        hint = self.hints[data.get(self.first) is not None]
        return PydanticCustomError("invalid_value", self.message, {"hint": hint, "reads": (self.first, self.second)})


def rule(check: ExactlyOne) -> Any:
    """The model validator that judges `check` on a mapping as written, and tells its break beside the problems of
    the mapping's fields."""

    def judged(cls: type[BaseModel], data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        problem = check.broken(data)
        if problem is None:
            return handler(data)
        try:
            handler(data)
        except ValidationError as error:
            raise _beside(error, problem, data) from None
        raise problem

    return model_validator(mode="wrap")(judged)


def _beside(error: ValidationError, problem: PydanticCustomError, data: Any) -> ValidationError:
    """The problems of `error` (a mapping's fields) and `problem` (the mapping's own), as one error."""
    found = error.errors(include_url=False)
    return ValidationError.from_exception_data(
        error.title,
        [
            *(
                InitErrorDetails(
                    type=PydanticCustomError(item["type"], item["msg"], item.get("ctx")),
                    loc=item["loc"],
                    input=item["input"],
                )
                for item in found
            ),
            InitErrorDetails(type=problem, loc=(), input=data),
        ],
    )
