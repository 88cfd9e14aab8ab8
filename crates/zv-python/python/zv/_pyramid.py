"""Pyramids: ``build_pyramid(path, "2;2", …)`` adds coarser levels 1..N to a store holding
level 0 (as ``zv pyramid``); the steps of a point cloud's pyramid can also be built in parts
on many workers (``prepare_pyramid_level``, ``write_pyramid_part``,
``missing_pyramid_parts``, ``commit_pyramid_level``; ``zv.dask.build_pyramid`` runs them on
a Dask cluster), with the same result, byte for byte. See docs/python.md."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence

from . import _zv
from ._write import PathLike


def _options(levels: str, chunk_scale: Optional[Sequence[int]], sparsity: str, seed: int,
             cross_level: str, depth: int, compression: str) -> Dict[str, Any]:
    return dict(levels=str(levels), chunk_scale=[int(c) for c in (chunk_scale or [])],
                sparsity=sparsity, seed=int(seed), cross_level=cross_level, depth=int(depth),
                compression=compression)


def build_pyramid(
    path: PathLike,
    levels: str,
    *,
    chunk_scale: Optional[Sequence[int]] = None,
    sparsity: str = "random",
    seed: int = 0,
    cross_level: str = "explicit",
    depth: int = 1,
    compression: str = "spec-default",
    memory_budget: Optional[int] = None,
) -> List[Dict[str, int]]:
    """Adds levels 1..N to the store at ``path`` (which holds level 0 only), one per step of
    ``levels`` (``"coarsen[,sparsity];…"``, as ``zv pyramid --levels``). ``memory_budget``:
    bytes of vertex records each coarse level's writer holds before spilling them to
    temporary files (``zv pyramid --memory-budget``; 256 MiB when ``None``); the levels are the
    same whatever it is. Returns each new level's ``level``, ``vertices``, ``chunks``,
    ``objects_kept``, ``cross_level_links``."""
    budget = None if memory_budget is None else int(memory_budget)
    return _zv._build_pyramid(os.fspath(path), memory_budget=budget,
                              **_options(levels, chunk_scale, sparsity, seed, cross_level,
                                         depth, compression))


def prepare_pyramid_level(
    path: PathLike,
    step: int,
    parts: int,
    *,
    levels: str,
    chunk_scale: Optional[Sequence[int]] = None,
    sparsity: str = "random",
    seed: int = 0,
    cross_level: str = "explicit",
    depth: int = 1,
    compression: str = "spec-default",
) -> Dict[str, Any]:
    """Stages step ``step`` (level ``step`` → ``step + 1``) of a point cloud's pyramid in
    ``parts`` parts; returns ``{"run", "parts", "step", "steps"}``."""
    return _zv._pyramid_prepare_level(os.fspath(path), int(step), int(parts),
                                      **_options(levels, chunk_scale, sparsity, seed,
                                                 cross_level, depth, compression))


def write_pyramid_part(path: PathLike, part: int) -> int:
    """Writes part ``part`` of the staged level (its coarse chunks and their cross-level
    links), then its receipt; returns the metavertices written."""
    return _zv._pyramid_write_part(os.fspath(path), int(part))


def missing_pyramid_parts(path: PathLike) -> List[int]:
    """The parts of the staged level that have not finished."""
    return _zv._pyramid_missing_parts(os.fspath(path))


def commit_pyramid_level(path: PathLike) -> Dict[str, int]:
    """Commits the staged level once every part has finished (the root after the last
    step); returns its summary."""
    return _zv._pyramid_commit_level(os.fspath(path))
