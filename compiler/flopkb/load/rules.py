"""The rules of a record's mapping that read more than one of its fields, told beside its fields' own problems."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError, ValidatorFunctionWrapHandler, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError


class ExactlyOne:
    """A rule of a mapping: it has exactly one of two fields, judged on its keys as written (a key whose value is
    wrong, or null, counts as given, or not given), beside the checks of its fields' values.

    Pydantic runs a model's "after" validator only once every field is valid:
    a claim with both `value` and `measured` and a wrong `rel_tol` would be
    told its rel_tol only, and the rest left to the next run. Judged on the
    keys as written, in a "wrap" validator that also runs the field checks
    (`rule`), the rule is told with them, and only where the author broke it:
    a field left out for being wrong breaks no rule (`flopkb.load.validate`).
    """

    def __init__(self, owner: str, fields: tuple[str, str], both: str, neither: str) -> None:
        first, second = fields
        self.fields = fields
        self.message = f"{owner} has exactly one of '{first}' and '{second}'"
        self.hints = {True: both, False: neither}

    def broken(self, data: Any) -> PydanticCustomError | None:
        """What is wrong with the mapping `data` as written, or None."""
        if type(data) is not dict:
            return None  # not a mapping: its type error is told
        first, second = (data.get(field) is not None for field in self.fields)
        if first != second:
            return None
        return PydanticCustomError("invalid_value", self.message, {"hint": self.hints[first], "reads": self.fields})


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
