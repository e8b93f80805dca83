"""The link stage: every link and ref of the base resolved (`flopkb.links.resolver`) and checked.

Resolution itself, in the spec's order, is `flopkb.links.resolver.Resolver`:
the index is built once per knowledge base (`Resolver.of(kb)`) and every
distinct target is resolved once. This stage walks every link, resolves it and
reports what does not land: dangling, ambiguous, wrong kind, missing anchor.
"""

from __future__ import annotations

from collections.abc import Iterator

from flopkb.authoring.folders import created_as
from flopkb.collector import uncollected
from flopkb.kb.knowledge_base import KnowledgeBase
from flopkb.links.cached import link_all
from flopkb.links.extract import Link
from flopkb.links.resolver import AMBIGUOUS, Resolution, Resolver
from flopkb.load.models import id_problem, with_scheme
from flopkb.report.cut import cut
from flopkb.report.diagnostics import Diagnostic, make
from flopkb.report.hints import closest, suggest


def resolve_target(kb: KnowledgeBase, target: str) -> str | None:
    """The id of the record `target` resolves to in `kb` (full id, unique suffix, alias), or None."""
    return Resolver.of(kb).target(target)


def resolve_formula_ref(kb: KnowledgeBase, ref: str) -> tuple[str, str] | None:
    """`<target>#<formula-id>` as (record id, formula id) when the target resolves, else None. The formula id is not
    checked."""
    target, _, formula_id = ref.partition("#")
    record_id = resolve_target(kb, target)
    return (record_id, formula_id) if record_id is not None and formula_id else None


# ---------------------------------------------------------------------------
# The link-checking stage

_KIND_NAMES = {
    "accelerator": "an accelerator",
    "source": "a source",
    "flop": "a flop",
    "fact": "a fact",
    "engine": "an engine",
}


