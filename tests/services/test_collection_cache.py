"""A collection's ids kept in memory per collection version: read once, read again after any change to its rows (by
any writer, even plain SQL), a few collections at most; and the upload check on them names the same lines as ever."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text

from app.evaluation.fast.hashing import code_matrix
from app.services import collection, run_files
from app.services.errors import InvalidInput
from app.services.run_files import KnownIds
from tests.services.conftest import ORGANISER

REFERENCE = b"a v1 0 1\nb v1 1 2\nc v2 0 1\n"
INSERT = 'INSERT INTO collection_items (campaign_id, shot_id, video_id, start, "end") VALUES (:c, :s, :v, 0, 1)'


def upload_collection(campaign, data: bytes) -> None:  # type: ignore[no-untyped-def]
    """Replace the campaign's collection and commit."""
    collection.replace_collection(
        campaign.session, ORGANISER, campaign.id, data, media_url_template=None, max_errors=10
    )
    campaign.session.commit()


def known(ids: list[str]) -> KnownIds:
    """Known ids of a list of strings, as the cache builds them."""
    codes = code_matrix(np.array(ids, dtype=str))
    assert codes is not None
    return KnownIds.of_codes(codes)


def absent(of: KnownIds, ids: list[str]) -> list[str]:
    """The ids `of` lacks."""
    values = np.array(ids, dtype=str)
    return values[of.absent(values, run_files.id_hashes(values))].tolist()


def test_ids_are_read_once_per_version_and_again_after_a_change(make_campaign):
    campaign = make_campaign()
    session = campaign.session
    upload_collection(campaign, REFERENCE)
    first_version = collection.collection_version(session, campaign.id)
    first = collection.known_ids(session, campaign.id, "shot")
    assert collection.known_ids(session, campaign.id, "shot") is first  # kept, not read again
    assert (campaign.id, "shot", first_version) in collection.cached_collections()
    assert absent(first, ["a", "b", "c", "d", "v1"]) == ["d", "v1"]
    videos = collection.known_ids(session, campaign.id, "video")
    assert len(videos.hashes) == 2 and absent(videos, ["v1", "v2", "v3", "a"]) == ["v3", "a"]

    upload_collection(campaign, b"a v1 0 1\nd v3 0 1\n")
    assert collection.collection_version(session, campaign.id) != first_version
    second = collection.known_ids(session, campaign.id, "shot")
    assert second is not first and absent(second, ["a", "b", "c", "d"]) == ["b", "c"]


@pytest.mark.parametrize(
    "statement",
    [
        INSERT.replace(":s, :v", "'z', 'v9'"),
        "UPDATE collection_items SET shot_id = 'z' WHERE campaign_id = :c AND shot_id = 'a'",
        "DELETE FROM collection_items WHERE campaign_id = :c AND shot_id = 'a'",
    ],
)
def test_every_statement_on_the_rows_draws_a_new_version(make_campaign, statement):
    campaign, other = make_campaign(), make_campaign()
    session = campaign.session
    upload_collection(campaign, REFERENCE)
    upload_collection(other, REFERENCE)
    before = collection.known_ids(session, campaign.id, "shot")
    versions = {c.id: collection.collection_version(session, c.id) for c in (campaign, other)}
    session.execute(text(statement), {"c": campaign.id})
    session.commit()
    assert collection.collection_version(session, campaign.id) > versions[campaign.id]
    assert collection.collection_version(session, other.id) == versions[other.id]  # another campaign's: untouched
    after = collection.known_ids(session, campaign.id, "shot")
    expected = {"INSERT": [], "UPDATE": ["a"], "DELETE": ["a"]}[statement.split()[0]]
    assert after is not before and absent(after, ["a", "b", "c"]) == expected
    assert absent(after, ["z"]) == ([] if statement.split()[0] in ("INSERT", "UPDATE") else ["z"])


def test_a_rolled_back_change_never_lends_its_version_to_another(make_campaign):
    campaign = make_campaign()
    session = campaign.session
    upload_collection(campaign, REFERENCE)
    collection.replace_collection(session, ORGANISER, campaign.id, b"x v1 0 1\n", media_url_template=None, max_errors=9)
    rolled_back = collection.collection_version(session, campaign.id)
    assert absent(collection.known_ids(session, campaign.id, "shot"), ["x", "a"]) == ["a"]  # kept under that version
    session.rollback()
    upload_collection(campaign, b"y v1 0 1\n")
    assert collection.collection_version(session, campaign.id) != rolled_back
    assert absent(collection.known_ids(session, campaign.id, "shot"), ["x", "y"]) == ["x"]


def test_a_bump_is_not_an_audit_event_of_its_own(make_campaign):
    campaign = make_campaign()
    session = campaign.session
    upload_collection(campaign, REFERENCE)
    events = session.execute(
        text(
            "SELECT table_name, action FROM audit_events WHERE campaign_id = :c AND table_name IN "
            "('campaigns', 'collection_items') ORDER BY id"
        ),
        {"c": campaign.id},
    ).all()
    assert events[-1] == ("collection_items", "insert")
    assert [e for e in events if e[0] == "campaigns"] == [("campaigns", "insert"), ("campaigns", "update")]


