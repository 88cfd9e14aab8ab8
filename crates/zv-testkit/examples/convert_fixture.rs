//! Prints a fixture's NAME.input.json as a zv-geometry/1 document.
#![allow(clippy::expect_used, missing_docs)]
fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: convert_fixture NAME.input.json");
    let input: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    println!("{}", zv_testkit::fixtures::input_to_geometry(&input));
}