def check_links(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Extract and resolve every link of the base (stored as `kb.links`), and report those that do not land, and the
    prose whose `*` makes emphasis (read in the same walk)."""
    resolver = Resolver.of(kb)
    suspects: list[Link] = []
    with uncollected(freeze=True):  # the links live as long as the knowledge base, as what loading built
        linked = link_all(kb.entries, resolver, suspects)
    kb.referenced = linked.referenced
    if linked.deferred:
        kb.links_later(
            lambda: linked.links(kb.entries, resolver.target),
            lambda: linked.edges(kb.entries),
            lambda record_id: linked.links_of(record_id, kb.entries[record_id], resolver.target),
        )
    else:
        kb.links = linked.links(kb.entries, resolver.target)
    yield from linked.prose_warnings
    for link in suspects:
        problem = link_problem(link, resolver)
        if problem is not None:
            yield problem


def link_problem(link: Link, resolver: Resolver) -> Diagnostic | None:
    """What the link stage tells of `link`, extracted with `resolver`: that it lands on no record, on one of a kind its
    field does not take, or on no formula or measurement of its target; None when it lands."""
    target_id = link.resolved
    if target_id is None:
        return _unresolved(link, resolver.resolve(link.target), resolver)
    kind = resolver.kinds.get(target_id)
    if link.kinds and kind is not None and kind not in link.kinds:
        return _wrong_kind(link, target_id, kind, resolver)
    anchors = resolver.anchors(target_id) if link.anchor is not None else None
    if anchors is not None and link.anchor not in anchors:
        return _dangling_anchor(link, target_id, kind, anchors)
    return None


def _describe(link: Link) -> str:
    if link.is_prose:
        return cut(link.text)
    return f"{link.where}: '{cut(link.value)}'"


def _unresolved(link: Link, found: Resolution, resolver: Resolver) -> Diagnostic:
    line, column = link.position
    if found.step == AMBIGUOUS:
        names = ", ".join(found.candidates)
        return make(
            "ambiguous-link",
            link.file,
            line,
            column,
            f"{_describe(link)}: '{cut(link.target)}' matches several records: {names}",
            f"write more of the id: {' or '.join(found.candidates)}",
        )
    if link.is_prose:
        return make(
            "dangling-link",
            link.file,
            line,
            column,
            f"{_describe(link)} resolves to no record",
            _dangling_hint(link, resolver),
        )
    url = with_scheme(link.target) if link.takes_urls else None
    return make(
        "dangling-ref",
        link.file,
        line,
        column,
        f"{_describe(link)} resolves to no record",
        suggest(link.target, [url]) if url else _dangling_hint(link, resolver),
    )


def _dangling_hint(link: Link, resolver: Resolver) -> str | None:
    """The ids close to a dangling link's target, else, where the record it names cannot be created as written (its
    kind unknown: `flopkb.authoring.folders.created_as`), why and what to write."""
    close = resolver.hint(link.target, link.kinds)
    if close is not None or id_problem(link.target) or with_scheme(link.target) is not None:
        return close
    created = created_as(link.target, link.kinds, link.where)
    return created if isinstance(created, str) else None


def _wrong_kind(link: Link, target_id: str, kind: str, resolver: Resolver) -> Diagnostic:
    line, column = link.position
    wanted = " or ".join(_KIND_NAMES.get(k, k) for k in link.kinds)
    message = (
        f"{_describe(link)} is {_KIND_NAMES.get(kind, kind)} record ({target_id}); {link.where} takes {wanted} record"
    )
    close = [
        choice
        for choice in resolver.closest(link.target, link.kinds)
        if resolver.kinds.get(resolver.target(choice) or "") in link.kinds
    ]
    hint: str = suggest(link.target, close) if close else f"point it at {wanted} record"
    return make("wrong-kind-ref", link.file, line, column, message, hint)


_ANCHORS_LISTED = 12
"""A source may hold a hundred measurements: a hint lists the first ones (the site's page of the source has all)."""


def _dangling_anchor(link: Link, target_id: str, kind: str | None, anchors: tuple[str, ...]) -> Diagnostic:
    line, column = link.position
    what = "measurement" if kind == "source" else "formula"
    if not link.anchor:
        return make("dangling-anchor", link.file, line, column, *_no_anchor(link, target_id, what, anchors))
    message = f"{_describe(link)}: {target_id} has no {what} '{cut(link.anchor)}'"
    close = closest(link.anchor or "", anchors, count=2)
    if close:
        hint: str = suggest(link.anchor, close, before=f"{link.target}#")
    elif anchors:
        hint = f"its {what}s: {_listed(anchors)}"
    else:
        hint = f"{target_id} has no {what}s; link to the record without '#{cut(link.anchor)}'"
    return make("dangling-anchor", link.file, line, column, message, hint)


def _no_anchor(link: Link, target_id: str, what: str, anchors: tuple[str, ...]) -> tuple[str, str]:
    """The message and hint of a ref that names a record where it must name one of its formulas or measurements."""
    message = f"{_describe(link)} names no {what} of {target_id}: write '{cut(link.value)}#<{what}-id>'"
    if target_id == link.record:
        anchors = tuple(anchor for anchor in anchors if anchor != _own_formula(link))
    if len(anchors) == 1:
        return message, f"write {cut(link.value)}#{cut(anchors[0])}"
    if not anchors:
        other = " other" if target_id == link.record else ""
        return message, f"{target_id} has no{other} {what}s"
    return message, f"write {cut(link.value)}#<{what}-id>, one of its {what}s: {_listed(anchors)}"


def _own_formula(link: Link) -> object:
    """The id of the formula whose `ref` `link` is (a formula cannot reuse itself), or None."""
    if link.field[:1] != ("formulas",):
        return None
    try:
        return link.source.data["formulas"][link.field[1]]["id"]
    except (KeyError, IndexError, TypeError):
        return None


def _listed(anchors: tuple[str, ...]) -> str:
    more = f", and {len(anchors) - _ANCHORS_LISTED} more" if len(anchors) > _ANCHORS_LISTED else ""
    return ", ".join(cut(anchor) for anchor in anchors[:_ANCHORS_LISTED]) + more


__all__ = ["Resolution", "Resolver", "check_links", "resolve_formula_ref", "resolve_target"]
