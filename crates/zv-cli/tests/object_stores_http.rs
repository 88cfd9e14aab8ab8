//! ZV stores over plain HTTP (a static file server on 127.0.0.1, started by each test), which
//! has no listing. A ZV 0.9 store is read by computed keys where its metadata names them (the
//! levels from the root's `multiscales`, the chunks from each grid array's
//! `nonempty_chunks`, the attributes the caller names) with exactly the content read from its
//! path; anything that needs a listing — `zv dump`'s walk of the tree, the names of a level's
//! attributes (and so objects, which carry them all), the chunks of a ZV 0.7 level — is
//! refused with an error that says so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;

use zv_format::ZvStore;
use zv_testkit::env::fixtures_dir;
use zv_testkit::fixtures::fixture_stores;
use zv_testkit::servers::HttpServer;

fn zv(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

fn fixture_names() -> Vec<String> {
    let names: Vec<String> = fixture_stores()
        .iter()
        .filter_map(|n| n.strip_suffix(".zarr").map(str::to_owned))
        .collect();
    assert_eq!(names.len(), 7, "the 7 reference fixtures");
    names
}

/// The fixtures (as `NAME.zarr`, ZV 0.7) and, where `zv migrate` takes them, their 0.9
/// migrations (`NAME.09.zarr`) in `dir`; returns the names migrated.
fn stores(dir: &Path) -> Vec<String> {
    let mut migrated = Vec::new();
    for name in fixture_names() {
        let from = fixtures_dir().join(format!("{name}.zarr"));
        let copy = dir.join(format!("{name}.zarr"));
        let out = Command::new("cp")
            .arg("-r")
            .arg(&from)
            .arg(&copy)
            .output()
            .unwrap();
        assert!(out.status.success());
        let to = dir.join(format!("{name}.09.zarr"));
        let out = zv(&[
            "migrate",
            from.to_str().unwrap(),
            to.to_str().unwrap(),
            "--to",
            "0.9",
        ]);
        if out.status.success() {
            migrated.push(name);
        }
    }
    assert!(migrated.len() >= 6, "{migrated:?}");
    migrated
}

fn says_no_listing(text: &str) -> bool {
    text.contains("plain HTTP store") && text.contains("no listing")
}

#[test]
fn zv_09_stores_read_over_http_by_computed_keys_and_listings_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let migrated = stores(dir.path());
    let server = HttpServer::start(dir.path());
    for name in fixture_names() {
        // zv dump walks the store's tree, which only a listing gives
        let url = format!("{}/{name}.zarr", server.url());
        let out = zv(&["dump", &url]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && says_no_listing(&err),
            "{name}: {err}"
        );
        // a ZV 0.7 level's chunks are found by listing
        let level = ZvStore::open_url(&url).unwrap().level(0).unwrap();
        let e = level.points(&[]).unwrap_err().to_string();
        assert!(says_no_listing(&e), "{name}: {e}");
    }
    for name in &migrated {
        let local = ZvStore::open_url(dir.path().join(format!("{name}.09.zarr")).to_str().unwrap())
            .unwrap();
        let url = format!("{}/{name}.09.zarr", server.url());
        let remote = ZvStore::open_url(&url).unwrap();
        assert_eq!(remote.level_ids(), local.level_ids(), "{name}");
        for &l in local.level_ids() {
            let (a, b) = (local.level(l).unwrap(), remote.level(l).unwrap());
            let names = a.vertex_attribute_names().unwrap();
            let e = b.vertex_attribute_names().unwrap_err().to_string();
            assert!(says_no_listing(&e), "{name}: {e}");
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let want = a.points(&names).unwrap();
            let got = b.points(&names).unwrap();
            assert_eq!(got.positions, want.positions, "{name} level {l}");
            assert_eq!(
                got.vertex_attributes, want.vertex_attributes,
                "{name} level {l}"
            );
            let Some(n) = a.num_objects().unwrap() else {
                continue;
            };
            let ids: Vec<u64> = (0..n).collect();
            let (want, got) = (a.objects(&ids), b.objects(&ids));
            match (want, got) {
                (Ok(w), Ok(g)) => {
                    assert_eq!(w.len(), g.len());
                    for (x, y) in w.iter().zip(&g) {
                        assert_eq!(x.vertices, y.vertices, "{name} level {l}");
                    }
                }
                // objects carry every vertex attribute, whose names only a listing gives
                (Ok(_), Err(e)) if says_no_listing(&e.to_string()) => {}
                (w, g) => panic!(
                    "{name} level {l}: objects {:?} over HTTP, {:?} from the path",
                    g.err(),
                    w.err()
                ),
            }
        }
    }
}
