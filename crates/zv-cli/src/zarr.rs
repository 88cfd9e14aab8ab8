//! `zv zarr …`: the Zarr v3 layer from outside.

use std::io::{BufWriter, Write};

use clap::Subcommand;
use serde_json::Value;
use zv_core::array::{read_node_metadata, Array};
use zv_core::codec::ArrayBytes;
use zv_core::data_type::{element_to_json, DataType};
use zv_core::grid::Region;
use zv_core::group::{Group, NodeKind};
use zv_core::metadata::{to_pretty, ExtensionMetadata, GroupMetadata, NodeMetadata};
use zv_core::node::NodePath;
use zv_core::plugin::open_store;

use crate::CliResult;

#[derive(Debug, Subcommand)]
pub(crate) enum ZarrCommand {
    /// Print the metadata of a node (its zarr.json as zv reads it) as JSON; for a sharded
    /// array, with a "sharding" summary (shard and inner chunk shapes, index location).
    #[command(
        after_help = "Examples:\n  zv zarr info scan.zarr\n  zv zarr info scan.zarr 0/vertices --children\n  zv zarr info legacy-zarr:old.zarr"
    )]
    Info {
        /// The store: a path, file:///path or memory://name; or a legacy array
        /// (`legacy-zarr:PATH`, `bcolz:PATH`, or a directory holding `__zmeta__`,
        /// `__rootdirs__` or `meta/storage`).
        store: String,
        /// The node path inside the store (default: the root).
        #[arg(default_value = "/")]
        node: String,
        /// Also list the children of a group: {"metadata": …, "children": […]}.
        #[arg(long)]
        children: bool,
    },
    /// Print the values of an array region as JSON (nested lists, C order), or with --raw its
    /// C-order little-endian bytes.
    #[command(
        after_help = "Examples:\n  zv zarr get data.zarr /temperature --region 0:10,0:5\n  zv zarr get data.zarr /temperature --raw > temperature.bin"
    )]
    Get {
        /// The store: a path, file:///path or memory://name; or a legacy array (as for info).
        store: String,
        /// The array path inside the store (a ctable's column: `/NAME`).
        array: String,
        /// The region, e.g. `0:10,5:20` (half-open per dimension; `:` or empty = whole).
        #[arg(long)]
        region: Option<String>,
        /// Write raw little-endian bytes instead of JSON.
        #[arg(long)]
        raw: bool,
    },
}

pub(crate) fn run(command: ZarrCommand) -> CliResult {
    match command {
        ZarrCommand::Info {
            store,
            node,
            children,
        } => info(&store, &node, children),
        ZarrCommand::Get {
            store,
            array,
            region,
            raw,
        } => get(&store, &array, region.as_deref(), raw),
    }
}

fn info(store: &str, node: &str, with_children: bool) -> CliResult {
    #[cfg(feature = "legacy")]
    if let Some(legacy) = crate::legacy::open_arg(store)? {
        return crate::legacy::info(&legacy, node, with_children);
    }
    let store = open_store(store)?;
    let path = NodePath::new(node)?;
    let metadata = match read_node_metadata(store.as_ref(), &path)? {
        Some(NodeMetadata::Array(a)) => {
            // Opening checks the codec pipeline too.
            Array::from_metadata(store.clone(), &path, a.clone())?;
            NodeMetadata::Array(a)
        }
        Some(g) => g,
        None => {
            // An implicit group (no zarr.json) is reported as an empty group.
            Group::open_implicit(store.clone(), &path)?;
            NodeMetadata::Group(GroupMetadata::default())
        }
    };
    let mut doc_metadata = metadata.to_value();
    if let (NodeMetadata::Array(a), Value::Object(m)) = (&metadata, &mut doc_metadata) {
        if let Some(sharding) = sharding_summary(a.chunk_shape(), &a.codecs) {
            m.insert("sharding".to_owned(), sharding);
        }
    }
    let doc = if with_children {
        let children: Vec<Value> = match metadata {
            NodeMetadata::Group(_) => Group::open_implicit(store.clone(), &path)?
                .children()?
                .into_iter()
                .map(|c| {
                    serde_json::json!({"name": c.name, "node_type": match c.kind {
                        NodeKind::Array => "array",
                        NodeKind::Group => "group",
                        NodeKind::ImplicitGroup => "implicit_group",
                    }})
                })
                .collect(),
            NodeMetadata::Array(_) => Vec::new(),
        };
        serde_json::json!({"metadata": doc_metadata, "children": children})
    } else {
        doc_metadata
    };
    std::io::stdout().write_all(&to_pretty(&doc))?;
    Ok(())
}

