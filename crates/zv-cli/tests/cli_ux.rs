//! The command's manners: an example in every `--help`, the documented exit codes
//! (`docs/cli.md`), progress bars only on a terminal, `--quiet`, and `--json` output that
//! parses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use common::zv;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The subcommands listed under "Commands:" in `zv ARGS --help` (without `help`).
fn subcommands(args: &[&str]) -> Vec<String> {
    let mut all = args.to_vec();
    all.push("--help");
    let help = text(&zv(&all).stdout);
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn every_command_s_help_has_an_example() {
    let mut checked = 0;
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let mut with_help = args.clone();
        with_help.push("--help");
        let out = zv(&with_help);
        assert!(out.status.success(), "{path:?}");
        let help = text(&out.stdout);
        assert!(
            help.contains("Examples:\n  zv "),
            "zv {path:?} --help:\n{help}"
        );
        checked += 1;
        for sub in subcommands(&args) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
    }
    // zv, its 12 commands, bench's, zarr's and convert's subcommands
    assert!(checked >= 18, "{checked}");
}

/// A point cloud of `n` points as CSV in `dir`.
fn csv(dir: &Path, n: usize) -> String {
    let mut t = String::from("x,y,z,v\n");
    for i in 0..n {
        t += &format!("{},{},{},{i}\n", i % 17, (i * 7) % 23, (i * 3) % 19);
    }
    let path = dir.join("p.csv");
    std::fs::write(&path, t).unwrap();
    path.to_str().unwrap().to_owned()
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

#[test]
fn exit_codes_are_0_ok_1_failure_or_invalid_2_usage_or_could_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    // usage errors
    for args in [
        &["frobnicate"][..],
        &["info"],
        &["validate", "x", "--level", "9"],
        &["export", "x", "--bogus"],
    ] {
        let out = zv(args);
        assert_eq!(code(&out), Some(2), "{args:?}: {}", text(&out.stderr));
    }
    // a missing store
    let missing = d("nothing-here.zarr");
    for args in [
        &["info", &missing][..],
        &["dump", &missing],
        &["export", &missing, "-o", &d("out.csv")],
        &["ls", &missing],
    ] {
        let out = zv(args);
        assert_eq!(code(&out), Some(1), "{args:?}");
        assert!(text(&out.stderr).starts_with("zv: error: "), "{args:?}");
    }
    let out = zv(&["validate", &missing]);
    assert_eq!(code(&out), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("nothing-here.zarr"));
    // an invalid store: a Zarr group that is not a ZV store
    std::fs::create_dir(d("plain.zarr")).unwrap();
    std::fs::write(
        d("plain.zarr/zarr.json"),
        r#"{"zarr_format": 3, "node_type": "group", "attributes": {}}"#,
    )
    .unwrap();
    let out = zv(&["validate", &d("plain.zarr")]);
    assert_eq!(code(&out), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("invalid"));
    let out = zv(&["info", &d("plain.zarr")]);
    assert_eq!(code(&out), Some(1));
    // success
    let out = zv(&["import", &csv(dir.path(), 50), &d("p.zarr")]);
    assert_eq!(code(&out), Some(0), "{}", text(&out.stderr));
    assert_eq!(code(&zv(&["validate", &d("p.zarr")])), Some(0));
}

