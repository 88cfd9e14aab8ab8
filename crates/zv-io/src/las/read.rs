//! Reading a LAS/LAZ file into a new store, in batches (see the [module docs](super)).

use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::Geometry;

use super::check::{check_laz_chunk_counts, check_laz_items, check_laz_layers, precheck};
use super::dims::{decode, dims_of};
use super::header::{Kept, HEADER_ATTRIBUTE};
use crate::error::{FileName, Location, Result};
use crate::options::ImportOptions;
use crate::root_attrs::add_root_attribute;
use crate::sink::{Column, SinkSpec, VertexSink};

/// A `las` crate error at `at`.
pub(crate) fn las_error(file: &FileName, at: Location, e: las::Error) -> crate::Error {
    file.parse(at, e.to_string())
}

/// Runs `f`, a call into the `las`/`laz` decoders, turning a panic inside them into a parse
/// error at `at`. laz-rs indexes its symbol tables with decoded values, so crafted
/// compressed data can make it index out of bounds (a panic in release builds too; fuzz
/// finding 8 in docs/robustness.md); zv cannot validate arithmetic-coded data before it is
/// decoded, so the decoder's panic is contained here and the reader that panicked is dropped
/// with the import. This needs the default `panic = "unwind"`; a binary built with
/// `panic = "abort"` aborts instead.
pub(super) fn contained<T>(
    file: &FileName,
    at: Location,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        Err(file.parse(at, format!("the LAZ decoder failed on this data ({what})")))
    })
}

/// Imports the LAS or LAZ file at `path` into `store` (empty). See the [module docs](super).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let mut f = File::open(path).map_err(|e| file.io(e))?;
    let start = precheck(&file, &mut f)?;
    let mut input = BufReader::with_capacity(1 << 20, f);
    // the header (with its VLRs) first: what is refused is refused before the LAZ decoder,
    // which allocates per extra byte, is built
    let header = las::Header::new(&mut input)
        .map_err(|e| file.parse(Location::Byte(0), format!("the header or the VLRs: {e}")))?;
    let format = *header.point_format();
    if format.has_waveform {
        return Err(file.unsupported(format!(
            "point format {} carries waveform packets, which zv does not import",
            format.to_u8().unwrap_or(0)
        )));
    }
    if format.extra_bytes > 0 {
        return Err(file.unsupported(format!(
            "the point records carry {} extra bytes (extra dimensions), which zv does not import",
            format.extra_bytes
        )));
    }
    if format.is_compressed {
        let layers = check_laz_items(&file, &header)?;
        check_laz_layers(&file, input.get_mut(), start, format.len(), layers)?;
        check_laz_chunk_counts(&file, input.get_mut(), start, &header)?;
    }
    input.seek(SeekFrom::Start(0)).map_err(|e| file.io(e))?;
    let mut reader = contained(&file, Location::Byte(start), || {
        las::Reader::new(input).map_err(|e| {
            // the header was read above: what fails here is what follows it
            file.parse(
                Location::Byte(start),
                format!("the LAZ point data (its chunk table): {e}"),
            )
        })
    })?;
    let kept = Kept::of(&header).map_err(|e| las_error(&file, Location::Byte(0), e))?;
    let dims = dims_of(&format);
    let columns = dims
        .iter()
        .map(|d| Column::numeric(d.name(), d.data_type()))
        .collect();
    let spec = SinkSpec {
        geometry: Geometry::PointCloud,
        ndim: 3,
        vertex_type: DataType::Float64,
        columns,
        with_ids: false,
    };
    let mut sink = VertexSink::new(&file, store.clone(), spec, opts);
    let transforms = *header.transforms();
    let total = header.number_of_points();
    let record_len = usize::from(format.len());
    let batch = opts.batch.max(1) as u64;
    let mut pd = las::PointDataBuilder::new().for_header(&header).build();
    let mut done = 0u64;
    while done < total {
        let at = if format.is_compressed {
            Location::Point(done)
        } else {
            Location::Byte(start + done * record_len as u64)
        };
        let n = contained(&file, at, || {
            reader
                .fill_points(batch.min(total - done), &mut pd)
                .map_err(|e| file.parse(at, format!("points {done}.. of {total}: {e}")))
        })?;
        if n == 0 {
            return Err(file.parse(
                at,
                format!("the file ends after {done} of the header's {total} points"),
            ));
        }
        for (i, rec) in pd.raw_bytes().chunks_exact(record_len).enumerate() {
            let p = las::raw::Point::read_from(rec, &format)
                .map_err(|e| file.parse(Location::Point(done + i as u64), e.to_string()))?;
            sink.coords.extend_from_slice(&[
                transforms.x.direct(p.x),
                transforms.y.direct(p.y),
                transforms.z.direct(p.z),
            ]);
            let v = decode(&p);
            for (c, d) in dims.iter().enumerate() {
                sink.columns[c].push_f64(v[*d as usize]);
            }
            sink.maybe_flush()?;
        }
        done += n;
    }
    let summary = sink.finish()?;
    add_root_attribute(&file, store.as_ref(), HEADER_ATTRIBUTE, kept.to_json())?;
    Ok(summary)
}
