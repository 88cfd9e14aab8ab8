"""Type stubs of the native module `zv._zv` (PyO3). The public API is in `zv` itself."""

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

class ZvError(Exception):
    """Base class of every error zv raises."""

    key: Optional[str]
    """The store key (or path) at fault, if one is known."""
    item: Optional[str]
    """The writer input item at fault (e.g. ``"vertex 12"``), if one is known."""

class StoreIOError(ZvError): ...
class FormatError(ZvError): ...
class MissingError(ZvError): ...
class UnsupportedError(ZvError): ...
class InputError(ZvError): ...

def open(path: str) -> Store: ...
def validate(path: str, level: int = 3) -> Dict[str, Any]: ...

class Store:
    levels: List[int]
    geometry: str
    ndim: int
    path: str
    def info(self) -> Dict[str, Any]: ...
    def __getitem__(self, k: int) -> Level: ...
    def __len__(self) -> int: ...

class Level:
    index: int
    geometry: str
    dtype: str
    ndim: int
    vertex_count: int
    chunk_shape: List[float]
    def vertex_attribute_names(self) -> List[str]: ...
    def object_ids(self) -> Optional[np.ndarray]: ...
    def _points(
        self,
        box: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
        attributes: Optional[Sequence[str]] = None,
        object_ids: bool = True,
        chunks: Optional[Sequence[Sequence[int]]] = None,
    ) -> Dict[str, Any]: ...
    def chunk_keys(self) -> List[List[int]]: ...
    def _object(self, id: int) -> Dict[str, Any]: ...
    def _objects(self, ids: Optional[Sequence[int]] = None) -> Dict[str, Any]: ...
    def groups(self) -> Optional[List[np.ndarray]]: ...
    def _object_attributes(self) -> Dict[str, Tuple[np.ndarray, Optional[np.ndarray]]]: ...
    def _group_attributes(self) -> Dict[str, Tuple[np.ndarray, Optional[np.ndarray]]]: ...

def _write(
    path: str,
    geometry: str,
    positions: np.ndarray,
    *,
    chunk_shape: Sequence[float],
    offsets: Optional[np.ndarray] = None,
    object_ids: Optional[np.ndarray] = None,
    links: Optional[np.ndarray] = None,
    vertex_attributes: Optional[Mapping[str, np.ndarray]] = None,
    link_attributes: Optional[Mapping[str, np.ndarray]] = None,
    object_attributes: Optional[Mapping[str, np.ndarray]] = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Optional[Mapping[str, np.ndarray]] = None,
    bin_shape: Optional[Sequence[float]] = None,
    bounds: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
    dtype: str = "float32",
    compression: str = "spec-default",
    format_version: str = "0.7",
    out_of_bounds: str = "raise",
    memory_budget: Optional[int] = None,
) -> Dict[str, int]: ...

def _prepare_parts(
    path: str,
    parts: int,
    *,
    chunk_shape: Sequence[float],
    geometry: str = "point_cloud",
    bin_shape: Optional[Sequence[float]] = None,
    bounds: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
    dtype: str = "float32",
    compression: str = "spec-default",
    out_of_bounds: str = "raise",
) -> Dict[str, Any]: ...
def _part_owners(path: str, positions: np.ndarray) -> np.ndarray: ...
def _polyline_parts(
    path: str, positions: np.ndarray, offsets: np.ndarray
) -> Tuple[np.ndarray, np.ndarray]: ...
def _write_part(
    path: str,
    part: int,
    positions: np.ndarray,
    *,
    object_ids: Optional[np.ndarray] = None,
    vertex_attributes: Optional[Mapping[str, np.ndarray]] = None,
    owned_only: bool = True,
    memory_budget: Optional[int] = None,
    offsets: Optional[np.ndarray] = None,
    polyline_ids: Optional[np.ndarray] = None,
) -> Dict[str, int]: ...
def _missing_parts(path: str) -> List[int]: ...
def _commit_parts(
    path: str,
    *,
    object_attributes: Optional[Mapping[str, np.ndarray]] = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Optional[Mapping[str, np.ndarray]] = None,
    num_objects: int = 0,
) -> Dict[str, int]: ...
def _build_pyramid(
    path: str,
    levels: str,
    *,
    chunk_scale: Sequence[int] = ...,
    sparsity: str = "random",
    seed: int = 0,
    cross_level: str = "explicit",
    depth: int = 1,
    compression: str = "spec-default",
) -> List[Dict[str, int]]: ...
def _pyramid_prepare_level(
    path: str,
    step: int,
    parts: int,
    *,
    levels: str,
    chunk_scale: Sequence[int] = ...,
    sparsity: str = "random",
    seed: int = 0,
    cross_level: str = "explicit",
    depth: int = 1,
    compression: str = "spec-default",
) -> Dict[str, Any]: ...
def _pyramid_write_part(path: str, part: int) -> int: ...
def _pyramid_missing_parts(path: str) -> List[int]: ...
def _pyramid_staged_step(path: str) -> Optional[int]: ...
def _pyramid_commit_level(path: str) -> Dict[str, int]: ...
def _set_storage_options(options: Mapping[str, str]) -> None: ...
