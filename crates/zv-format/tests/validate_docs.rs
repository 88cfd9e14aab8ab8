//! `docs/validation.md` lists every validation rule with its level, severity and text, as
//! the rule table of `zv_format::validate` defines them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[test]
fn every_rule_is_documented_as_defined() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/validation.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let rows = doc.lines().filter(|l| l.starts_with("| `")).count();
    assert_eq!(rows, zv_format::validate::RULES.len());
    for r in zv_format::validate::RULES {
        let row = format!(
            "| `{}` | {} | {} | {} |",
            r.id, r.level, r.severity, r.checks
        );
        assert!(doc.contains(&row), "docs/validation.md lacks the row {row}");
    }
}
