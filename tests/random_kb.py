"""Random small knowledge bases and random edits of them, for the tests that compare an incremental answer with a
full one: accelerators with aliases, flops with rows and formulas, facts whose formulas borrow by `ref`, a source
with a measurement, broken files, fields the schema tells wrong and items it leaves out whole; edits rewrite, append
to, remove, add and rename record files."""

from __future__ import annotations

import random
from pathlib import Path

ACCELERATORS = ("a1", "a2", "a3")
FACTS = ("f1", "f2", "f3", "f4")
FLOPS = ("p1", "p2", "p3")
PARAMETERS = ("memory_bandwidth", "peak_bf16_dense", "memory_capacity")
UNITS = {"memory_bandwidth": "TB/s", "peak_bf16_dense": "TFLOP/s", "memory_capacity": "GB"}
BASES = ("vendor-spec", "unverified", "measured", "derived")
PRODUCTS = ("", "", " It costs k*T per step, (B*P) in all.", " It costs `k*T` per step.")
"""Endings of a description: none, a product that makes emphasis (`ambiguous-emphasis`), one in code."""


def accelerator(rng: random.Random, name: str) -> str:
    lines = [f"id: hw/{name}", "kind: accelerator", "vendor: V"]
    if rng.random() < 0.3:
        lines.append(f"aliases: [{rng.choice(['gpu-x', 'gpu-y', name + '-old'])}]")
    lines.append("specs:")
    for parameter in rng.sample(PARAMETERS, rng.randint(1, 3)):
        unit = UNITS[parameter] if rng.random() < 0.9 else rng.choice(["TB/s", "GB", "furlong"])
        basis = rng.choice(BASES)
        sources = " sources: [src/s]," if basis != "derived" and rng.random() < 0.7 else ""
        lines.append(f'  {parameter}: {{value: "{rng.randint(1, 9)} {unit}", basis: {basis},{sources}}}')
    return "\n".join(lines) + "\n"


def hardware_ref(rng: random.Random) -> str:
    return rng.choice(
        [*(f"hw/{name}" for name in ACCELERATORS), "a1", "gpu-x", "gpu-y", "a2-old", "hw/missing", "flops/p1"]
    )


def flop(rng: random.Random, name: str) -> str:
    lines = [
        f"id: flops/{name}",
        "kind: flop",
        "category: memory-bandwidth",
        f"description: See [[{rng.choice(FACTS)}]] and [[{hardware_ref(rng)}]].{rng.choice(PRODUCTS)}",
    ]
    if rng.random() < 0.8:
        lines.append("hardware_parameters:")
        for _ in range(rng.randint(1, 2)):
            lines += [
                f"  - parameter: {rng.choice(PARAMETERS)}",
                "    effect: It moves.",
                f"    basis: {rng.choice(BASES)}",
                f"    values_for: [{hardware_ref(rng)}]",
                *(["    sources: [src/s]"] if rng.random() < 0.6 else []),
            ]
    if rng.random() < 0.5:
        lines += ["formulas:", *formula(rng, "own")]
    return "\n".join(lines) + "\n"


def formula(rng: random.Random, formula_id: str) -> list[str]:
    lines = [f"  - id: {formula_id}"]
    if rng.random() < 0.4:
        lines.append(f"    title: {rng.choice(['Cost', 'Time per step'])}")  # shown in the labels of links to it
    if rng.random() < 0.35:
        target = rng.choice(
            [*(f"facts/{name}" for name in FACTS), *(f"flops/{name}" for name in FLOPS), "facts/nothing"]
        )
        lines.append(f"    ref: {target}#{rng.choice(['x', 'own', 'y'])}")
    else:
        expr = rng.choice(
            ["hw.memory_bandwidth * 2 s", "B * 2", "hw.peak_bf16_dense / hw.memory_bandwidth", "B +", "hw.nothing"]
        )
        lines.append(f'    expr: "{expr}"')
        # '1' quoted: a unit is text, the number 1 is none; [TB] is no text: told wrong, left out of the model
        unit = rng.choice(["TB", "'1'", "FLOP/byte", "[TB]"])
        lines.append(f"    unit: {unit}")
        lines.append(f"    inputs: {{B: {rng.choice(['[1, 2]', '3', '4 TB'])}}}")
    if rng.random() < 0.5:
        lines.append(f"    hardware: [{hardware_ref(rng)}, {hardware_ref(rng)}]")
    if rng.random() < 0.5:
        lines += [
            "    expect:",
            f"      - {{where: {{B: 1}}, hardware: {hardware_ref(rng)}, {claimed(rng)}}}",
        ]
    return lines


