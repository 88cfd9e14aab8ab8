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

/// `zv commit STORE`: commits the distributed write staged in the store once every part has
/// its receipt; names the parts still missing otherwise.
pub(crate) fn commit(store: &str, json: bool) -> CliResult {
    let target = zv_core::plugin::open_store(store)?;
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
