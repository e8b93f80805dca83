"""What the evidence stage gives: every record's evidence status, the unverified figures, and who rests on them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from flopkb.formulas.results import Claim
from flopkb.load.source import Path

NO_DEBT, OWN_DEBT, INHERITED_DEBT = "no-debt", "own-debt", "inherited-debt"
"""A record's evidence status: whether it has, or computes with, figures whose basis is `unverified`. `no-debt` says
only that it has none; whether a measurement agrees with it is its standing's business (`DISAGREES`)."""
ROW, SPEC = "hardware-row", "spec"
NEEDS_SOURCES = frozenset({"measured", "simulated", "vendor-spec", "cited"})
"""The bases that a figure (or an erratum) must give sources for."""

# What a record's evidence says, worst first: the first that applies is its standing (`Evidence.standing`).
DRAFT, NO_SOURCES, DISAGREES, UNVERIFIED_FIGURES, HAS_ERRATA, SOURCED = (
    "draft",
    "no-sources",
    "disagrees",
    "unverified-figures",
    "has-errata",
    "sourced",
)
STANDINGS = (DRAFT, NO_SOURCES, DISAGREES, UNVERIFIED_FIGURES, HAS_ERRATA, SOURCED)
STANDING_WORDS = {
    DRAFT: "draft",
    NO_SOURCES: "no sources",
    DISAGREES: "disagrees with a measurement",
    UNVERIFIED_FIGURES: "unverified figures",
    HAS_ERRATA: "has errata",
    SOURCED: "sourced",
}
"""What badges, counts, the evidence page and link previews say of each standing."""
STANDING_MEANINGS = {
    DRAFT: "still holds a sentence of the template that flopkb new wrote",
    NO_SOURCES: "cites no source at all",
    DISAGREES: "a formula of it disagrees with what its sources measured",
    UNVERIFIED_FIGURES: "has, or computes with, figures whose basis is unverified",
    HAS_ERRATA: "some of its words are corrected by errata",
    SOURCED: "every figure and claim rests on a cited, vendor, measured or derived basis",
}


@dataclass(frozen=True, order=True, slots=True)
class DebtItem:
    """One unverified figure: a hardware row (`path` = ("hardware_parameters", i)) or a spec (("specs", parameter))."""

    record: str
    path: Path
    parameter: str
    what: str = field(compare=False)
    """ROW or SPEC."""
    file: str = field(compare=False)
    line: int = field(compare=False)
    column: int = field(compare=False)
    written: Path = field(compare=False)
    """`path` in the file: it differs after a list item that validation left out (`flopkb.load.omitted`)."""

    @property
    def label(self) -> str:
        """`hardware_parameters[2] (memory_bandwidth)` or `specs.peak_fp8_dense`, as the file has it."""
        if self.what == SPEC:
            return f"specs.{self.parameter}"
        return f"{self.written[0]}[{self.written[1]}] ({self.parameter})"


@dataclass(frozen=True, order=True, slots=True)
class InheritedDebt:
    """An unverified figure of another record that one of this record's claims rests on."""

    item: DebtItem
    via: tuple[str, ...]
    """The records the debt came through, from this record's direct dependency to `item.record` (its last element)."""
    claim: Path
    """The data path of this record's row or formula that rests on it: ("hardware_parameters", 0), ("formulas", 1)."""


@dataclass(frozen=True, order=True, slots=True)
class SimulatedClaim:
    """A claim of a record that names a measurement whose basis is `simulated`."""

    claim: Path
    """The claim's data path: ("formulas", i, "expect", j)."""
    source: str
    measurement: str
    where: str
    """Where in the source the measurement stands."""


