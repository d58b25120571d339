"""gemm.py's results: the rows, their ratios, the table, the JSON and the PNG plot.

Needs neither torch nor a GPU (tests/benchmarks/test_gemm_report.py runs it on
fake rows). The plot uses matplotlib, which the GPU machine's image has; where
matplotlib is missing, `write_png` says so and writes nothing.

A ratio is a speed ratio measured in the same run: the reference's time over
the row's time, so 0.85 means the row runs at 85% of the reference's speed.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

FAMILIES = ("cutec", "CuTe", "Triton", "cuBLAS")  # table order
DTYPE_ORDER = ("f32", "tf32", "f16", "f16f32", "bf16f32")
BAD = ("wrong", "error")  # statuses that fail the run; "n/a" and "rejected" do not


@dataclass
class Row:
    """One implementation on one problem. status: ok | wrong | error | n/a | rejected."""

    family: str
    name: str
    dtype: str
    layout: str
    m: int
    n: int
    k: int
    status: str = "ok"
    note: str = ""
    rel_err: float | None = None
    ms: float | None = None
    counterpart: str | None = None  # cutec rows: the CuTe tutorial it transcribes
    ratios: dict[str, float] = field(default_factory=dict)

    @property
    def problem(self) -> tuple:
        return (self.dtype, self.layout, self.m, self.n, self.k)

    @property
    def tflops(self) -> float | None:
        return 2 * self.m * self.n * self.k / self.ms / 1e9 if self.ms else None

    @property
    def label(self) -> str:
        return f"{self.family} {self.name}" if self.family != self.name else self.family


def shape_label(m: int, n: int, k: int) -> str:
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def add_ratios(rows: list[Row]) -> None:
    """Fill each row's ratios: vs cuBLAS and Triton on its problem, vs its CuTe counterpart."""
    ok = {(r.family, r.name, r.problem): r for r in rows if r.status == "ok"}
    by_family = {(r.family, r.problem): r for r in rows if r.status == "ok"}
    for r in rows:
        r.ratios = {}
        if r.status != "ok":
            continue
        refs = {"cuBLAS": by_family.get(("cuBLAS", r.problem))}
        if r.family == "cutec":
            refs["Triton"] = by_family.get(("Triton", r.problem))
            refs["CuTe"] = ok.get(("CuTe", r.counterpart, r.problem)) if r.counterpart else None
        for key, ref in refs.items():
            if ref is not None and ref is not r:
                r.ratios[key] = ref.ms / r.ms


def _sort_key(r: Row, shapes: list[tuple[int, int, int]]) -> tuple:
    shape = (r.m, r.n, r.k)
    return (
        DTYPE_ORDER.index(r.dtype) if r.dtype in DTYPE_ORDER else len(DTYPE_ORDER),
        shapes.index(shape) if shape in shapes else len(shapes),
        r.layout,
        FAMILIES.index(r.family) if r.family in FAMILIES else len(FAMILIES),
        r.name,
    )


def ordered(rows: list[Row]) -> list[Row]:
    shapes = list(dict.fromkeys((r.m, r.n, r.k) for r in rows))
    return sorted(rows, key=lambda r: _sort_key(r, shapes))


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= width else text[: width - 1] + "…"


