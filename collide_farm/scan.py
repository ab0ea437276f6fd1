"""A scan on Dask: the frame range split into chunks, each chunk a clash_report.py run in
`blender -b` on a worker (retried when it fails or its worker is lost), the chunk reports
gathered in frame order for report.merge."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .chunk import FarmError, kill_running_chunks, report_command, run_chunk
from .progress import ChunkProgress


@dataclass(frozen=True)
class ScanSettings:
    """What a scan runs.

    scene: the .blend file (the same path on every worker)
    frames: (start, end, step), inclusive
    chunk: frames per chunk; None: two chunks per worker thread
    workers: local cluster size (None: the machine's cores); ignored with `scheduler`
    scheduler: a Dask scheduler's address; None starts a local cluster
    scratch: folder for the chunk reports, reachable by every worker; None: a temporary
      folder (local clusters only), removed afterwards
    retries: tries of a failed chunk after the first
    timeout: seconds one chunk's Blender may run; None: no limit
    blender: the Blender binary (the same path on every worker)
    tests, baseline: clash_report.py's --tests and --baseline files, or None
    geometry: clash_report.py's --geometry ("mesh" or "proxy"), or None
    suggest_fixes: clash_report.py's --suggest-fixes (the merge keeps the fix of each
      clash's worst frame, as one run would)
    substeps, continuous: clash_report.py's --substeps and --continuous; every chunk but
      the last runs with --lookahead, so that what lies between its last frame and the
      next chunk's first is scanned (by it) as in one run
    """

    scene: str
    frames: tuple[int, int, int]
    blender: str
    chunk: int | None = None
    workers: int | None = None
    scheduler: str | None = None
    scratch: str | None = None
    retries: int = 2
    timeout: float | None = None
    tests: str | None = None
    baseline: str | None = None
    geometry: str | None = None
    suggest_fixes: bool = False
    substeps: int = 1
    continuous: bool = False


def split_frames(frames: tuple[int, int, int], chunk: int) -> list[tuple[int, int, int]]:
    """Consecutive (start, end, step) ranges of at most `chunk` scanned frames each that
    cover the frames of `frames` (start, end, step) exactly."""
    start, end, step = frames
    firsts = range(start, end + 1, step * chunk)
    return [(first, min(first + step * chunk - 1, end), step) for first in firsts]


def frame_count(frames: tuple[int, int, int]) -> int:
    start, end, step = frames
    return (end - start) // step + 1


def frames_text(frames: tuple[int, int, int]) -> str:
    start, end, step = frames
    return f"{start}-{end}:{step}"


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """A distributed.Client of the scheduler at `scheduler`, or of a local cluster of
    `workers` single-thread workers in this process (each chunk is a Blender process, so
    threads suffice and start at once)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise FarmError("collide scan needs dask: pip install 'collide[farm]'") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except OSError as error:
            raise FarmError(f"cannot reach the scheduler {scheduler}: {error}") from None
        with client:
            yield client
        return
    size = workers or os.cpu_count() or 1
    with (
        # Its workers log each failed try as several lines with a traceback ("Compute
        # Failed"); the scan reports a chunk's failure itself, in one line.
        LocalCluster(
            n_workers=size,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@contextlib.contextmanager
def scratch_folder(settings: ScanSettings) -> Iterator[Path]:
    if settings.scratch:
        Path(settings.scratch).mkdir(parents=True, exist_ok=True)
        yield Path(settings.scratch)
        return
    if settings.scheduler:
        raise FarmError("--scheduler needs --scratch, a folder every worker can write")
    folder = Path(tempfile.mkdtemp(prefix="collide-scan-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def chunk_arguments(
    settings: ScanSettings, frames: tuple[int, int, int], part: Path, last: bool
) -> list:
    """clash_report.py's arguments for one chunk (`last`: the scan's last chunk). The
    baseline goes to every chunk so that each lists the objects of clashes resolved since
    (their guids, see report.merge); statuses are set again by the merge. Every chunk but
    the last looks ahead, also when neither sub-steps nor continuous tests are asked for
    (the scene's own tests may be continuous), where it costs nothing; the last is marked
    a chunk, so that none refuses a set the merge decides on."""
    # One argument: a range starting below frame 0 ("-3-0:1") would read as an option.
    arguments = [f"--frames={frames_text(frames)}", "--json", str(part), "--fail-on", "never"]
    # The last chunk is a chunk too: a set matching nothing at its frames (objects
    # demolished before them) is the merge's to decide on, as in every other chunk.
    arguments.append("--chunk" if last else "--lookahead")
    if settings.substeps != 1:
        arguments += ["--substeps", str(settings.substeps)]
    if settings.continuous:
        arguments.append("--continuous")
    for option, value in (("--tests", settings.tests), ("--baseline", settings.baseline)):
        if value:
            arguments += [option, str(Path(value).resolve())]
    if settings.geometry:
        arguments += ["--geometry", settings.geometry]
    if settings.suggest_fixes:
        arguments.append("--suggest-fixes")
    return arguments


def _chunk_size(settings: ScanSettings, client: Any) -> int:
    if settings.chunk:
        return settings.chunk
    threads = max(sum(client.nthreads().values()), 1)
    return max(1, -(-frame_count(settings.frames) // (2 * threads)))


def _gather(client: Any, futures: dict, settings: ScanSettings) -> dict[tuple, tuple[str, dict]]:
    """Wait for the chunks in finishing order, printing progress; {frames: (part path,
    report)}. Raises FarmError naming the frames of a chunk that failed every try."""
    from distributed import as_completed

    progress = ChunkProgress(frame_count(settings.frames), len(futures))
    results = {}
    try:
        for future in as_completed(futures):
            frames, part = futures[future]
            if future.status == "cancelled":
                raise FarmError(f"frames {frames_text(frames)}: the cluster cancelled the chunk")
            if future.status != "finished":
                error = future.exception()
                count = settings.retries + 1
                tries = f"{count} {'try' if count == 1 else 'tries'}"
                raise FarmError(
                    f"frames {frames_text(frames)} failed after {tries}: "
                    f"{type(error).__name__}: {error}"
                )
            results[frames] = (str(part), json.loads(future.result()))
            progress.chunk_done(frame_count(frames), f"frames {frames_text(frames)}")
    finally:
        progress.close()
    return results


def run_scan(settings: ScanSettings) -> tuple[list[dict], list[str]]:
    """Run the chunks of `settings` on Dask; (chunk reports, their part paths) in frame
    order. Ctrl-C or a failed chunk cancels the chunks still queued or running.
    Raises FarmError (a chunk failed every try, no scheduler, no dask)."""
    scene = str(Path(settings.scene).resolve())
    token = uuid.uuid4().hex[:8]
    with (
        scratch_folder(settings) as scratch,
        dask_client(settings.scheduler, settings.workers) as client,
    ):
        futures = {}
        chunks = split_frames(settings.frames, _chunk_size(settings, client))
        for frames in chunks:
            part = scratch.resolve() / f"part-{frames[0]}-{frames[1]}.json"
            arguments = chunk_arguments(settings, frames, part, frames == chunks[-1])
            command = report_command(settings.blender, scene, arguments)
            future = client.submit(
                run_chunk,
                command,
                str(part),
                settings.timeout,
                key=f"collide-chunk-{frames[0]}-{frames[1]}-{token}",
                retries=settings.retries,
            )
            futures[future] = (frames, part)
        try:
            results = _gather(client, futures, settings)
        except BaseException:
            # Cancelled first, so that a killed Blender is not retried.
            client.cancel(list(futures), force=True)
            kill_running_chunks()
            raise
    ordered = [results[frames] for frames in sorted(results)]
    return [report for _, report in ordered], [path for path, _ in ordered]
