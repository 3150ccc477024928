"""A server process for the class store's multi-process test: it imports only the store, so
that spawning it is cheap (no pytest, no numpy)."""

from __future__ import annotations

import threading

from lnlab.classroom.store import ClassStore


def answer(url: str, fresh_url: str, code: str, qid: str, chosen: dict[str, str], start, results):
    """Open (and so migrate) a fresh database at the same moment as the other processes, then
    answer `qid` for this process's students, one thread each, each answering twice (a double
    click). Puts (schema version found, {student: [first result, second result]})."""
    start.wait()
    fresh = ClassStore(fresh_url)
    version = fresh.schema_version()
    fresh.close()
    store = ClassStore(url)
    start.wait()
    answered: dict[str, list[bool]] = {}

    def student(sid: str) -> None:
        answered[sid] = [store.answer(code, sid, qid, chosen[sid]) for _ in range(2)]

    threads = [threading.Thread(target=student, args=(sid,)) for sid in chosen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.close()
    results.put((version, answered))
