//! `zv render`: every shared fixture renders to a PNG with drawn pixels; the demo store renders
//! by attribute with a legend; a pyramid store renders its coarse level when no level is
//! given; bad options end with exit 1 and a clear message, and nothing panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::{Command, Output};

use zv_testkit::env::fixtures_dir;

fn zv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = zv(args);
    assert!(
        out.status.success(),
        "zv {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Width, height and the opaque pixel count of a PNG file.
fn decode(path: &Path) -> (u32, u32, usize) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let opaque = buf[..info.buffer_size()]
        .chunks_exact(4)
        .filter(|p| p[3] == 255)
        .count();
    (info.width, info.height, opaque)
}

#[test]
fn every_fixture_renders() {
    let dir = tempfile::tempdir().unwrap();
    let mut rendered = 0;
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "zarr") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let out = dir.path().join(format!("{name}.png"));
        let stderr = ok(&[
            "render",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--size",
            "128",
        ]);
        assert!(stderr.contains("rendered level"), "{name}: {stderr}");
        let (w, h, opaque) = decode(&out);
        assert_eq!(w.max(h), 128, "{name}");
        assert!(opaque > 0, "{name}: nothing drawn");
        // every level of every fixture, and filled meshes
        let store = zv_format::ZvStore::open_url(path.to_str().unwrap()).unwrap();
        for level in store.level_ids() {
            ok(&[
                "render",
                path.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--size",
                "64",
                "--level",
                &level.to_string(),
                "--fill",
                "--axes",
                "y,x",
            ]);
            assert!(decode(&out).2 > 0, "{name} level {level}: nothing drawn");
        }
        rendered += 1;
    }
    assert!(rendered >= 7, "only {rendered} fixtures found");
}

#[test]
fn a_pyramid_renders_its_coarse_level_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixtures_dir().join("pyramid_points.zarr");
    let levels = zv_format::ZvStore::open_url(store.to_str().unwrap())
        .unwrap()
        .level_ids()
        .len();
    assert!(levels > 1);
    let out = dir.path().join("p.png");
    let args = |size: &'static str| {
        [
            "render".to_owned(),
            store.to_str().unwrap().to_owned(),
            "-o".into(),
            out.to_str().unwrap().into(),
            "--size".into(),
            size.into(),
        ]
    };
    let big = args("512");
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    assert!(ok(&big).contains("rendered level 0"));
    // 4 × 4 pixels: a budget of 64 vertices, below level 0's count
    let small = args("4");
    let small: Vec<&str> = small.iter().map(String::as_str).collect();
    let stderr = ok(&small);
    assert!(!stderr.contains("rendered level 0"), "{stderr}");
}

#[test]
fn the_demo_renders_by_attribute_with_a_legend() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("demo");
    ok(&["demo", store.to_str().unwrap()]);
    let out = dir.path().join("fa.png");
    let stderr = ok(&[
        "render",
        store.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--color",
        "attribute:fa",
        "--axes",
        "x,z",
        "--size",
        "200",
    ]);
    assert!(stderr.contains("values"), "{stderr}");
    let (w, h, opaque) = decode(&out);
    assert_eq!((w, h), (200, 200 + zv_render::LEGEND_HEIGHT));
    assert!(opaque > 500);
}

#[test]
fn bad_options_fail_with_exit_1_and_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("demo");
    ok(&["demo", store.to_str().unwrap()]);
    let s = store.to_str().unwrap();
    let out = dir.path().join("x.png");
    let o = out.to_str().unwrap();
    let unwritable = dir.path().join("missing/dir/x.png");
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["--color", "attribute:nope"],
            "unknown vertex attribute `nope`",
        ),
        (vec!["--axes", "x,w"], "unknown axis `w`"),
        (vec!["--box", "0,0,0,0,10,10"], "empty box"),
        (vec!["--box", "0,0,0,10"], "--box needs 6 values"),
        (
            vec!["--color", "rainbow"],
            "give `object` or `attribute:NAME`",
        ),
        (vec!["--level", "7"], "7/zarr.json"),
    ];
    for (extra, message) in cases {
        let mut args = vec!["render", s, "-o", o];
        args.extend(extra);
        let r = zv(&args);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let r = zv(&["render", s, "-o", unwritable.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("missing/dir/x.png"));
    assert!(!out.exists());
}
