"""The results of one benchmark run, as `results.json` and as the `RESULTS.md` table.

Every number is a `Row`: what, ours, the reference it is compared with, the ratio
ours / reference, the target if there is one, and what limits the number.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

UNIT_FORMATS = {
    "ms": "{:.1f} ms",
    "s": "{:.2f} s",
    "cycles/s": "{:.2f}/s",
    "KB": "{:.1f} KB",
    "MB": "{:.1f} MB",
}


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    section: str
    what: str
    unit: str
    ours: float | None
    reference: float | None
    limit: str
    target: str = ""

    @property
    def ratio(self) -> float | None:
        """The ratio ours / reference, when both were measured."""
        if self.ours is None or not self.reference:
            return None
        return self.ours / self.reference

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with the ratio."""
        return {**asdict(self), "ratio": self.ratio}


@dataclass
class Section:
    """What one benchmark section measured: its rows and the raw figures behind them."""

    name: str
    title: str
    reference: str
    rows: list[Row] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Results:
    """Everything one run produced, including the sections that failed."""

    meta: dict[str, Any]
    sections: list[Section] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def in_order(self) -> list[Section]:
        """The sections in the order of their numbered titles, whatever order they ran in."""
        return sorted(self.sections, key=lambda section: section.title)

    @property
    def ok(self) -> bool:
        """True when every section ran."""
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        """The whole run, JSON-ready."""
        return {
            "meta": self.meta,
            "rows": [row.as_dict() for s in self.in_order for row in s.rows],
            "sections": {
                s.name: {"title": s.title, "reference": s.reference, "details": s.details, "notes": s.notes}
                for s in self.in_order
            },
            "errors": self.errors,
        }

    @classmethod
    def load(cls, out_dir: Path) -> Results | None:
        """The run `results.json` in `out_dir` holds (None when there is none)."""
        path = out_dir / "results.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        rows = [Row(**{k: v for k, v in row.items() if k != "ratio"}) for row in data["rows"]]
        sections = [
            Section(
                name,
                found["title"],
                found["reference"],
                [row for row in rows if row.section == name],
                found["details"],
                found["notes"],
            )
            for name, found in data["sections"].items()
        ]
        return cls(meta=data["meta"], sections=sections, errors=data["errors"])

    def with_rerun(self, rerun: Results) -> Results:
        """This run with `rerun`'s sections (run alone, `--only`) in place of its own of the same names.

        The meta stays this run's; each rerun section's date, duration, load and sizes go under
        `meta["reruns"]`, and RESULTS.md says so.
        """
        names = {s.name for s in rerun.sections} | set(rerun.errors)
        machine = rerun.meta.get("machine", {})
        when = {
            "date": rerun.meta.get("date"),
            "duration_s": rerun.meta.get("duration_s"),
            "revision": machine.get("revision"),
            "cpu": f"{machine['cpu']}, {machine.get('cores')} cores" if machine.get("cpu") else None,
            "load average at start": machine.get("load average at start"),
            "load average at end": machine.get("load average at end"),
            "sizes": rerun.meta.get("sizes"),
        }
        reruns = {**self.meta.get("reruns", {}), **dict.fromkeys(sorted(names), when)}
        return Results(
            meta={**self.meta, "reruns": reruns},
            sections=[s for s in self.sections if s.name not in names] + rerun.sections,
            errors={**{k: v for k, v in self.errors.items() if k not in names}, **rerun.errors},
        )

    def write(self, out_dir: Path) -> None:
        """Write `results.json` and `RESULTS.md` into `out_dir`."""
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "results.json").write_text(json.dumps(self.as_dict(), indent=2, default=str) + "\n")
        (out_dir / "RESULTS.md").write_text(render_markdown(self))


def render_markdown(results: Results) -> str:
    """RESULTS.md: the table first, then what each section compared and its notes."""
    meta = results.meta
    machine = meta["machine"]
    lines = [
        "# Benchmarks: the cost of a human in the loop, side by side",
        "",
        (
            f"Written by `make bench` on {meta['date']} in {meta['duration_s'] / 60:.1f} min. "
            "**ratio = ours / reference**, both measured in the same run on the same machine, "
            "interleaved, so the ratio holds on a noisy machine better than either number. Lower is "
            "better except for throughput."
        ),
        "",
        (
            f"Load average (1, 5, 15 min): {machine.get('load average at start', '?')} at the start, "
            f"{machine.get('load average at end', '?')} at the end, on {machine['cores']} cores: other "
            "work on the machine slows the absolute numbers more than the ratios."
        ),
        "",
        render_rows([r for s in results.in_order for r in s.rows]),
    ]
    for name, rerun in meta.get("reruns", {}).items():
        lines += [
            "",
            (
                f"Section `{name}` was run alone (`python -m bench --only {name}`) on {rerun['date']} in "
                f"{(rerun['duration_s'] or 0) / 60:.1f} min at revision {rerun['revision']}"
                + (f" on {rerun['cpu']}" if rerun.get("cpu") else "")
                + ", load average "
                f"{rerun['load average at start']} at its start and {rerun['load average at end']} at its "
                "end; the other sections are from the run above."
            ),
        ]
    if results.errors:
        lines += ["", "## Not measured in this run", ""]
        lines += [f"- **{name}**: {message}" for name, message in results.errors.items()]
    lines += ["", "## What was compared", ""]
    for section in results.in_order:
        lines += [f"### {section.title}", "", f"Reference: {section.reference}", ""]
        lines += [f"- {note}" for note in section.notes]
        lines.append("")
    lines += ["## Machine, versions, sizes", "", "| | |", "| --- | --- |"]
    lines += [f"| {key} | {value} |" for key, value in meta["machine"].items()]
    lines += [f"| {name} | {version} |" for name, version in meta["versions"].items()]
    lines += [
        f"| sizes | {', '.join(f'{k}={v}' for k, v in meta['sizes'].items())} |",
        "",
        "Raw figures (every sample summary, byte counts, fill rates) are in `bench/results.json`.",
        "",
    ]
    return "\n".join(lines)


def render_rows(rows: list[Row]) -> str:
    """The table of `rows`, header included (one line per row)."""
    lines = [
        "| what | ours | reference | ratio | target | what limits it |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {r.what} | {_number(r.ours, r.unit)} | {_number(r.reference, r.unit)} | "
        f"{_ratio(r.ratio)} | {r.target or '—'} | {r.limit} |"
        for r in rows
    ]
    return "\n".join(lines)


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return UNIT_FORMATS.get(unit, "{:.3g} " + unit).format(value)


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"**{value:.2f}x**"
