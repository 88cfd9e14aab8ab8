//! `zv ls STORE [PATH]`: the children of a group, one a line (`name/` for groups, `name
//! [shape] dtype` for arrays), or as JSON.

use std::io::Write;

use zv_core::array::read_node_metadata;
use zv_core::group::{Group, NodeKind};
use zv_core::metadata::NodeMetadata;
use zv_core::node::NodePath;
use zv_core::plugin::open_store;

use crate::CliResult;

/// Lists the children of the group at `path` in `store`.
pub(crate) fn run(store: &str, path: &str, json: bool) -> CliResult {
    let store = open_store(store)?;
    let group_path = NodePath::new(path)?;
    if let Some(NodeMetadata::Array(_)) = read_node_metadata(store.as_ref(), &group_path)? {
        return Err(format!("`{path}` is an array, not a group (see zv zarr info)").into());
    }
    let children = Group::open_implicit(store.clone(), &group_path)?.children()?;
    let mut rows = Vec::new();
    for c in children {
        let child = NodePath::new(format!("{}/{}", path.trim_end_matches('/'), c.name))?;
        let row = match c.kind {
            NodeKind::Array => match read_node_metadata(store.as_ref(), &child)? {
                Some(NodeMetadata::Array(a)) => serde_json::json!({
                    "name": c.name, "node_type": "array",
                    "shape": a.shape, "data_type": a.data_type.to_string()}),
                _ => serde_json::json!({"name": c.name, "node_type": "array"}),
            },
            NodeKind::Group => serde_json::json!({"name": c.name, "node_type": "group"}),
            NodeKind::ImplicitGroup => {
                serde_json::json!({"name": c.name, "node_type": "implicit_group"})
            }
        };
        rows.push(row);
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if json {
        serde_json::to_writer_pretty(&mut out, &rows)?;
        writeln!(out)?;
    } else {
        for r in &rows {
            let name = r["name"].as_str().unwrap_or_default();
            match r["node_type"].as_str() {
                Some("array") => writeln!(
                    out,
                    "{name}  {}  {}",
                    r["shape"],
                    r["data_type"].as_str().unwrap_or("?")
                )?,
                _ => writeln!(out, "{name}/")?,
            }
        }
    }
    out.flush()?;
    Ok(())
}
