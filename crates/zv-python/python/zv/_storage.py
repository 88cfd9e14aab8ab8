"""Object stores: every path the package takes may be an ``s3://``, ``gs://``, ``az://``
(``abfs[s]://``) or read-only ``http(s)://`` URL, configured by the standard environment
variables (``AWS_ENDPOINT_URL``, ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``, …) and by
``set_storage_options``."""

from __future__ import annotations

from typing import Mapping, Optional

from . import _zv


def set_storage_options(options: Optional[Mapping[str, object]]) -> None:
    """Options of the object stores opened from now on in this process, over the
    environment variables; the keys of ``zv --storage-option`` (``aws_endpoint``, ``region``,
    ``allow_http``, ``aws_access_key_id``, ``concurrency``, …). ``None`` or ``{}`` clears them.
    Dask workers get them through ``zv.dask``'s ``storage_options``."""
    _zv._set_storage_options({str(k): str(v).lower() if isinstance(v, bool) else str(v)
                              for k, v in (options or {}).items()})
