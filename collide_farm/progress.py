"""Progress of a scan: one stderr line per finished chunk with frames per second and the
time left, or a tqdm bar when tqdm is installed and stderr is a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def _clock_text(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class ChunkProgress:
    """Counts finished chunks of a scan of `total_frames` frames in `total_chunks` chunks."""

    def __init__(
        self,
        total_frames: int,
        total_chunks: int,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total_frames = total_frames
        self.total_chunks = total_chunks
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.started = clock()
        self.frames_done = 0
        self.chunks_done = 0
        self.bar = self._tqdm_bar()

    def _tqdm_bar(self):
        if not self.stream.isatty():
            return None
        try:
            from tqdm import tqdm
        except ImportError:
            return None
        return tqdm(total=self.total_frames, unit="frame", file=self.stream)

    def chunk_done(self, frames: int, label: str) -> None:
        """A chunk of `frames` frames, named `label` (e.g. "frames 11-20"), finished."""
        self.frames_done += frames
        self.chunks_done += 1
        if self.bar is not None:
            self.bar.update(frames)
            return
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = self.frames_done / elapsed
        left = (self.total_frames - self.frames_done) / rate if rate > 0 else 0.0
        print(
            f"collide: {label} done ({self.chunks_done}/{self.total_chunks} chunks, "
            f"{self.frames_done}/{self.total_frames} frames), {rate:.1f} frames/s, "
            f"ETA {_clock_text(left)}",
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
