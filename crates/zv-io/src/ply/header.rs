//! The PLY header: `ply`, `format`, `comment`/`obj_info`, `element`, `property`,
//! `end_header`.

use std::io::Read;

use super::PlyType;
use crate::error::Result;
use crate::options::PlyEncoding;
use crate::source::Source;

/// A property of an element.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Property {
    /// The name.
    pub(crate) name: String,
    /// The value type (of the items, for lists).
    pub(crate) ty: PlyType,
    /// For lists: the type of the count.
    pub(crate) count: Option<PlyType>,
}

/// An element: its name, record count and properties.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Element {
    /// The name.
    pub(crate) name: String,
    /// The number of records.
    pub(crate) count: u64,
    /// The properties, in record order.
    pub(crate) properties: Vec<Property>,
}

/// A parsed header.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Header {
    /// The encoding of the body.
    pub(crate) encoding: PlyEncoding,
    /// The elements, in body order.
    pub(crate) elements: Vec<Element>,
    /// The `comment` lines.
    pub(crate) comments: Vec<String>,
}

/// Reads the header, up to and including `end_header`.
pub(crate) fn read_header<R: Read>(src: &mut Source<R>) -> Result<Header> {
    let first = src.read_line()?.map(str::to_owned);
    if first.as_deref().map(str::trim_end) != Some("ply") {
        return Err(src
            .file
            .parse(src.line(), "not a PLY file (the first line is not `ply`)"));
    }
    let mut encoding = None;
    let mut elements: Vec<Element> = Vec::new();
    let mut comments = Vec::new();
    loop {
        let Some(line) = src.read_line()?.map(str::to_owned) else {
            return Err(src.file.parse(
                crate::error::Location::End,
                "the header has no `end_header`",
            ));
        };
        let at = src.line();
        let bad = |reason: String| src.file.parse(at, reason);
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["end_header"] => break,
            ["comment", ..] => comments.push(line.trim_start()[7..].trim().to_owned()),
            ["obj_info", ..] => {}
            ["format", enc, version] => {
                if !version.starts_with('1') {
                    return Err(bad(format!(
                        "PLY version {version} (this reader takes 1.0)"
                    )));
                }
                encoding = Some(
                    PlyEncoding::parse(enc)
                        .filter(|_| enc.contains('_') || *enc == "ascii")
                        .ok_or_else(|| bad(format!("unknown encoding `{enc}`")))?,
                );
            }
            ["element", name, count] => {
                let count = count
                    .parse::<u64>()
                    .map_err(|_| bad(format!("element count `{count}` is not a number")))?;
                elements.push(Element {
                    name: (*name).to_owned(),
                    count,
                    properties: Vec::new(),
                });
            }
            ["property", "list", count, ty, name] => {
                let count = PlyType::parse(count)
                    .filter(|t| t.is_integer())
                    .ok_or_else(|| {
                        bad(format!("list count type `{count}` is not an integer type"))
                    })?;
                let ty = PlyType::parse(ty).ok_or_else(|| bad(format!("unknown type `{ty}`")))?;
                let el = elements
                    .last_mut()
                    .ok_or_else(|| bad("a property before any element".into()))?;
                el.properties.push(Property {
                    name: (*name).to_owned(),
                    ty,
                    count: Some(count),
                });
            }
            ["property", ty, name] => {
                let ty = PlyType::parse(ty).ok_or_else(|| bad(format!("unknown type `{ty}`")))?;
                let el = elements
                    .last_mut()
                    .ok_or_else(|| bad("a property before any element".into()))?;
                el.properties.push(Property {
                    name: (*name).to_owned(),
                    ty,
                    count: None,
                });
            }
            _ => return Err(bad(format!("unexpected header line `{line}`"))),
        }
    }
    let encoding = encoding.ok_or_else(|| {
        src.file
            .parse(src.line(), "the header has no `format` line")
    })?;
    Ok(Header {
        encoding,
        elements,
        comments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FileName;

    fn parse(text: &str) -> Result<Header> {
        let mut s = Source::new(text.as_bytes(), FileName("h.ply".into()));
        read_header(&mut s)
    }

    #[test]
    fn a_mesh_header_parses() {
        let h = parse("ply\nformat binary_big_endian 1.0\ncomment hi there\nelement vertex 3\nproperty float x\nproperty uchar red\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n");
        let h = h.ok();
        let h = h.as_ref();
        assert_eq!(h.map(|h| h.encoding), Some(PlyEncoding::BinaryBigEndian));
        assert_eq!(h.map(|h| h.elements.len()), Some(2));
        assert_eq!(
            h.map(|h| h.comments.clone()),
            Some(vec!["hi there".to_owned()])
        );
        assert_eq!(
            h.map(|h| h.elements[1].properties[0].count),
            Some(Some(PlyType::U8))
        );
    }

    #[test]
    fn bad_headers_name_the_line() {
        let e = parse("ply\nformat ascii 1.0\nelement vertex 3\nproperty float128 x\nend_header\n");
        assert_eq!(
            e.err().map(|e| e.to_string()),
            Some("h.ply: line 4: unknown type `float128`".to_owned())
        );
        let e = parse("ply\nformat ascii 1.0\nelement vertex 3\n");
        assert!(e
            .err()
            .is_some_and(|e| e.to_string().contains("no `end_header`")));
        let e = parse("solid x\n");
        assert!(e
            .err()
            .is_some_and(|e| e.to_string().contains("line 1: not a PLY file")));
    }
}
