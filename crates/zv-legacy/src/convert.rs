//! Legacy arrays to Zarr v3: a zarr 0.4 array or a bcolz carray becomes a Zarr v3 array, a
//! bcolz ctable a group with one array per column; attributes, fill value, data type and byte
//! order are kept (`bytes` codec with the stored `endian`, then `blosc`).
//!
//! Chunks stream in small batches converted in parallel. A stored frame that holds a whole chunk (every zarr 0.4
//! chunk, every bcolz chunk but a short leftover) is **passed through** byte for byte, after
//! a full decode checks it; a short leftover is decoded, padded with the fill value and
//! re-encoded with the metadata's compressor; a missing zarr 0.4 chunk stays missing (Zarr v3
//! reads it as the fill value too). Chunk files are written first, each node's `zarr.json`
//! after its chunks (which are synced first), the root's last, then the store is synced: a
//! conversion interrupted at any moment leaves no root `zarr.json`, or a complete hierarchy.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn demo(target: Arc<dyn zv_core::store::Store>) -> zv_legacy::Result<()> {
//! let legacy = zv_legacy::open(std::path::Path::new("old.bcolz"))?;
//! let report = zv_legacy::convert::convert(&legacy, target.as_ref(), &mut |_event| {})?;
//! println!("{} chunks passed through", report.passed_through());
//! # Ok(()) }
//! ```

use bytes::Bytes;
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use zv_codecs::blosc::{BloscCodec, BloscCompressor, BloscConfig, BloscShuffle};
use zv_core::data_type::{DataType, FillValue};
use zv_core::key::StoreKey;
use zv_core::metadata::{
    to_pretty, ArrayMetadata, ChunkKeyEncoding, ExtensionMetadata, GroupMetadata,
};
use zv_core::node::{NodeName, NodePath};
use zv_core::store::Store;

use crate::array::LegacyArray;
use crate::dtype::ElementType;
use crate::error::{Error, Result};
use crate::Legacy;

/// What happened to one chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkAction {
    /// The stored blosc frame was copied unchanged.
    PassedThrough,
    /// The chunk was decoded, padded to the chunk shape and compressed again.
    Reencoded,
    /// The chunk is not stored (it reads as the fill value) and was not written.
    Missing,
}

/// One converted chunk, reported to the caller's callback.
#[derive(Debug, Clone)]
pub struct ChunkEvent<'a> {
    /// The Zarr v3 array path.
    pub array: &'a NodePath,
    /// The chunk coordinates.
    pub coords: &'a [u64],
    /// What was done.
    pub action: ChunkAction,
    /// Bytes written for the chunk.
    pub bytes: u64,
}

/// The counts of one converted array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayReport {
    /// The Zarr v3 array path.
    pub path: NodePath,
    /// Chunks copied unchanged.
    pub passed_through: u64,
    /// Chunks compressed again.
    pub reencoded: u64,
    /// Chunks not stored.
    pub missing: u64,
}

/// What a conversion did.
#[derive(Debug, Clone, Default)]
pub struct ConvertReport {
    /// One entry per array written.
    pub arrays: Vec<ArrayReport>,
}

impl ConvertReport {
    /// Chunks copied unchanged, over all arrays.
    pub fn passed_through(&self) -> u64 {
        self.arrays.iter().map(|a| a.passed_through).sum()
    }

    /// Chunks compressed again, over all arrays.
    pub fn reencoded(&self) -> u64 {
        self.arrays.iter().map(|a| a.reencoded).sum()
    }
}

/// The number of chunks a conversion visits (for progress bars).
pub fn total_chunks(legacy: &Legacy) -> u64 {
    match legacy {
        Legacy::Array(a) => a.num_chunks(),
        Legacy::Table(t) => t.columns().map(|(_, a)| a.num_chunks()).sum(),
    }
}