@dataclass(frozen=True, order=True, slots=True)
class ErratumItem:
    """One erratum of a record: the words it quotes from a field, and the correction."""

    record: str
    index: int
    in_field: str = field(compare=False)
    """The field whose words it corrects, as written (`hardware_parameters[0].effect`)."""
    quote: str = field(compare=False)
    correction: str = field(compare=False)
    basis: str = field(compare=False)
    sources: tuple[str, ...] = field(compare=False)
    found: bool = field(compare=False)
    """The quote stands in the field (else `erratum-quote-missing`)."""
    file: str = field(compare=False)
    line: int = field(compare=False)
    column: int = field(compare=False)

    @property
    def number(self) -> int:
        """Its number on the record's page: 1, 2, ..."""
        return self.index + 1


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A claim whose formula disagrees with the measurement it names, and the records that rest on that formula."""

    record: str
    formula: str
    claim: Claim
    dependents: tuple[str, ...]
    """Other records whose formulas take this one by `ref`, sorted."""


class RecordEvidence(NamedTuple):
    """One record's evidence status (`no-debt`, `own-debt`, `inherited-debt`), its own debt and what it inherits."""

    id: str
    status: str
    own: tuple[DebtItem, ...] = ()
    inherited: tuple[InheritedDebt, ...] = ()
    simulated: tuple[SimulatedClaim, ...] = ()
    """Its claims that rest on simulated measurements."""
    errata: tuple[ErratumItem, ...] = ()
    cited: bool = False
    """Its words cite a source somewhere: its `sources`, a figure's, a measured claim, a formula whose expression
    computes with accelerator specs (`hw.`); a source record with a URL or measurements. An erratum's sources back
    the correction, not the record's words: they do not count."""
    draft: bool = False
    """It still holds a sentence of a `flopkb new` template (`placeholder`)."""

    @property
    def sources_of_debt(self) -> tuple[str, ...]:
        """The records whose unverified figures this one inherits, sorted."""
        return tuple(sorted({debt.item.record for debt in self.inherited}))


@dataclass(slots=True)
class Evidence:
    records: dict[str, RecordEvidence]
    """Every record's evidence status (records that failed to load are `no-debt`: nothing is known of them)."""
    debt: tuple[DebtItem, ...]
    """Every unverified row and spec of the base, sorted by record and path."""
    dependents: dict[DebtItem, tuple[str, ...]]
    """For each item of `debt`, the other records that rest on it, sorted."""
    _disagreements: tuple[Disagreement, ...] | Callable[[], tuple[Disagreement, ...]] = field(
        default=(), repr=False, compare=False
    )
    _disagreeing: frozenset[str] | None = field(default=None, repr=False, compare=False)

    @property
    def disagreements(self) -> tuple[Disagreement, ...]:
        """Every claim of the base whose formula disagrees with its measurement, by record and formula."""
        if callable(self._disagreements):
            self._disagreements = self._disagreements()
        return self._disagreements

    def of(self, record_id: str) -> RecordEvidence:
        return self.records.get(record_id) or RecordEvidence(record_id, NO_DEBT)

    def counts(self) -> dict[str, int]:
        result = {NO_DEBT: 0, OWN_DEBT: 0, INHERITED_DEBT: 0}
        for status in self.records.values():
            result[status.status] += 1
        return result

    def standing(self, record_id: str) -> str:
        """What the record's evidence says, worst first: draft, no sources, disagrees with a measurement,
        unverified figures, has errata, sourced (`STANDINGS`). Disagreements are read from the formula results."""
        found = self.of(record_id)
        if found.draft:
            return DRAFT
        if not found.cited:
            return NO_SOURCES
        if self._disagreeing is None:
            self._disagreeing = frozenset(disagreement.record for disagreement in self.disagreements)
        if record_id in self._disagreeing:
            return DISAGREES
        if found.status != NO_DEBT:
            return UNVERIFIED_FIGURES
        if found.errata:
            return HAS_ERRATA
        return SOURCED

    def standings(self) -> dict[str, int]:
        """How many records have each standing, in `STANDINGS` order."""
        result = dict.fromkeys(STANDINGS, 0)
        for record_id in self.records:
            result[self.standing(record_id)] += 1
        return result

    @property
    def errata(self) -> tuple[ErratumItem, ...]:
        """Every erratum of the base, by record and index."""
        return tuple(sorted(item for status in self.records.values() for item in status.errata))
