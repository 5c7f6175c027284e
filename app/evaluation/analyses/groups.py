"""The run_groups.tsv file: which team submitted each run, whether it contributed to the pool, and its run type."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

_TRUE = {"yes", "y", "true", "1"}
_FALSE = {"no", "n", "false", "0"}


@dataclass(frozen=True)
class RunGroups:
    """Per run name: team (group), pooled flag (None when the file has no such column) and run type."""

    team: dict[str, str]
    pooled: dict[str, bool] | None
    runtype: dict[str, str] | None

    def pooled_runs(self, runs: list[str]) -> list[str] | None:
        """The runs among `runs` that contributed to the pool; None (all) if the file does not say."""
        if self.pooled is None:
            return None
        return [r for r in runs if self.pooled.get(r, False)]

    def units(self, runs: list[str], by: str) -> list[str]:
        """The unit (run, group or type) of each run; a run missing from the file is an error."""
        if by == "run":
            return list(runs)
        table = self.team if by == "group" else self.runtype
        if table is None:
            raise ValueError(f"the groups file has no column for --by {by}")
        missing = [r for r in runs if r not in table]
        if missing:
            raise ValueError(f"runs missing from the groups file: {', '.join(missing)}")
        return [table[r] for r in runs]


def parse_run_groups(text: str) -> RunGroups:
    """Parse a TSV with a header: run, team (or group), optional contributed_judgments (yes/no), optional runtype."""
    rows = list(csv.reader(io.StringIO(text), delimiter="\t"))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise ValueError("groups file: empty")
    header = [h.strip().lower() for h in rows[0]]

    def column(*names: str) -> int | None:
        return next((header.index(n) for n in names if n in header), None)

    run_col = column("run", "run_id", "runid", "tag")
    team_col = column("team", "group")
    pool_col = column("contributed_judgments", "contributed", "pooled", "judged")
    type_col = column("runtype", "run_type", "type")
    if run_col is None or team_col is None:
        raise ValueError("groups file: the header needs 'run' and 'team' (or 'group') columns")
    team: dict[str, str] = {}
    pooled: dict[str, bool] | None = {} if pool_col is not None else None
    runtype: dict[str, str] | None = {} if type_col is not None else None
    for number, row in enumerate(rows[1:], start=2):
        cells = [c.strip() for c in row]
        needed = max(c for c in (run_col, team_col, pool_col, type_col) if c is not None)
        if len(cells) <= needed:
            raise ValueError(f"groups file line {number}: expected {needed + 1} columns, got {len(cells)}")
        name = cells[run_col]
        if name in team:
            raise ValueError(f"groups file line {number}: run {name!r} listed twice")
        team[name] = cells[team_col]
        if pooled is not None and pool_col is not None:
            flag = cells[pool_col].lower()
            if flag not in _TRUE | _FALSE:
                raise ValueError(f"groups file line {number}: contributed must be yes or no, not {cells[pool_col]!r}")
            pooled[name] = flag in _TRUE
        if runtype is not None and type_col is not None:
            runtype[name] = cells[type_col]
    return RunGroups(team=team, pooled=pooled, runtype=runtype)


def read_run_groups(path: str | Path) -> RunGroups:
    """Read a run_groups.tsv file."""
    return parse_run_groups(Path(path).read_text(encoding="utf-8"))
