//! Helpers shared by the zv-io tests.
#![allow(dead_code, clippy::unwrap_used)]

/// The bytes of a file kept in a test as lines of hexadecimal text (the crafted inputs of the
/// fuzz findings).
pub fn unhex(lines: &[&str]) -> Vec<u8> {
    let hex: String = lines.concat();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}