def table(rows: list[Row]) -> str:
    """The Markdown table of all rows, problems grouped, implementations in FAMILIES order."""
    head = ("dtype", "layout", "M×N×K", "implementation", "rel err", "ms", "TFLOP/s",
            "×cuBLAS", "×Triton", "×CuTe")  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in ordered(rows):
        cells = [r.dtype, r.layout, shape_label(r.m, r.n, r.k), r.label]
        if r.status == "ok":
            cells += [f"{r.rel_err:.1e}", f"{r.ms:.3f}", f"{r.tflops:.1f}"]
            cells += [f"{r.ratios[key]:.2f}" if key in r.ratios else "" for key in
                      ("cuBLAS", "Triton", "CuTe")]  # fmt: skip
        else:
            err = f" (rel err {r.rel_err:.1e})" if r.rel_err is not None else ""
            cells += [f"**{r.status}**{err}: {_short(r.note)}", "", "", "", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# Issue 11's targets at 4096³, always reported: (cutec kernel, layout, reference
# family, reference name, goal).
SIMT_TARGETS = (
    ("sgemm_2.sgemm_nt", "NT", "cuBLAS", "cuBLAS", 0.85),
    ("sgemm_2.sgemm_nt", "NT", "CuTe", "sgemm_2", 1.0),
    ("sgemm_2.sgemm_tn", "TN", "CuTe", "sgemm_2", 1.0),
    ("sgemm_1.sgemm_nt", "NT", "CuTe", "sgemm_1", 1.0),
    ("sgemm_1.sgemm_tn", "TN", "CuTe", "sgemm_1", 1.0),
)
# Issues 13's and 29's targets at 4096³ and 8192³, reported for the kernels a run
# measured: (cutec kernel, dtype, layout, reference family, reference name, goal).
# Issue 29 (gemm_auto's Hopper body, on an H100/H200): 16-bit operands with f32
# accumulation >= 0.90x cuBLAS in every majorness and faster than Triton's tutorial
# matmul where that is below 0.90x (TN, NN); tf32 TN >= 0.85x; tf32 NT/NN/TT no slower
# than before it (0.55-0.81x, all three on mma.sync then; NN and TT run on wgmma now).
TENSOR_CORE_TARGETS = (
    ("sgemm_pipelined.sgemm_nt", "f32", "NT", "cuBLAS", "cuBLAS", 0.90),
    ("sgemm_pipelined.sgemm_tn", "f32", "TN", "cuBLAS", "cuBLAS", 0.90),
    ("sgemm_sm80.hgemm_tn", "f16", "TN", "CuTe", "sgemm_sm80", 1.0),
    ("gemm_auto.gemm_tn", "f16", "TN", "CuTe", "sgemm_sm80", 1.0),
    *((f"gemm_auto.gemm_{lay.lower()}", dtype, lay, "cuBLAS", "cuBLAS", 0.90)
      for dtype in ("f16f32", "bf16f32") for lay in ("NT", "TN", "NN", "TT")),
    *((f"gemm_auto.gemm_{lay.lower()}", dtype, lay, "Triton", "Triton", 1.0)
      for dtype in ("f16f32", "bf16f32") for lay in ("TN", "NN")),
    ("gemm_auto.gemm_tn", "tf32", "TN", "cuBLAS", "cuBLAS", 0.85),
    *((f"gemm_auto.gemm_{lay.lower()}", "tf32", lay, "cuBLAS", "cuBLAS", 0.55)
      for lay in ("NT", "NN", "TT")),
)  # fmt: skip


def _target_line(ours: Row | None, ref: Row | None, what: str, goal: float) -> str:
    if ours is None or ref is None:
        return f"{what}: not measured"
    ratio = ref.ms / ours.ms
    return f"{what}: {ratio:.2f} ({'met' if ratio >= goal else 'NOT met'})"


def target_lines(rows: list[Row], size: int = 4096) -> list[str]:
    """The issues' speed targets as measured in this run: issue 11's at size³ (all of
    them), issue 13's at 4096³ and 8192³ for the kernels the run measured."""
    ok = [r for r in rows if r.status == "ok"]
    at = {(r.family, r.name, r.dtype, r.layout, r.m, r.n, r.k): r for r in ok}
    out = []
    for name, layout, family, ref_name, goal in SIMT_TARGETS:
        ours = at.get(("cutec", name, "f32", layout, size, size, size))
        ref = at.get((family, ref_name, "f32", layout, size, size, size))
        ref_label = family if family == "cuBLAS" else f"{family} {ref_name}"
        out.append(_target_line(ours, ref, f"{name} {layout} >= {goal:.2f}x {ref_label}", goal))
    measured = {(r.name, r.dtype, r.layout) for r in rows if r.family == "cutec"}
    for name, dtype, layout, family, ref_name, goal in TENSOR_CORE_TARGETS:
        if (name, dtype, layout) not in measured:
            continue
        for n in (4096, 8192):
            ours = at.get(("cutec", name, dtype, layout, n, n, n))
            ref = at.get((family, ref_name, dtype, layout, n, n, n))
            ref_label = family if ref_name == family else f"{family} {ref_name}"
            what = f"{name} {dtype} {layout} {n}³ >= {goal:.2f}x {ref_label}"
            out.append(_target_line(ours, ref, what, goal))
    return out


def to_json(rows: list[Row], meta: dict, host: dict) -> str:
    items = []
    for r in ordered(rows):
        item = asdict(r)
        item["tflops"] = r.tflops
        items.append(item)
    return json.dumps({"meta": meta, "host": host, "rows": items}, indent=1, default=str)


def from_json(text: str) -> tuple[list[Row], dict, dict]:
    data = json.loads(text)
    rows = []
    for item in data["rows"]:
        item = dict(item)
        item.pop("tflops", None)
        rows.append(Row(**item))
    return rows, data["meta"], data["host"]


def plot_series(rows: list[Row]) -> dict[str, tuple[list[str], dict[str, list[float]]]]:
    """Per dtype: the problem labels (x, in run order) and TFLOP/s per implementation (NaN gaps)."""
    series: dict[str, tuple[list[str], dict[str, list[float]]]] = {}
    for dtype in dict.fromkeys(r.dtype for r in ordered(rows)):
        mine = [r for r in ordered(rows) if r.dtype == dtype]
        shapes = list(dict.fromkeys((r.m, r.n, r.k) for r in mine))
        lines: dict[str, list[float]] = {}
        for r in mine:
            key = f"{r.label} {r.layout}"
            ys = lines.setdefault(key, [math.nan] * len(shapes))
            if r.status == "ok":
                ys[shapes.index((r.m, r.n, r.k))] = r.tflops
        lines = {key: ys for key, ys in lines.items() if not all(map(math.isnan, ys))}
        series[dtype] = ([shape_label(*s) for s in shapes], lines)
    return series


def write_png(rows: list[Row], path: Path, title: str) -> str:
    """Draw TFLOP/s per problem, one line per implementation, one panel per dtype."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no PNG written"
    series = {d: s for d, s in plot_series(rows).items() if s[1]}
    if not series:
        return "no timed rows: no PNG written"
    fig, axes = plt.subplots(len(series), 1, figsize=(11, 4.8 * len(series)), squeeze=False)
    styles = {"cutec": "-", "CuTe": "--", "Triton": "-.", "cuBLAS": ":"}
    for ax, (dtype, (xs, lines)) in zip(axes[:, 0], series.items(), strict=True):
        # 20 distinct colours: with matplotlib's default 10, two implementations share one.
        ax.set_prop_cycle(color=plt.cm.tab20.colors)
        for key, ys in lines.items():
            family = key.split(" ", 1)[0]
            ax.plot(range(len(xs)), ys, styles.get(family, "-"), marker="o", ms=4, label=key)
        ax.set_xticks(range(len(xs)), xs, rotation=20, ha="right")
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"{dtype} GEMM")
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"wrote {path}"


def fake_rows() -> list[Row]:
    """Made-up rows covering every status, for --dry-run and the tests (never reported)."""
    rows = []
    shapes = [(1024, 1024, 1024), (4096, 4096, 4096), (1001, 999, 1003)]
    impls = [("cutec", "sgemm_2.sgemm_nt", "sgemm_2"), ("CuTe", "sgemm_2", None),
             ("Triton", "Triton", None), ("cuBLAS", "cuBLAS", None)]  # fmt: skip
    for m, n, k in shapes:
        for j, (family, name, counterpart) in enumerate(impls):
            row = Row(family, name, "f32", "NT", m, n, k, counterpart=counterpart)
            if (m, n, k) == shapes[2] and family == "CuTe":
                row.status, row.note = "n/a", "needs M % 128, N % 128, K % 8 == 0"
            elif (m, n, k) == shapes[2] and family == "cutec":
                row.status, row.note = "rejected", "ValueError: M = 1001 is not a multiple of 4"
            else:
                # 40 TFLOP/s for the first implementation, each next one 10% slower
                row.rel_err, row.ms = 1e-7 * (j + 1), 2 * m * n * k / 40e9 * (1 + 0.1 * j)
            rows.append(row)
    rows.append(Row("cutec", "wgmma_sm90.hgemm_nt", "f16", "NT", 4096, 4096, 4096,
                    status="error", note="CompileError: wgmma not lowered"))  # fmt: skip
    rows.append(Row("cuBLAS", "cuBLAS", "f16", "NT", 4096, 4096, 4096, rel_err=3e-4, ms=0.2))
    add_ratios(rows)
    return rows
