//! `zv demo`: writes a store in a local folder, reads it back and checks it.

use std::sync::Arc;

use serde_json::json;
use zv_core::array::Array;
use zv_core::data_type::DataType;
use zv_core::grid::Region;
use zv_core::group::Group;
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata};
use zv_core::node::NodePath;
use zv_core::plugin::open_store;

use crate::CliResult;

pub(crate) fn run(dir: &str) -> CliResult {
    let store = open_store(dir)?;
    let mut root = Group::create_all(Arc::clone(&store), &NodePath::root())?;
    root.update_attributes(|a| {
        a.insert("description".into(), json!("zv demo store"));
    })?;
    let codecs: Vec<ExtensionMetadata> = serde_json::from_value(json!([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}
    ]))?;
    let shape = vec![1000u64, 3];
    let mut meta = ArrayMetadata::new(shape.clone(), vec![256, 3], DataType::Float32, codecs)?;
    meta.dimension_names = Some(vec![Some("vertex".into()), Some("axis".into())]);
    let path = NodePath::new("/points")?;
    let array = Array::create(Arc::clone(&store), &path, meta)?;
    // A spiral of 1000 points.
    let values: Vec<f32> = (0..1000)
        .flat_map(|i| {
            let t = i as f32 * 0.05;
            [t.cos() * t, t.sin() * t, t]
        })
        .collect();
    array.store_region_elements(&Region::whole(&shape), &values)?;

    let reopened = Array::open(store, &path)?;
    let back: Vec<f32> = reopened.retrieve_region_elements(&Region::whole(&shape))?;
    if back != values {
        return Err("demo: values read back differ from the values written".into());
    }
    let part = Region::parse("990:1000,0:3", &shape)?;
    let tail: Vec<f32> = reopened.retrieve_region_elements(&part)?;
    println!(
        "wrote and read back {} float32 values in {} chunks at {dir}/points (blosc zstd); last point: {:?}",
        back.len(),
        reopened.grid().grid_shape().iter().product::<u64>(),
        &tail[27..30]
    );
    Ok(())
}
