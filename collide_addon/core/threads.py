"""Independent numpy work on several threads.

numpy releases the GIL inside its loops, so work split into independent parts (groups of
meshes to fit, shares of mesh pairs to decide) runs partly in parallel on threads, while
the Python between numpy's calls takes the GIL in turn. Each part's result must not
depend on how the work was split, so that answers are the same on any machine.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

# Threads per call, at most: beyond a few, the GIL between numpy's calls is what the
# threads would queue on (only 2 cores were measured).
MAX_WORKERS = 8
# An environment variable that lowers the count further (1: everything in the calling
# thread), e.g. on a render node that other jobs share.
THREADS_VARIABLE = "COLLIDE_THREADS"

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")
_in_worker = threading.local()


def worker_count(parts: int) -> int:
    """Threads to run `parts` independent parts on: one per core this process may use,
    at most `MAX_WORKERS`, `parts` and the `COLLIDE_THREADS` environment variable, and 1
    inside a worker thread (a part that splits its own work runs it there, instead of
    waiting on threads of its own).

    Raises ValueError when `COLLIDE_THREADS` is set but not a whole number >= 1."""
    if getattr(_in_worker, "active", False):
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores, parts, _allowed_threads()))


def _allowed_threads() -> int:
    """The thread count `COLLIDE_THREADS` allows (`MAX_WORKERS` when it is not set)."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return MAX_WORKERS
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a whole number >= 1, got {value!r}")
    return int(value)


def map_in_threads(
    function: Callable[[_Item], _Result], items: Iterable[_Item], workers: int
) -> Iterator[_Result]:
    """`function(item)` of each of `items`, in their order, computed on `workers`
    threads (in the calling thread when `workers` is 1). Results are yielded as they
    come in order, so the caller can report progress between them; the threads end
    when the iteration does."""
    if workers <= 1:
        yield from map(function, items)
        return

    def in_worker(item: _Item) -> _Result:
        _in_worker.active = True
        return function(item)

    pool = ThreadPoolExecutor(workers)
    try:
        yield from pool.map(in_worker, items)
    finally:
        # Parts not started when the iteration ends early (an error) are dropped.
        pool.shutdown(cancel_futures=True)
