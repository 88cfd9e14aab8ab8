//! ZV metadata: the input is one group `zarr.json`, or two separated by a `0xFF` byte (a root
//! document, then a level or array group document). The first is read as the root
//! (`RootMetadata::from_attributes`); the last as a level (`LevelMetadata::from_attributes`,
//! against the parsed root or a fixed 3-D one) and as every per-array group document
//! (`ZvArray` and the typed `*Array::from_attributes`). Typed documents that parse write back
//! to attributes that parse equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_core::data_type::DataType;
use zv_core::metadata::GroupMetadata;
use zv_format::metadata::arrays::{
    parse_dtype, CrossChunkLinksArray, DenseAttributeArray, FragmentIndexArray, GroupsArray,
    LinksArray, ObjectIndexArray, RowAttributeArray, VerticesArray, ZvArray,
};
use zv_format::metadata::{parse_version, JsonObject, LevelMetadata, RootMetadata};

/// A root of three axes, for level documents fuzzed without a root of their own.
const ROOT: &str = r#"{"zarr_vectors": {"zv_version": "0.7.0", "chunk_shape": [50.0, 50.0, 50.0],
  "bounds": [[0.0, 0.0, 0.0], [100.0, 100.0, 100.0]], "geometry_types": ["point_cloud"],
  "base_bin_shape": [12.5, 12.5, 12.5]},
  "multiscales": [{"version": "0.4", "name": "default",
    "axes": [{"name": "x", "type": "space"}, {"name": "y", "type": "space"},
             {"name": "z", "type": "space"}],
    "datasets": [{"path": "0", "coordinateTransformations": [
      {"type": "scale", "scale": [1.0, 1.0, 1.0]}]}]}]}"#;

fn attributes(doc: &[u8]) -> Option<JsonObject> {
    GroupMetadata::from_json(doc).ok().map(|g| g.attributes)
}

macro_rules! round_trip {
    ($ty:ty, $attrs:expr) => {
        if let Ok(a) = <$ty>::from_attributes($attrs, "0/a/zarr.json") {
            let again = <$ty>::from_attributes(&a.to_attributes(), "0/a/zarr.json")
                .unwrap_or_else(|e| panic!("{} does not re-parse: {e}", stringify!($ty)));
            assert_eq!(again, a);
        }
    };
}

fuzz_target!(|data: &[u8]| {
    let (first, last) = match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, data),
    };
    let parsed_root =
        attributes(first).and_then(|a| RootMetadata::from_attributes(&a, "zarr.json").ok());
    if let Some(root) = &parsed_root {
        let _ = (
            root.ndim(),
            root.effective_bin_shape(),
            root.bins_per_chunk(),
        );
        let _ = root.has_capability("shared_fragments");
        let _ = root.dataset(1);
        let _ = parse_version(&root.zv_version);
    }
    let Some(attrs) = attributes(last) else {
        return;
    };
    let root = match parsed_root {
        Some(r) => r,
        None => {
            let Ok(serde_json::Value::Object(a)) = serde_json::from_str(ROOT) else {
                return;
            };
            match RootMetadata::from_attributes(&a, "zarr.json") {
                Ok(r) => r,
                Err(e) => panic!("the fixed root does not parse: {e}"),
            }
        }
    };
    for id in [0, 1] {
        if let Ok(level) = LevelMetadata::from_attributes(&attrs, id, &root, "0/zarr.json") {
            let _ = level.effective_chunk_shape(&root);
            let _ = level.effective_bin_shape(&root);
            let _ = level.key_arity(&root);
        }
    }
    if let Ok(Some(kind)) = ZvArray::from_attributes(&attrs, "0/a/zarr.json") {
        assert_eq!(ZvArray::parse(kind.name()), kind);
    }
    let _ = parse_dtype(&attrs, "0/a/zarr.json", DataType::Float32);
    round_trip!(VerticesArray, &attrs);
    round_trip!(FragmentIndexArray, &attrs);
    round_trip!(LinksArray, &attrs);
    round_trip!(CrossChunkLinksArray, &attrs);
    round_trip!(ObjectIndexArray, &attrs);
    round_trip!(GroupsArray, &attrs);
    round_trip!(RowAttributeArray, &attrs);
    round_trip!(DenseAttributeArray, &attrs);
});