/// Converts `legacy` into `target` at the root: an array, or a group of columns.
pub fn convert(
    legacy: &Legacy,
    target: &dyn Store,
    on_chunk: &mut dyn FnMut(&ChunkEvent<'_>),
) -> Result<ConvertReport> {
    let root = NodePath::root();
    let mut report = ConvertReport::default();
    match legacy {
        Legacy::Array(a) => report
            .arrays
            .push(convert_array(a, target, &root, on_chunk)?),
        Legacy::Table(t) => {
            for (name, column) in t.columns() {
                let name = NodeName::new(name).map_err(zv_core::Error::from)?;
                let path = root.child(&name);
                report
                    .arrays
                    .push(convert_array(column, target, &path, on_chunk)?);
            }
            let group = GroupMetadata::new(t.attributes().clone());
            target.sync().map_err(zv_core::Error::from)?;
            put(target, &root.metadata_key(), group.to_json_pretty())?;
        }
    }
    target.sync().map_err(zv_core::Error::from)?;
    Ok(report)
}

fn put(target: &dyn Store, key: &StoreKey, bytes: Vec<u8>) -> Result<()> {
    target
        .set(key, Bytes::from(bytes))
        .map_err(zv_core::Error::from)?;
    Ok(())
}

/// The blosc configuration of the converted array (the legacy metadata's compressor).
pub fn blosc_config(array: &LegacyArray) -> Result<BloscConfig> {
    let c = &array.info().compression;
    let cname: BloscCompressor = serde_json::from_value(json!(c.cname))
        .ok()
        .filter(|n| *n != BloscCompressor::Snappy)
        .ok_or_else(|| {
            Error::unsupported(
                &array.info().root,
                format!(
                    "compressor `{}` (Zarr v3 blosc supports blosclz, lz4, lz4hc, zlib, zstd)",
                    c.cname
                ),
            )
        })?;
    let shuffle = match c.shuffle {
        0 => BloscShuffle::Noshuffle,
        1 => BloscShuffle::Shuffle,
        _ => BloscShuffle::Bitshuffle,
    };
    let typesize = u32::try_from(array.dtype().size())
        .ok()
        .filter(|&t| t <= 255)
        .unwrap_or(1);
    Ok(BloscConfig {
        cname,
        clevel: c.clevel,
        shuffle,
        typesize: Some(typesize),
        blocksize: 0,
    })
}

/// The `zarr.json` of the converted array.
pub fn v3_metadata(array: &LegacyArray) -> Result<Value> {
    let info = array.info();
    let dtype = info.dtype;
    let bytes = match dtype.order.v3_endian() {
        Some(e) => ExtensionMetadata::with_configuration("bytes", json!({"endian": e})),
        None => ExtensionMetadata::new("bytes"),
    };
    let blosc = serde_json::to_value(blosc_config(array)?).unwrap_or(Value::Null);
    let codecs = vec![bytes, ExtensionMetadata::with_configuration("blosc", blosc)];
    let core = match dtype.element {
        ElementType::Zarr(dt) => dt,
        // Described by hand below: zv-core has no fixed-size byte string type.
        ElementType::FixedBytes(_) => DataType::UInt8,
    };
    let mut meta = ArrayMetadata::new(info.shape.clone(), info.chunk_shape.clone(), core, codecs)
        .map_err(|e| Error::invalid(&info.root, e.to_string()))?;
    meta.chunk_key_encoding = ChunkKeyEncoding::default();
    meta.attributes = info.attributes.clone();
    if matches!(dtype.element, ElementType::Zarr(_)) {
        meta.fill_value = FillValue::new(info.fill_value_native());
    }
    let mut doc = meta.to_value();
    if let (ElementType::FixedBytes(_), Some(obj)) = (dtype.element, doc.as_object_mut()) {
        obj.insert("data_type".into(), dtype.v3_data_type());
        obj.insert("fill_value".into(), dtype.element_json(&info.fill_value));
    }
    Ok(doc)
}

/// Converts one array into `target` at `path`.
pub fn convert_array(
    array: &LegacyArray,
    target: &dyn Store,
    path: &NodePath,
    on_chunk: &mut dyn FnMut(&ChunkEvent<'_>),
) -> Result<ArrayReport> {
    let doc = v3_metadata(array)?;
    let codec = BloscCodec::new(&blosc_config(array)?, array.dtype().size())
        .map_err(|e| Error::unsupported(&array.info().root, e.to_string()))?;
    let grid = array.info().grid();
    let keys = ChunkKeyEncoding::default();
    let mut report = ArrayReport {
        path: path.clone(),
        passed_through: 0,
        reencoded: 0,
        missing: 0,
    };
    // Chunks go in batches of a few per thread, converted and written in parallel: memory
    // holds one batch, whatever the array's size.
    let batch_len = rayon::current_num_threads().max(1) * 4;
    let mut chunks = grid.chunks_in(&zv_core::grid::Region::whole(array.shape()));
    loop {
        let batch: Vec<Vec<u64>> = chunks.by_ref().take(batch_len).collect();
        if batch.is_empty() {
            break;
        }
        let done: Vec<Result<(ChunkAction, u64)>> = batch
            .par_iter()
            .map(|coords| convert_chunk(array, &codec, target, path, &keys, coords))
            .collect();
        for (coords, result) in batch.iter().zip(done) {
            let (action, written) = result?;
            match action {
                ChunkAction::PassedThrough => report.passed_through += 1,
                ChunkAction::Reencoded => report.reencoded += 1,
                ChunkAction::Missing => report.missing += 1,
            }
            on_chunk(&ChunkEvent {
                array: path,
                coords,
                action,
                bytes: written,
            });
        }
    }
    // the chunks are durable before the node that makes them visible
    target.sync().map_err(zv_core::Error::from)?;
    put(target, &path.metadata_key(), to_pretty(&doc))?;
    Ok(report)
}

/// Converts and writes one chunk; what was done and the bytes written.
fn convert_chunk(
    array: &LegacyArray,
    codec: &BloscCodec,
    target: &dyn Store,
    path: &NodePath,
    keys: &ChunkKeyEncoding,
    coords: &[u64],
) -> Result<(ChunkAction, u64)> {
    let Some(stored) = array.stored_chunk(coords)? else {
        return Ok((ChunkAction::Missing, 0));
    };
    // Decoding checks the frame completely (and pads a short one).
    let full = array.pad_chunk(Some(&stored))?;
    let (action, bytes) = if stored.shape == array.chunk_shape() {
        (ChunkAction::PassedThrough, stored.frame)
    } else {
        let frame = codec.compress(&full).map_err(|source| Error::Codec {
            path: stored.path.clone(),
            source,
        })?;
        (ChunkAction::Reencoded, frame)
    };
    let written = bytes.len() as u64;
    let key = path
        .key(&keys.encode(coords))
        .map_err(zv_core::Error::from)?;
    put(target, &key, bytes)?;
    Ok((action, written))
}

/// The `zarr.json` of the group a ctable becomes (for `zv zarr info`).
pub fn v3_group_metadata(attributes: &Map<String, Value>) -> Value {
    GroupMetadata::new(attributes.clone()).to_value()
}
