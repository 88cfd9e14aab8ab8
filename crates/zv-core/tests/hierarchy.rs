//! Groups, arrays and the hierarchy: create, open, list children (also through intermediate
//! groups without `zarr.json`), update attributes.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

use bytes::Bytes;
use serde_json::json;
use zv_core::array::Array;
use zv_core::data_type::DataType;
use zv_core::group::{ChildNode, Group, Node, NodeKind};
use zv_core::key::StoreKey;
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata, GroupMetadata};
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_core::Error;
use zv_store_mem::MemoryStore;

fn store() -> Arc<dyn Store> {
    zv_codecs::link();
    Arc::new(MemoryStore::new())
}

fn u8_array() -> ArrayMetadata {
    ArrayMetadata::new(
        vec![4],
        vec![4],
        DataType::UInt8,
        vec![ExtensionMetadata::new("bytes")],
    )
    .unwrap()
}

#[test]
fn children_include_arrays_groups_and_implicit_groups() {
    let s = store();
    Group::create_all(s.clone(), &NodePath::new("/a/b").unwrap()).unwrap();
    Array::create(s.clone(), &NodePath::new("/a/arr").unwrap(), u8_array()).unwrap();
    // an array below a prefix that has no zarr.json (as the ZV reference writes)
    Array::create(
        s.clone(),
        &NodePath::new("/a/implicit/x").unwrap(),
        u8_array(),
    )
    .unwrap();
    let a = Group::open(s.clone(), &NodePath::new("/a").unwrap()).unwrap();
    let children = a.children().unwrap();
    assert_eq!(
        children,
        vec![
            ChildNode {
                name: "arr".into(),
                kind: NodeKind::Array
            },
            ChildNode {
                name: "b".into(),
                kind: NodeKind::Group
            },
            ChildNode {
                name: "implicit".into(),
                kind: NodeKind::ImplicitGroup
            },
        ]
    );
    // the implicit group opens as such and lists its child
    let imp = Group::open_implicit(s.clone(), &NodePath::new("/a/implicit").unwrap()).unwrap();
    assert!(imp.is_implicit());
    assert_eq!(imp.children().unwrap()[0].kind, NodeKind::Array);
    assert!(matches!(
        Group::open(s.clone(), &NodePath::new("/a/implicit").unwrap()),
        Err(Error::NodeNotFound { .. })
    ));
    assert!(matches!(
        Node::open(s.clone(), &NodePath::new("/a/implicit").unwrap()).unwrap(),
        Node::Group(_)
    ));
    assert!(matches!(
        Node::open(s.clone(), &NodePath::new("/a/arr").unwrap()).unwrap(),
        Node::Array(_)
    ));
    assert!(Node::open(s.clone(), &NodePath::new("/nothing").unwrap()).is_err());
    // create_all wrote every ancestor
    assert!(s.exists(&StoreKey::new("zarr.json").unwrap()).unwrap());
    assert!(s.exists(&StoreKey::new("a/zarr.json").unwrap()).unwrap());
}

#[test]
fn attributes_update_atomically_and_round_trip() {
    let s = store();
    let mut g = Group::create(
        s.clone(),
        &NodePath::new("/g").unwrap(),
        json!({"a": 1}).as_object().unwrap().clone(),
    )
    .unwrap();
    g.update_attributes(|attrs| {
        attrs.insert("b".into(), json!([1, 2]));
    })
    .unwrap();
    let reopened = Group::open(s.clone(), &NodePath::new("/g").unwrap()).unwrap();
    assert_eq!(reopened.attributes().get("a"), Some(&json!(1)));
    assert_eq!(reopened.attributes().get("b"), Some(&json!([1, 2])));
    let mut arr = Array::create(s.clone(), &NodePath::new("/g/x").unwrap(), u8_array()).unwrap();
    arr.set_attributes(json!({"units": "um"}).as_object().unwrap().clone())
        .unwrap();
    let reopened = Array::open(s.clone(), &NodePath::new("/g/x").unwrap()).unwrap();
    assert_eq!(
        reopened.metadata().attributes.get("units"),
        Some(&json!("um"))
    );
    // kinds cannot be confused
    assert!(Group::create(
        s.clone(),
        &NodePath::new("/g/x").unwrap(),
        Default::default()
    )
    .is_err());
    assert!(Array::create(s.clone(), &NodePath::new("/g").unwrap(), u8_array()).is_err());
    assert!(Array::open(s.clone(), &NodePath::new("/g").unwrap()).is_err());
}

#[test]
fn unknown_allowed_keys_survive_a_rewrite() {
    let s = store();
    let doc = json!({"zarr_format": 3, "node_type": "group", "attributes": {"x": 1},
        "my_extension": {"must_understand": false, "v": [1, 2]}, "consolidated_metadata": null});
    s.set(
        &StoreKey::new("g/zarr.json").unwrap(),
        Bytes::from(doc.to_string()),
    )
    .unwrap();
    let mut g = Group::open(s.clone(), &NodePath::new("/g").unwrap()).unwrap();
    g.update_attributes(|a| {
        a.insert("y".into(), json!(2));
    })
    .unwrap();
    let raw = s
        .get(&StoreKey::new("g/zarr.json").unwrap())
        .unwrap()
        .unwrap();
    let back: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(back["my_extension"], doc["my_extension"]);
    assert_eq!(back["consolidated_metadata"], serde_json::Value::Null);
    assert_eq!(back["attributes"], json!({"x": 1, "y": 2}));
    assert_eq!(GroupMetadata::from_json(&raw).unwrap().extra.len(), 2);
}