def test_only_a_few_collections_are_kept(make_campaign):
    made = [make_campaign() for _ in range(collection.CACHED_COLLECTIONS + 1)]
    for campaign in made:
        upload_collection(campaign, REFERENCE)
        collection.known_ids(campaign.session, campaign.id, "shot")
    kept = {campaign for campaign, _, _ in collection.cached_collections()}
    assert len(collection.cached_collections()) == collection.CACHED_COLLECTIONS
    assert kept == {c.id for c in made[1:]}


def test_odd_ids_are_read_exactly(make_campaign):
    """Ids with white space, a backslash or beyond ASCII: read by the plain query, compared code point by code point."""
    campaign = make_campaign()
    session = campaign.session
    odd = ["a b", "back\\slash", "é1", "日本_1", "x"]
    for shot in odd:
        session.execute(text(INSERT), {"c": campaign.id, "s": shot, "v": "v"})
    session.commit()
    ids = collection.known_ids(session, campaign.id, "shot")
    assert ids.codes.dtype == np.uint16 and ids.nbytes == len(odd) * (8 + 2 * 10)
    assert absent(ids, [*odd, "a", "é", "日本_1x", "back\\slas", "x "]) == ["a", "é", "日本_1x", "back\\slas", "x "]


def test_ids_longer_or_shorter_than_every_known_id_are_absent() -> None:
    ids = known(["shot1_1", "shot1_22"])
    assert ids.codes.dtype == np.uint8 and ids.codes.shape == (2, 8)
    assert absent(ids, ["shot1_1", "shot1_22", "shot1_222", "shot1_", "s", "shot1_1\u0101"]) == [
        "shot1_222",
        "shot1_",
        "s",
        "shot1_1\u0101",
    ]
    assert absent(known([]), ["a"]) == ["a"]


def test_ids_sharing_a_hash_are_told_apart_by_their_code_points() -> None:
    """Hashes only propose: an id whose hash a known id has is found only if it is that id (or another known id of
    the same hash)."""
    codes = code_matrix(np.array(["p", "q", "r"], dtype=str))
    assert codes is not None
    shared = KnownIds(np.array([7, 7, 9], dtype=np.uint64), codes)  # p and q share hash 7
    values = np.array(["q", "p", "s", "r", "t"], dtype=str)
    hashes = np.array([7, 7, 7, 9, 8], dtype=np.uint64)  # s claims hash 7 without being p or q
    assert values[shared.absent(values, hashes)].tolist() == ["s", "t"]


def test_a_run_whose_ids_share_a_hash_is_grouped_by_its_strings() -> None:
    parsed = run_files.scan(b"1 Q0 b 1 2 t\n1 Q0 a 2 1 t\n2 Q0 b 1 1 t\n", "trec", max_errors=5)
    parsed.trec.derived["doc_hashes"] = np.zeros(3, dtype=np.uint64)  # as if a and b had one hash
    ids, hashes, id_of_row = run_files.distinct_ids(parsed)
    assert ids.tolist() == ["a", "b"] and ids[id_of_row].tolist() == ["b", "a", "b"]
    assert hashes.tolist() == run_files.id_hashes(ids).tolist()


def test_an_upload_names_each_unknown_shot_by_line_up_to_the_cap(make_campaign):
    campaign = make_campaign()
    shots = [f"shot{i}_{j}" for i in range(40) for j in range(25)]
    upload_collection(campaign, "".join(f"{s} v{s.split('_')[0]} 0 1\n" for s in shots).encode())
    rng = np.random.default_rng(28)
    lines = []
    for number, topic in enumerate(rng.integers(1, 4, size=400).tolist(), start=1):
        shot = shots[int(rng.integers(len(shots)))] if rng.random() < 0.8 else f"shot{int(rng.integers(1000))}_x"
        lines.append(f"{topic} Q0 {shot} {number} {1000 - number} t\n")
    run = _unique_pairs("".join(lines))
    wanted = _unknown_lines(run, set(shots))
    assert len(wanted) > 50
    with pytest.raises(InvalidInput) as raised:
        campaign.submit(run)
    assert [(e["line"], e["message"]) for e in raised.value.errors] == wanted[:50]
    campaign.session.rollback()
    upload_collection(campaign, "".join(f"{s} v 0 1\n" for s in sorted({*shots, *_shots_of(run)})).encode())
    assert campaign.submit(run).n_entries == len(run.splitlines())  # the new collection's ids, not the kept ones


def _unique_pairs(data: str) -> str:
    """The lines of a run file, each (topic, shot) only at its first line."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for line in data.splitlines(keepends=True):
        topic, _, shot = line.split()[:3]
        if (topic, shot) not in seen:
            kept.append(line)
        seen.add((topic, shot))
    return "".join(kept)


def _shots_of(data: str) -> set[str]:
    """Every shot a run file names."""
    return {line.split()[2] for line in data.splitlines()}


def _unknown_lines(data: str, known_shots: set[str]) -> list[tuple[int, str]]:
    """(line, message) of each line naming a shot outside `known_shots`, in file order: the plain reference."""
    return [
        (number, f"shot {line.split()[2]!r} is not in the collection")
        for number, line in enumerate(data.splitlines(), start=1)
        if line.split()[2] not in known_shots
    ]