/// For an array whose codecs shard: the shard shape (the array's chunk shape), the inner chunk
/// shape, the index location and, for nested sharding, the same for the inner chunks.
fn sharding_summary(shard_shape: &[u64], codecs: &[ExtensionMetadata]) -> Option<Value> {
    let codec = codecs.iter().find(|c| c.name == "sharding_indexed")?;
    let config = codec.configuration.as_ref()?;
    let inner_shape: Vec<u64> = serde_json::from_value(config.get("chunk_shape")?.clone()).ok()?;
    let inner_codecs: Vec<ExtensionMetadata> = config
        .get("codecs")
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_default();
    let per_shard: u64 = shard_shape
        .iter()
        .zip(&inner_shape)
        .map(|(s, i)| s / i.max(&1))
        .product();
    let mut out = serde_json::json!({
        "shard_shape": shard_shape,
        "inner_chunk_shape": inner_shape,
        "inner_chunks_per_shard": per_shard,
        "index_location": config.get("index_location").cloned().unwrap_or_else(|| "end".into()),
    });
    if let Some(nested) = sharding_summary(&inner_shape, &inner_codecs) {
        out["nested"] = nested;
    }
    Some(out)
}

fn get(store: &str, array: &str, region: Option<&str>, raw: bool) -> CliResult {
    #[cfg(feature = "legacy")]
    if let Some(legacy) = crate::legacy::open_arg(store)? {
        return crate::legacy::get(&legacy, array, region, raw);
    }
    let store = open_store(store)?;
    let array = Array::open(store, &NodePath::new(array)?)?;
    let region = match region {
        Some(r) => Region::parse(r, array.shape())?,
        None => Region::whole(array.shape()),
    };
    let data = array.retrieve_region(&region)?;
    let dt = array.data_type();
    let mut out = BufWriter::new(std::io::stdout().lock());
    if raw {
        let ArrayBytes::Fixed(bytes) = data else {
            return Err(format!("--raw needs a fixed-size data type, the array holds {dt}").into());
        };
        out.write_all(&to_little_endian(&bytes, dt))?;
    } else {
        let element = |i: usize| -> Value {
            match &data {
                ArrayBytes::Fixed(b) => {
                    let es = dt.size().unwrap_or(1);
                    element_to_json(dt, b.get(i * es..(i + 1) * es).unwrap_or(&[]))
                }
                ArrayBytes::Variable { .. } => element_to_json(dt, data.element(i).unwrap_or(&[])),
            }
        };
        write_json(&mut out, region.shape(), &element)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// Native-order element bytes to little-endian.
pub(crate) fn to_little_endian(bytes: &[u8], dt: DataType) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if cfg!(target_endian = "big") {
        if let Some(w) = dt.component_size().filter(|&w| w > 1) {
            v.chunks_exact_mut(w).for_each(<[u8]>::reverse);
        }
    }
    v
}

/// Writes elements `0..prod(shape)` (given by `element`) as nested JSON lists, C order.
pub(crate) fn write_json(
    out: &mut impl Write,
    shape: &[u64],
    element: &dyn Fn(usize) -> Value,
) -> CliResult {
    fn rec(
        out: &mut dyn Write,
        shape: &[u64],
        offset: &mut usize,
        element: &dyn Fn(usize) -> Value,
    ) -> std::io::Result<()> {
        match shape.split_first() {
            None => {
                let v = element(*offset);
                *offset += 1;
                serde_json::to_writer(&mut *out, &v).map_err(std::io::Error::other)
            }
            Some((&n, rest)) => {
                out.write_all(b"[")?;
                for i in 0..n {
                    if i > 0 {
                        out.write_all(b",")?;
                    }
                    rec(out, rest, offset, element)?;
                }
                out.write_all(b"]")
            }
        }
    }
    let mut offset = 0usize;
    rec(out, shape, &mut offset, element)?;
    Ok(())
}
