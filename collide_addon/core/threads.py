"""Independent numpy work on several threads.

numpy releases the GIL inside its loops, so work split into independent parts (groups of
meshes to fit, shares of mesh pairs to decide) runs partly in parallel on threads, while
the Python between numpy's calls takes the GIL in turn. Each part's result must not
depend on how the work was split, so that answers are the same on any machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np

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
        with blas_on_one_thread():
            yield from pool.map(in_worker, items)
    finally:
        # Parts not started when the iteration ends early (an error) are dropped.
        pool.shutdown(cancel_futures=True)


# OpenBLAS's thread count functions, as its builds name them: plain, with the 64-bit
# integer build's suffix, and with the prefix of the build numpy 2 ships.
_OPENBLAS_NAMES = [
    (f"{prefix}openblas_get_num_threads{suffix}", f"{prefix}openblas_set_num_threads{suffix}")
    for prefix in ("", "scipy_")
    for suffix in ("", "64_")
]


@contextlib.contextmanager
def blas_on_one_thread():
    """Run the block with every OpenBLAS this process has loaded on one thread, then
    give each back its thread count.

    numpy's matrix products go to OpenBLAS, which runs a large one on threads of its
    own; called from several of our threads at once, those threads contend and spin
    (the first Detect of bench_fit.py's 1,000 meshes took 2.2-2.7 s, and 2.1 s with
    OpenBLAS on one thread). Each product's sums run in one thread either way, so the
    results are the same bit for bit. Other BLAS libraries are left alone.
    """
    controls = _openblas_thread_controls()
    counts = [get() for get, _ in controls]
    for _, set_count in controls:
        set_count(1)
    try:
        yield
    finally:
        for (_, set_count), count in zip(controls, counts, strict=True):
            set_count(count)


@functools.cache
def _openblas_thread_controls() -> tuple[tuple[Callable, Callable], ...]:
    """(get, set) thread count functions of each OpenBLAS loaded: on Linux those the
    process maps, elsewhere those numpy ships (loading a loaded library again gives it
    back); none where numpy uses another BLAS."""
    controls = []
    for path in sorted(_openblas_paths()):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _OPENBLAS_NAMES:
            get, set_count = getattr(library, get_name, None), getattr(library, set_name, None)
            if get is not None and set_count is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                set_count.restype, set_count.argtypes = None, [ctypes.c_int]
                controls.append((get, set_count))
                break
    return tuple(controls)


def _openblas_paths() -> set[str]:
    try:
        with open("/proc/self/maps") as maps:
            mapped = {line.split(maxsplit=5)[-1].strip() for line in maps if "/" in line}
    except OSError:  # not Linux
        package = Path(np.__file__).resolve().parent
        folders = (package.parent / "numpy.libs", package / ".libs", package / ".dylibs")
        mapped = {str(path) for folder in folders for path in folder.glob("*")}
    return {path for path in mapped if "openblas" in os.path.basename(path).lower()}