#[test]
fn without_a_terminal_no_bar_is_drawn_and_quiet_silences_the_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    let file = csv(dir.path(), 2000);
    let chunked = ["--chunk-shape", "4,4,4"];
    let runs: Vec<(Vec<String>, &str)> = vec![
        (
            ["import", &file, &d("a.zarr")]
                .into_iter()
                .chain(chunked)
                .map(String::from)
                .collect(),
            "wrote 2000 vertices",
        ),
        (
            [
                "pyramid",
                &d("a.zarr"),
                "--levels",
                "2,1",
                "--chunk-scale",
                "2",
            ]
            .map(String::from)
            .to_vec(),
            "level 1: ",
        ),
        (vec!["export".into(), d("a.zarr"), d("a.ply")], ""),
        (vec!["validate".into(), d("a.zarr")], ""),
    ];
    for (args, note) in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = zv(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        // stderr is a pipe here: no bar, no terminal control sequences
        assert!(
            !err.contains('\u{1b}') && !err.contains('\r'),
            "{args:?}: {err:?}"
        );
        assert!(
            !err.contains("=>") && !err.contains(" left"),
            "{args:?}: {err:?}"
        );
        assert!(err.contains(note), "{args:?}: {err:?}");
    }
    // the same with --quiet (before or after the command): nothing on stderr
    for (i, quiet) in [["--quiet", "import"], ["import", "-q"]].iter().enumerate() {
        let target = d(&format!("q{i}.zarr"));
        let mut args = quiet.to_vec();
        args.extend([file.as_str(), &target]);
        let out = zv(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "{args:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
    let out = zv(&[
        "-q",
        "pyramid",
        &d("q0.zarr"),
        "--levels",
        "2,1",
        "--chunk-scale",
        "2",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    // errors are printed whatever --quiet says
    let out = zv(&["-q", "info", &d("missing.zarr")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("zv: error: "));
}

/// `zv ARGS`, which must succeed and print JSON on stdout.
fn json(args: &[&str]) -> Value {
    let out = zv(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out.stdout)))
}

#[test]
fn summaries_print_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    let file = csv(dir.path(), 300);
    let v = json(&["import", &file, &d("a.zarr"), "--json"]);
    assert_eq!(v["vertices"], 300);
    assert_eq!(v["store"], d("a.zarr"));
    assert!(v["chunks"].as_u64().unwrap() >= 1);
    let v = json(&[
        "pyramid",
        &d("a.zarr"),
        "--levels",
        "2,1;2,1",
        "--chunk-scale",
        "2,2",
        "--json",
    ]);
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[0]["level"], 1);
    assert!(levels[1]["vertices"].as_u64().unwrap() >= 1);
    let v = json(&["demo", &d("demo.zarr"), "--json"]);
    assert_eq!(v["streamlines"], 12);
    assert_eq!(v["streamline_0"]["vertices"], 60);
    let v = json(&[
        "bench",
        "stream-points",
        "memory://bench",
        "--points",
        "1000",
        "--batch",
        "300",
        "--json",
    ]);
    assert_eq!(v["points"], 1000);
    assert_eq!(v["read_back"], 1000);
    // the commands that print data print JSON already (or with --json)
    let v = json(&["info", &d("a.zarr"), "--json"]);
    assert!(v.is_object());
    let v = json(&["validate", &d("a.zarr"), "--json"]);
    assert!(v.is_object());
    let v = json(&["ls", &d("a.zarr"), "--json"]);
    assert!(v.is_array() || v.is_object());
    let v = json(&["zarr", "info", &d("a.zarr")]);
    assert_eq!(v["node_type"], "group");
}

#[cfg(feature = "legacy")]
#[test]
fn convert_legacy_prints_its_counts_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::legacy::zarr04(dir.path(), [5, 4], [2, 3], &[(1, 0)]);
    let dst = dir.path().join("new.zarr");
    let v = json(&[
        "convert",
        "legacy",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["arrays"], 1);
    assert_eq!(v["chunks_not_stored"], 1);
    assert_eq!(
        v["chunks_passed_through"].as_u64().unwrap() + v["chunks_reencoded"].as_u64().unwrap(),
        5
    );
}

/// Whether `script` (util-linux) is on the PATH.
fn have_script() -> bool {
    std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn on_a_terminal_a_bar_is_drawn_unless_quiet() {
    if !have_script() {
        eprintln!("skipped: no `script` (util-linux) to run zv on a pseudo-terminal");
        return;
    }
    let fixture = zv_testkit::env::fixtures_dir().join("points_basic.zarr");
    let run = |quiet: &str| {
        let command = format!(
            "{} {quiet} validate {}",
            env!("CARGO_BIN_EXE_zv"),
            fixture.display()
        );
        let out = std::process::Command::new("script")
            .args(["-qfec", &command, "/dev/null"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let shown = run("");
    assert!(shown.contains("validate ["), "{shown:?}");
    assert!(shown.contains(" steps"), "{shown:?}");
    assert!(shown.contains("valid at level 5"), "{shown:?}");
    let quiet = run("--quiet");
    assert!(!quiet.contains("validate ["), "{quiet:?}");
    assert!(quiet.contains("valid at level 5"), "{quiet:?}");
}

#[test]
fn pyramids_of_streamlines_from_the_cli_validate_at_level_5() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    let out = zv(&["-q", "demo", &d("s.zarr")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = json(&[
        "pyramid",
        &d("s.zarr"),
        "--levels",
        "2,1;2,2",
        "--chunk-scale",
        "2,2",
        "--json",
    ]);
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    // 720 demo vertices; interior runs merge, so every level has fewer
    let counts: Vec<u64> = levels
        .iter()
        .map(|l| l["vertices"].as_u64().unwrap())
        .collect();
    assert!(counts[0] < 720 && counts[1] < counts[0], "{counts:?}");
    assert_eq!(levels[0]["objects_kept"], 12);
    assert_eq!(levels[1]["objects_kept"], 6);
    assert_eq!(levels[0]["cross_level_links"], 720);
    let out = zv(&["validate", &d("s.zarr"), "--level", "5"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("valid at level 5"),
        "{}",
        text(&out.stdout)
    );
    let out = zv(&["info", &d("s.zarr")]);
    assert!(
        text(&out.stdout).contains("level 2: "),
        "{}",
        text(&out.stdout)
    );
}
