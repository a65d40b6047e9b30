"""Every route of the route table, asked as test_contract asks it, answers the very JSON kept in
tests/golden/answers.json (the fixture's notes, the deterministic word embedder): a change of how answers are built
(issue 60: the engine building the contract's types) must not change one byte of what a client reads.

Only what differs between two runs is masked: times, the temporary folder, the process. An answer that changes on
purpose is written again with SKMEMORY_GOLDEN_WRITE=1 and the diff is read in review.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from support import app_client, with_memory_note_and_map
from test_contract import ASKED, MEMORY_NOTE
from webapp import create_app
from indexer.contract.routes import ROUTES

GOLDEN = Path(os.environ.get("SKMEMORY_GOLDEN") or Path(__file__).parent / "golden" / "answers.json")
MASKED = {"modified", "created", "pid", "port", "home", "index_dir", "since", "indexed_at", "mtime", "revision",
          "indexed_revision", "live_revision"}
BASE = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def engine(make_module_engine):
    return make_module_engine(embedder="words", prepare=with_memory_note_and_map("DEC-1.md", MEMORY_NOTE))


HEX_ID = re.compile(r"\b(?:[0-9a-f]{32}|[0-9a-f]{24}|[0-9a-f]{12})\b")  # document, chunk and project ids


def masked(value, folder: str, ids: dict[str, str]):
    """The answer with what differs from run to run replaced by a word: times, the temporary folder, the process,
    and each id (made afresh by every build) by the order it was first met in."""
    if isinstance(value, dict):
        return {k: ("<masked>" if k in MASKED and v is not None else masked(v, folder, ids)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, folder, ids) for v in value]
    if isinstance(value, str):
        value = value.replace(folder, "<folder>")
        value = HEX_ID.sub(lambda m: ids.setdefault(m.group(0), f"<id {len(ids) + 1}>"), value)
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?", "<time>", value)
    return value


def asked(client, name: str):
    route = ROUTES[name]
    payload, _ = ASKED[name]
    if name == "related":  # the first document's related notes, by its place in the Files listing
        first = client.get("/api/documents?project=notes", base_url=BASE).get_json()["documents"][0]
        return client.get(route.path.replace("<document_id>", first["document_id"]), base_url=BASE)
    if route.method == "GET":
        return client.get(route.path, query_string=payload, base_url=BASE)
    return client.post(route.path, json=payload, base_url=BASE)


def test_every_route_answers_the_json_it_answered_before(engine):
    app = create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765})
    client, folder = app_client(app), str(engine.index("notes").root)
    answers, ids = {}, {}
    for name in ROUTES:
        response = asked(client, name)
        assert response.status_code == 200, (name, response.get_json())
        answers[name] = masked(response.get_json(), folder, ids)
    if os.environ.get("SKMEMORY_GOLDEN_WRITE") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        pytest.skip(f"wrote {GOLDEN}")
    kept = json.loads(GOLDEN.read_text())
    changed = [name for name in ROUTES if answers[name] != kept.get(name)]
    assert changed == [], (f"these routes answer other JSON than {GOLDEN.name} keeps: {changed}. If the change is "
                           "meant, run this test with SKMEMORY_GOLDEN_WRITE=1 and review the diff.")
