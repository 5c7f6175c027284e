"""Novelty: the relevant shots a run found that no other team found (the TRECVID overview's novelty scores and
"sorted unique hits by team"), and the novelty score of novelty runs (`novelty_scores`).

A run *finds* a relevant (grade >= 1) qrels line when the (topic, doc) is in its top `max_results` (trec_eval order).
A found shot is *unique to a team* when no run of any other team found it; a run's unique hits are the shots it
found that are unique to its team (a team's runs may share them), a team's the union over its runs. The per-topic
counts and each team's hits sorted by unique hits (descending, then by name) are what the charts draw.

The novelty score (`novelty_scores`) scores TRECVID AVS's optional novelty runs (2019-2022). What the sources found
say, word for word:

- the 2022 AVS overview (Awad et al., TRECVID 2022 workshop slides, ../shared/seeds/trecvid-2022-avs-overview.txt):
  "Novelty (optional) run type to encourage retrieving non-common relevant shots easily found across systems";
  a chart "Sorted Unique Hits by Team", "7336 Unique Shots from 7 teams in their automatic & manually-assisted runs";
  a chart titled "Novelty Scores" (no text); "Only 1 Novelty system submitted. Better than common runs on novelty
  metric."; "Top scoring teams not necessary contributing a lot of unique true shots and vice-versa."; "About 36% of
  all hits are unique. 64% are common hits across the runs.";
- NIST's AVS run DTD of 2019 on (videoAdhocSearchRunResult.dtd, as held by the search tool's code corpus): "novelty -
  Novelty run flag ('N' Novelty run, 'C' Common run - not focused on unique shots)";
- NIST's AVS task pages (https://www-nlpir.nist.gov/projects/tv2019/avs.html ... tv2022/avs.html) and the openings of
  the 2019 and 2020 overviews say nothing more; the overviews' own definition of the metric could not be read.

So trecpool reads, per topic t and run r of team g (the reading these quotes support; the points they leave open are
marked):

1. a *hit* is a shot in r's top `max_results` (trec_eval order) judged relevant (grade >= 1);
2. a hit is *unique* when no run of another team returned the shot for t (hits are counted "by team": g's own runs
   may share it), over every run of the evaluation, automatic and manually assisted alike ("from 7 teams in their
   automatic & manually-assisted runs");
3. novelty(r, t) = r's unique hits; the run's score is the sum over the qrels' topics (open: no source found gives a
   per-topic weight or a normalisation, so there is none). Unjudged shots (no qrels line, or a stratified qrels'
   -1) never count.

Open: no source found states a penalty. `penalty` (0 by default, the reading above) is trecpool's own option,
not NIST's: it subtracts `penalty` per shot in r's top `max_results` judged not relevant (grade 0) that another team
returned too (a *common false* shot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.lines import index_lines
from app.evaluation.analyses.pooled_lines import RunBlocks, as_blocks, tally_blocks
from app.evaluation.fast.distinct import distinct
from app.evaluation.grading.grade_matrix import summarise_qrels
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.records import Qrels, RunTable


@dataclass(frozen=True)
class NoveltyResult:
    """Relevant shots found and found by no other team, per run, team and topic."""

    runs: list[str]
    run_teams: list[str]
    teams: list[str]  # sorted
    topics: list[str]  # the qrels' topics
    run_hits: np.ndarray  # int64 [n_run, n_topic] relevant shots found
    run_unique: np.ndarray  # int64 [n_run, n_topic] found, and no other team's run found them
    team_hits: np.ndarray  # int64 [n_team, n_topic]
    team_unique: np.ndarray  # int64 [n_team, n_topic]
    found: np.ndarray  # int64 [n_topic] distinct relevant shots found by some run
    unique: np.ndarray  # int64 [n_topic] of those, found by one team only
    relevant: np.ndarray  # int64 [n_topic] relevant qrels lines

    def sorted_teams(self) -> list[tuple[str, int, int]]:
        """(team, unique hits, hits), most unique hits first (then most hits, then name): the sorted chart."""
        unique, hits = self.team_unique.sum(axis=1).tolist(), self.team_hits.sum(axis=1).tolist()
        rows = list(zip(self.teams, unique, hits, strict=True))
        return sorted(rows, key=lambda row: (-row[1], -row[2], row[0]))

    def sorted_runs(self) -> list[tuple[str, str, int, int]]:
        """(run, team, unique hits, hits), most unique hits first (then most hits, then name)."""
        unique, hits = self.run_unique.sum(axis=1).tolist(), self.run_hits.sum(axis=1).tolist()
        rows = list(zip(self.runs, self.run_teams, unique, hits, strict=True))
        return sorted(rows, key=lambda row: (-row[2], -row[3], row[0]))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: runs and teams sorted by unique hits, and the per-topic totals."""
        found, unique = int(self.found.sum()), int(self.unique.sum())
        return {
            "found": found,
            "unique": unique,
            "unique_share": unique / found if found else None,
            "relevant": int(self.relevant.sum()),
            "runs": [{"run": r, "team": t, "unique": u, "hits": h} for r, t, u, h in self.sorted_runs()],
            "teams": [{"team": t, "unique": u, "hits": h} for t, u, h in self.sorted_teams()],
            "topics": [
                {"topic": topic, "relevant": int(r), "found": int(f), "unique": int(u)}
                for topic, r, f, u in zip(
                    self.topics, self.relevant.tolist(), self.found.tolist(), self.unique.tolist(), strict=True
                )
            ],
        }


