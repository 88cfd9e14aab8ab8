//! Distributed writes from the command line, for people without Dask: `zv import --part K/N`
//! on N machines (each reads the whole file and writes the chunks its part owns), then
//! `zv commit STORE` once (see `zv_format::parts`).

use crate::CliResult;

/// Parses `K/N` (part K of N, `0 <= K < N`).
pub(crate) fn parse_part(text: &str) -> CliResult<(u32, u32)> {
    let bad = || format!("--part `{text}`: expected K/N with 0 <= K < N (e.g. 0/4)");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let k: u32 = k.trim().parse().map_err(|_| bad())?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || k >= n {
        return Err(bad().into());
    }
    Ok((k, n))
}

/// `zv commit STORE`: commits the distributed write (or the pyramid step) staged in the
/// store once every part has its receipt; names the parts still missing otherwise.
pub(crate) fn commit(store: &str, json: bool) -> CliResult {
    let target = zv_core::plugin::open_store(store)?;
    if zv_format::pyramid::parts::read_level_plan(target.as_ref())?.is_some() {
        return commit_level(store, target, json);
    }
    let summary = zv_format::parts::commit(target, Default::default())?;
    if json {
        return crate::print_json(&serde_json::json!({
            "store": store,
            "vertices": summary.vertices,
            "chunks": summary.chunks,
            "objects": summary.objects,
            "groups": summary.groups,
        }));
    }
    crate::progress::note(format_args!(
        "committed {store}: {} vertices in {} chunks, {} objects",
        summary.vertices, summary.chunks, summary.objects
    ));
    Ok(())
}

/// `zv commit STORE` of a pyramid step built in parts (`zv pyramid --step S --part K/N`).
fn commit_level(
    store: &str,
    target: std::sync::Arc<dyn zv_core::store::Store>,
    json: bool,
) -> CliResult {
    let l = zv_format::pyramid::parts::commit_level(target)?;
    if json {
        return crate::print_json(&serde_json::json!({
            "store": store, "level": l.level, "vertices": l.vertices, "chunks": l.chunks,
            "objects_kept": l.objects_kept, "cross_level_links": l.cross_level_links,
        }));
    }
    crate::progress::note(format_args!(
        "committed level {} of {store}: {} vertices in {} chunks, {} objects kept, {} cross-level links",
        l.level, l.vertices, l.chunks, l.objects_kept, l.cross_level_links
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_parse_as_k_of_n() {
        assert_eq!(parse_part("0/1").unwrap(), (0, 1));
        assert_eq!(parse_part("3/4").unwrap(), (3, 4));
        for bad in ["4/4", "1/0", "x/2", "1", "-1/2", "1/2/3"] {
            assert!(parse_part(bad).is_err(), "{bad}");
        }
    }
}
