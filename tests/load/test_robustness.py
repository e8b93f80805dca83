"""Bad input gets diagnostics, never a traceback or a hang: hostile files and random mutations of real records."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flopkb.config import load_config
from flopkb.pipeline.compile import compile_knowledge_base
from flopkb.pipeline.stages import CHECK_STAGES
from flopkb.report.codes import CODES
from kbfixture import codes, compile_kb, write_kb
from repo import REPO

SEED = (REPO / "records/flops/sd-batch-dilution-problem.yaml").read_text(encoding="utf-8")
SEED_PATH = "records/flops/sd-batch-dilution-problem.yaml"


def hostile(tmp_path: Path, content: str | bytes) -> list[str]:
    kb = compile_kb(write_kb(tmp_path, {"records/flops/x.yaml": content}))
    return [code for code, path, _ in codes(kb) if path == "records/flops/x.yaml"]


def test_deep_flow_nesting_is_refused(tmp_path: Path) -> None:
    assert hostile(tmp_path, "id: flops/x\nkind: flop\nnotes: " + "[" * 200_000 + "]" * 200_000 + "\n") == [
        "not-a-record"
    ]


def test_deep_block_nesting_is_refused(tmp_path: Path) -> None:
    text = "id: flops/x\nkind: flop\nnotes:\n" + "".join(" " * depth + f"k{depth}:\n" for depth in range(1, 200))
    assert hostile(tmp_path, text) == ["not-a-record"]


def test_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    assert hostile(tmp_path, "\n".join(lines) + "\n") == ["not-a-record"]


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    assert hostile(tmp_path, "id: flops/x\nkind: flop\nnotes: &loop [*loop]\n") == ["not-a-record"]


def test_huge_file_is_refused(tmp_path: Path) -> None:
    assert hostile(tmp_path, "notes: " + "x" * (2 << 20) + "\n") == ["not-a-record"]


def test_binary_garbage_is_an_encoding_problem(tmp_path: Path) -> None:
    assert hostile(tmp_path, bytes(range(256))) == ["encoding"]


def test_python_tags_are_refused_not_run(tmp_path: Path) -> None:
    payload = tmp_path / "pwned"
    text = (
        "id: flops/x\nkind: flop\ncategory: memory-bandwidth\ndescription: d\n"
        f"notes: !!python/object/apply:os.system ['touch {payload}']\n"
    )
    assert hostile(tmp_path, text) == ["invalid-value"]
    assert not payload.exists()


def test_multiple_documents_are_a_syntax_error(tmp_path: Path) -> None:
    assert hostile(tmp_path, "id: flops/x\n---\nid: flops/y\n") == ["yaml-syntax"]


MUTATIONS = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, len(SEED)), st.integers(1, 40)),
    st.tuples(
        st.just("insert"),
        st.integers(0, len(SEED)),
        st.lists(
            st.sampled_from([*":-[]{}|>#&*!'\"\n\t %@`\\", "[[", "]]", "\ufeff", "\r\n", "  ", "é"]), max_size=6
        ).map("".join),
    ),
    st.tuples(st.just("truncate"), st.integers(0, len(SEED)), st.just(0)),
    st.tuples(st.just("swap-lines"), st.integers(0, SEED.count("\n")), st.integers(0, SEED.count("\n"))),
)


def mutate(text: str, mutation: tuple[str, int, object]) -> str:
    action, position, argument = mutation
    if action == "delete":
        return text[:position] + text[position + int(argument) :]  # type: ignore[call-overload]
    if action == "insert":
        return text[:position] + str(argument) + text[position:]
    if action == "truncate":
        return text[:position]
    lines = text.split("\n")
    first, second = sorted((position % len(lines), int(argument) % len(lines)))  # type: ignore[call-overload]
    lines[first], lines[second] = lines[second], lines[first]
    return "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(MUTATIONS, min_size=1, max_size=4))
def test_mutated_real_record_gives_diagnostics_never_a_traceback(
    tmp_path: Path, mutations: list[tuple[str, int, object]]
) -> None:
    text = SEED
    for mutation in mutations:
        text = mutate(text, mutation)
    root = tmp_path / "kb"
    (root / "records/flops").mkdir(parents=True, exist_ok=True)
    (root / "schema").mkdir(exist_ok=True)
    (root / "schema/vocabulary.yaml").write_bytes((REPO / "schema/vocabulary.yaml").read_bytes())
    (root / SEED_PATH).write_text(text, encoding="utf-8")
    kb = compile_knowledge_base(load_config(root), CHECK_STAGES)
    line_count = text.count("\n") + 2
    for diagnostic in kb.diagnostics:
        assert diagnostic.code in CODES
        assert 1 <= diagnostic.line <= line_count and diagnostic.column >= 1