def unique_relevant(
    qrels: Qrels,
    runs: Sequence[RunTable] | PreparedRuns | RunBlocks,
    teams: Sequence[str],
    *,
    max_results: int = 1000,
) -> NoveltyResult:
    """Relevant shots each run and team found, and those no other team found (teams: one per run).

    One pass over `runs`, which may be blocks of prepared runs (`pooled_lines.RunBlocks`): a relevant shot is named
    by its first relevant qrels line, so what one block finds adds to what the others did; only each run's relevant
    hits and the distinct (shot, team) couples are kept, not the runs."""
    source = as_blocks(runs, max_results)
    tally = UniqueRelevantTally(qrels, source.names, teams)
    tally_blocks(source, tally)
    return tally.result()


class UniqueRelevantTally:
    """`unique_relevant` fed a block of prepared runs at a time (`add`, in the runs' order)."""

    def __init__(self, qrels: Qrels, names: Sequence[str], teams: Sequence[str]) -> None:
        if len(teams) != len(names):
            raise ValueError("give one team per run")
        self.qrels, self.names, self.run_teams = qrels, list(names), [str(t) for t in teams]
        topic_names = np.asarray(qrels.topics).astype(str)
        self.topics: list[str] = np.unique(topic_names).tolist()
        self.line_topic = np.searchsorted(np.array(self.topics, dtype=str), topic_names)
        self.relevant_line = np.asarray(qrels.grades, dtype=np.int64) >= 1
        self.team_names = sorted(set(self.run_teams))
        self.team_of_run = np.searchsorted(np.array(self.team_names, dtype=str), np.asarray(teams, dtype=str))
        self.hit_runs, self.hit_shots = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        self.couples = np.zeros(0, dtype=np.int64)  # shot (first relevant line) * n_team + team, distinct
        self.start = 0

    def add(self, block: PreparedRuns) -> None:
        """Keep one block's runs' relevant hits and their (shot, team) couples."""
        n_team = max(len(self.team_names), 1)
        run, shot = _relevant_hits(block, self.qrels, self.relevant_line)
        run += self.start
        self.start += len(block.names)
        self.hit_runs.append(run)
        self.hit_shots.append(shot)
        self.couples = distinct(np.concatenate((self.couples, shot * n_team + self.team_of_run[run])))

    def result(self) -> NoveltyResult:
        """The hits of every run added, unique where one team alone found them."""
        n_run, n_topic, n_team = len(self.names), len(self.topics), max(len(self.team_names), 1)
        line_topic, couples = self.line_topic, self.couples
        hit_run, hit_shot = np.concatenate(self.hit_runs), np.concatenate(self.hit_shots)
        relevant = np.bincount(line_topic[self.relevant_line], minlength=n_topic)
        teams_per_shot = np.bincount(couples // n_team, minlength=len(self.relevant_line))
        unique_shot = teams_per_shot == 1
        hit_topic = line_topic[hit_shot]
        hit_unique = unique_shot[hit_shot]
        run_cells, team_cells = n_run * n_topic, len(self.team_names) * n_topic
        run_hits = np.bincount(hit_run * n_topic + hit_topic, minlength=run_cells)
        run_unique = np.bincount(hit_run[hit_unique] * n_topic + hit_topic[hit_unique], minlength=run_cells)
        couple_shot, couple_team = couples // n_team, couples % n_team
        couple_topic = line_topic[couple_shot]
        team_hits = np.bincount(couple_team * n_topic + couple_topic, minlength=team_cells)
        only = unique_shot[couple_shot]
        team_unique = np.bincount(couple_team[only] * n_topic + couple_topic[only], minlength=team_cells)
        found_shot = np.flatnonzero(teams_per_shot > 0)
        found = np.bincount(line_topic[found_shot], minlength=n_topic)
        unique = np.bincount(line_topic[found_shot[unique_shot[found_shot]]], minlength=n_topic)
        return NoveltyResult(
            runs=self.names,
            run_teams=self.run_teams,
            teams=self.team_names,
            topics=self.topics,
            run_hits=run_hits.reshape(n_run, n_topic).astype(np.int64),
            run_unique=run_unique.reshape(n_run, n_topic).astype(np.int64),
            team_hits=team_hits.reshape(len(self.team_names), n_topic).astype(np.int64),
            team_unique=team_unique.reshape(len(self.team_names), n_topic).astype(np.int64),
            found=found.astype(np.int64),
            unique=unique.astype(np.int64),
            relevant=relevant.astype(np.int64),
        )


def _relevant_hits(prepared: PreparedRuns, qrels: Qrels, relevant_line: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(run, shot) of each relevant shot a block's run ranks (a run ranks a (topic, doc) once), the shot named by
    the first relevant qrels line of its (topic, doc)."""
    index = index_lines(prepared, qrels)
    none = np.iinfo(np.int64).max
    first = np.full(len(prepared.pair_topic) + 1, none, dtype=np.int64)  # the last slot pads
    lines = np.flatnonzero(relevant_line & (index.line_pair >= 0))
    np.minimum.at(first, index.line_pair[lines], lines)
    entries = prepared.pairs.reshape(-1)
    at = np.flatnonzero(entries >= 0)
    shot = first[entries[at]]
    hit = shot < none
    per_run = max(int(np.prod(prepared.pairs.shape[1:])), 1)
    return (at[hit] // per_run).astype(np.int64), shot[hit]


@dataclass(frozen=True)
class NoveltyScores:
    """The novelty score of every run per topic (unique hits, less the optional penalty), with its two counts (see the
    module's docstring)."""

    runs: list[str]
    run_teams: list[str]
    topics: list[str]  # the qrels' topics
    unique_true: np.ndarray  # int64 [n_run, n_topic] relevant shots in the run's top k no other team returned
    common_false: np.ndarray  # int64 [n_run, n_topic] shots judged not relevant that another team returned too
    penalty: float  # per common false shot: 0 unless asked (no source found states one)

    @property
    def per_topic(self) -> np.ndarray:
        """float64 [n_run, n_topic]: unique true shots - penalty x common false shots."""
        return np.asarray(self.unique_true - self.penalty * self.common_false, dtype=np.float64)

    @property
    def total(self) -> np.ndarray:
        """float64 [n_run]: the novelty score, summed over the qrels' topics."""
        return np.asarray(self.per_topic.sum(axis=1), dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: each run's score and counts, best score first (then by name), and the penalty."""
        rows: list[dict[str, Any]] = [
            {
                "run": run,
                "team": team,
                "score": float(score),
                "unique_true": int(unique),
                "common_false": int(common),
            }
            for run, team, score, unique, common in zip(
                self.runs,
                self.run_teams,
                self.total.tolist(),
                self.unique_true.sum(axis=1).tolist(),
                self.common_false.sum(axis=1).tolist(),
                strict=True,
            )
        ]
        rows.sort(key=lambda row: (-float(row["score"]), str(row["run"])))
        return {"penalty": self.penalty, "topics": len(self.topics), "runs": rows}


def novelty_scores(
    qrels: Qrels,
    runs: Sequence[RunTable] | PreparedRuns | RunBlocks,
    teams: Sequence[str],
    *,
    max_results: int = 1000,
    penalty: float = 0.0,
) -> NoveltyScores:
    """Every run's TRECVID novelty score per qrels topic (teams: one per run).

    One pass over `runs`, which may be blocks of prepared runs (`pooled_lines.RunBlocks`): a judged shot is named by
    the qrels line that judges its (topic, doc) in every block alike, so only each run's judged hits (8 bytes each)
    and the distinct (shot, team) couples are kept, not the runs; blocks give the numbers of one block."""
    source = as_blocks(runs, max_results)
    tally = NoveltyScoresTally(qrels, source.names, teams, penalty=penalty)
    tally_blocks(source, tally)
    return tally.result()


class NoveltyScoresTally:
    """`novelty_scores` fed a block of prepared runs at a time (`add`, in the runs' order)."""

    def __init__(self, qrels: Qrels, names: Sequence[str], teams: Sequence[str], *, penalty: float = 0.0) -> None:
        if not np.isfinite(penalty) or penalty < 0:
            raise ValueError("the penalty must be a finite number >= 0")
        if len(teams) != len(names):
            raise ValueError("give one team per run")
        self.qrels, self.names, self.run_teams, self.penalty = qrels, list(names), [str(t) for t in teams], penalty
        judged_topics, line_topic, _ = summarise_qrels(qrels)
        self.topics, self.line_topic = list(judged_topics.topics), np.asarray(line_topic, dtype=np.int64)
        self.grades = np.asarray(qrels.grades, dtype=np.int64)
        team_names = sorted(set(self.run_teams))
        self.n_team = max(len(team_names), 1)
        self.team_of_run = np.searchsorted(np.array(team_names, dtype=str), np.asarray(teams, dtype=str))
        self.hit_runs, self.hit_lines = [np.zeros(0, np.int32)], [np.zeros(0, np.int32)]
        self.couples = np.zeros(0, dtype=np.int64)  # line * n_team + team, distinct
        self.start = 0

    def add(self, block: PreparedRuns) -> None:
        """Keep one block's runs' judged hits and their (shot, team) couples."""
        run, line = _judged_hits(block, self.qrels, self.grades)
        run += self.start
        self.start += len(block.names)
        self.hit_runs.append(run.astype(np.int32))
        self.hit_lines.append(line.astype(np.int32))
        self.couples = distinct(np.concatenate((self.couples, line * self.n_team + self.team_of_run[run])))

    def result(self) -> NoveltyScores:
        """The scores of every run added."""
        n_run, n_topic = len(self.names), len(self.topics)
        hit_run = np.concatenate(self.hit_runs).astype(np.int64)
        hit_line = np.concatenate(self.hit_lines).astype(np.int64)
        teams_per_line = np.bincount(self.couples // self.n_team, minlength=len(self.grades))
        unique = teams_per_line[hit_line] == 1
        grade = self.grades[hit_line]
        key = hit_run * n_topic + self.line_topic[hit_line]
        cells = n_run * n_topic
        unique_true = np.bincount(key[unique & (grade >= 1)], minlength=cells).reshape(n_run, n_topic)
        common_false = np.bincount(key[~unique & (grade == 0)], minlength=cells).reshape(n_run, n_topic)
        return NoveltyScores(
            runs=self.names,
            run_teams=self.run_teams,
            topics=self.topics,
            unique_true=unique_true.astype(np.int64),
            common_false=common_false.astype(np.int64),
            penalty=float(self.penalty),
        )


def _judged_hits(prepared: PreparedRuns, qrels: Qrels, grades: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(run, line) of each judged shot (grade >= 0) a block's run ranks (a run ranks a (topic, doc) once), the shot
    named by the qrels line judging its (topic, doc), as `lines.index_lines` picks it."""
    index = index_lines(prepared, qrels)
    entries = prepared.pairs.reshape(-1)
    at = np.flatnonzero(entries >= 0)
    line = index.pair_line[entries[at]]
    hit = line >= 0
    hit[hit] = grades[line[hit]] >= 0
    per_run = max(int(np.prod(prepared.pairs.shape[1:])), 1)
    return (at[hit] // per_run).astype(np.int64), line[hit]