def claimed(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return f"value: {rng.choice([2, 8, 16])}"
    return f"measured: {rng.choice(['src/s#m', 'src/s#z', 's#m', 'hw/a1#m'])}"


def source(rng: random.Random) -> str:
    value = rng.choice(["2", "8", '"4 TB"', '"fast"', "17"])
    basis = rng.choice(["measured", "simulated", "bogus"])  # bogus: no basis, the measurement left out whole
    cited = rng.choice(["", "authors: [A. Author]\nyear: 2024\n", "authors: [B. Writer, C. Other]\n"])
    return (
        f"id: src/s\nkind: source\ntitle: S\n{cited}measurements:\n"
        f"  - {{id: {rng.choice(['m', 'z', 'n'])}, quantity: q, value: {value}, basis: {basis}, "
        f"where: {rng.choice(['p. 1', 'Table 2'])}}}\n"
    )


def fact(rng: random.Random, name: str) -> str:
    lines = [f"id: facts/{name}", "kind: fact", f"statement: As [[{rng.choice(FLOPS)}#own]] says."]
    if rng.random() < 0.3:
        lines.append(f"aliases: [{rng.choice(['f-old', 'gpu-x', name + '-was'])}]")
    lines += ["formulas:", *formula(rng, "x")]
    if rng.random() < 0.4:
        lines += formula(rng, rng.choice(["y", "x"]))
    return "\n".join(lines) + "\n"


def render(rng: random.Random, rel: str) -> str:
    if rng.random() < 0.06:
        return rng.choice(["id: [unclosed\n", "", "just text\n", "id: x\nkind: flop\n"])
    name = Path(rel).stem
    if rel.startswith("records/hw/"):
        return accelerator(rng, name)
    if rel.startswith("records/flops/"):
        return flop(rng, name)
    if rel.startswith("records/src/"):
        return source(rng)
    return fact(rng, name)


def initial(rng: random.Random) -> dict[str, str]:
    files = {"records/src/s.yaml": source(rng)}
    for name in ACCELERATORS:
        files[f"records/hw/{name}.yaml"] = accelerator(rng, name)
    for name in FLOPS:
        files[f"records/flops/{name}.yaml"] = flop(rng, name)
    for name in FACTS:
        files[f"records/facts/{name}.yaml"] = fact(rng, name)
    return files


def edit(rng: random.Random, root: Path) -> None:
    """One random edit: rewrite, remove, add or rename a record file, or change only its bytes."""
    files = sorted(path.relative_to(root).as_posix() for path in (root / "records").rglob("*.yaml"))
    rel = rng.choice(files)
    action = rng.random()
    if action < 0.6:
        (root / rel).write_text(render(rng, rel), encoding="utf-8")
    elif action < 0.7:
        with (root / rel).open("a", encoding="utf-8") as stream:
            stream.write("# a comment\n")
    elif action < 0.8 and len(files) > 4:
        (root / rel).unlink()
    elif action < 0.9:
        folder = rng.choice(["hw", "flops", "facts"])
        names = {"hw": ACCELERATORS, "flops": FLOPS, "facts": FACTS}[folder]
        new = f"records/{folder}/{rng.choice(names)}.yaml"
        (root / new).parent.mkdir(parents=True, exist_ok=True)
        (root / new).write_text(render(rng, new), encoding="utf-8")
    else:
        target = root / rel
        renamed = target.with_name(target.stem + "-moved.yaml")
        text = target.read_text(encoding="utf-8")
        target.unlink()
        renamed.write_text(text.replace(f"/{target.stem}\n", f"/{target.stem}-moved\n", 1), encoding="utf-8")


def edited(text: str, step: tuple, rel: str) -> str:
    """`text` of the file at `rel` after one random edit: `("type", where, length, new)` puts `new` in place of
    `length` characters at `where` (a fraction of the text), `("rewrite", seed)` renders the record anew."""
    if step[0] == "type":
        _, where, length, new = step
        start = round(where * len(text))
        return text[:start] + new + text[start + length :]
    return render(random.Random(step[1]), rel)
