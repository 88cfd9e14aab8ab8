//! Where the dump's sections go ([`Sections`]): into a JSON object in memory, or written out
//! as they are made ([`Streamed`]), so that a dump holds one section at a time, not the
//! document.
//!
//! A streamed object is written byte for byte as `serde_json` writes the whole document
//! (`to_writer_pretty` or `to_writer`): each section is serialized alone, straight to the
//! output, and, pretty, indented to its depth as it goes — every line break of `serde_json`'s
//! pretty output is between tokens (a string holds its line breaks escaped), so indenting
//! after each one is exact. `serde_json` has no way to serialize a value at a depth other
//! than 0, hence this module.

use std::io::Write;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A JSON object built section by section, in order.
pub(super) trait Sections {
    /// Adds section `key` (keys are distinct).
    fn put(&mut self, key: &str, value: Value) -> Result<()>;

    /// Adds section `key`, an array of `items`.
    fn array(&mut self, key: &str, items: &mut dyn Iterator<Item = Value>) -> Result<()>;

    /// Adds section `key`, an object whose sections `fill` adds.
    fn nested(
        &mut self,
        key: &str,
        fill: &mut dyn FnMut(&mut dyn Sections) -> Result<()>,
    ) -> Result<()>;

    /// Adds section `key`, an array of `count` objects, the sections of object `i` added by
    /// `fill(i, …)`.
    fn nested_array(
        &mut self,
        key: &str,
        count: usize,
        fill: &mut dyn FnMut(usize, &mut dyn Sections) -> Result<()>,
    ) -> Result<()>;
}

impl Sections for Map<String, Value> {
    fn put(&mut self, key: &str, value: Value) -> Result<()> {
        self.insert(key.to_owned(), value);
        Ok(())
    }

    fn array(&mut self, key: &str, items: &mut dyn Iterator<Item = Value>) -> Result<()> {
        self.put(key, Value::Array(items.collect()))
    }

    fn nested(
        &mut self,
        key: &str,
        fill: &mut dyn FnMut(&mut dyn Sections) -> Result<()>,
    ) -> Result<()> {
        let mut inner = Map::new();
        fill(&mut inner)?;
        self.insert(key.to_owned(), Value::Object(inner));
        Ok(())
    }

    fn nested_array(
        &mut self,
        key: &str,
        count: usize,
        fill: &mut dyn FnMut(usize, &mut dyn Sections) -> Result<()>,
    ) -> Result<()> {
        let mut items = Vec::with_capacity(count);
        for i in 0..count {
            let mut inner = Map::new();
            fill(i, &mut inner)?;
            items.push(Value::Object(inner));
        }
        self.put(key, Value::Array(items))
    }
}

/// A JSON object written to `out` as its sections come.
pub(super) struct Streamed<'w> {
    out: &'w mut dyn Write,
    pretty: bool,
    /// The depth of the object's sections (1 for the document's).
    depth: usize,
    /// Sections written so far.
    count: usize,
}

/// An error writing the dump.
fn io_error(e: std::io::Error) -> Error {
    Error::Io {
        path: "<dump output>".into(),
        source: e,
    }
}

impl<'w> Streamed<'w> {
    /// Opens the object (`{`) at `depth`.
    pub(super) fn open(out: &'w mut dyn Write, pretty: bool, depth: usize) -> Result<Self> {
        out.write_all(b"{").map_err(io_error)?;
        Ok(Self {
            out,
            pretty,
            depth,
            count: 0,
        })
    }

    /// Closes the object (`}`, on a line of its own when pretty and not empty).
    pub(super) fn close(mut self) -> Result<()> {
        if self.pretty && self.count > 0 {
            self.newline(self.depth - 1)?;
        }
        self.out.write_all(b"}").map_err(io_error)
    }

    fn newline(&mut self, depth: usize) -> Result<()> {
        self.out.write_all(b"\n").map_err(io_error)?;
        for _ in 0..depth {
            self.out.write_all(b"  ").map_err(io_error)?;
        }
        Ok(())
    }

    /// Writes the separator and `"key":` of the next section.
    fn key(&mut self, key: &str) -> Result<()> {
        if self.count > 0 {
            self.out.write_all(b",").map_err(io_error)?;
        }
        self.count += 1;
        if self.pretty {
            self.newline(self.depth)?;
        }
        let key = serde_json::to_string(key).map_err(|e| io_error(e.into()))?;
        self.out.write_all(key.as_bytes()).map_err(io_error)?;
        let colon: &[u8] = if self.pretty { b": " } else { b":" };
        self.out.write_all(colon).map_err(io_error)
    }

    /// Writes what comes before element `i` of a list opened by a section of this object.
    fn element(&mut self, i: usize) -> Result<()> {
        if i > 0 {
            self.out.write_all(b",").map_err(io_error)?;
        }
        if self.pretty {
            self.newline(self.depth + 1)?;
        }
        Ok(())
    }

    /// Closes a list of `count` elements opened by a section of this object.
    fn end_list(&mut self, count: usize) -> Result<()> {
        if self.pretty && count > 0 {
            self.newline(self.depth)?;
        }
        self.out.write_all(b"]").map_err(io_error)
    }

    /// Writes `value` as it would be written at `depth`.
    fn value(&mut self, value: &Value, depth: usize) -> Result<()> {
        if !self.pretty {
            return serde_json::to_writer(&mut *self.out, value).map_err(|e| io_error(e.into()));
        }
        let mut indented = Indented {
            out: &mut *self.out,
            depth,
        };
        serde_json::to_writer_pretty(&mut indented, value).map_err(|e| io_error(e.into()))
    }
}

/// A writer that indents every line after the first by `depth` levels (two spaces each).
struct Indented<'a> {
    out: &'a mut dyn Write,
    depth: usize,
}

impl Write for Indented<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut lines = buf.split(|&b| b == b'\n');
        if let Some(first) = lines.next() {
            self.out.write_all(first)?;
        }
        for line in lines {
            self.out.write_all(b"\n")?;
            for _ in 0..self.depth {
                self.out.write_all(b"  ")?;
            }
            self.out.write_all(line)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl Sections for Streamed<'_> {
    fn put(&mut self, key: &str, value: Value) -> Result<()> {
        self.key(key)?;
        self.value(&value, self.depth)
    }

    fn array(&mut self, key: &str, items: &mut dyn Iterator<Item = Value>) -> Result<()> {
        self.key(key)?;
        self.out.write_all(b"[").map_err(io_error)?;
        let mut count = 0;
        for item in items {
            self.element(count)?;
            count += 1;
            self.value(&item, self.depth + 1)?;
        }
        self.end_list(count)
    }

    fn nested(
        &mut self,
        key: &str,
        fill: &mut dyn FnMut(&mut dyn Sections) -> Result<()>,
    ) -> Result<()> {
        self.key(key)?;
        let mut inner = Streamed::open(&mut *self.out, self.pretty, self.depth + 1)?;
        fill(&mut inner)?;
        inner.close()
    }

    fn nested_array(
        &mut self,
        key: &str,
        count: usize,
        fill: &mut dyn FnMut(usize, &mut dyn Sections) -> Result<()>,
    ) -> Result<()> {
        self.key(key)?;
        self.out.write_all(b"[").map_err(io_error)?;
        for i in 0..count {
            self.element(i)?;
            let mut inner = Streamed::open(&mut *self.out, self.pretty, self.depth + 2)?;
            fill(i, &mut inner)?;
            inner.close()?;
        }
        self.end_list(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The streamed bytes of `doc` (an object), its sections given one by one, nested
    /// objects streamed too.
    fn streamed(doc: &Value, pretty: bool) -> Vec<u8> {
        fn fill(s: &mut dyn Sections, m: &Map<String, Value>) -> Result<()> {
            for (k, v) in m {
                match v {
                    Value::Object(inner) => s.nested(k, &mut |s| fill(s, inner))?,
                    Value::Array(items)
                        if !items.is_empty() && items.iter().all(Value::is_object) =>
                    {
                        s.nested_array(k, items.len(), &mut |i, s| {
                            fill(s, items[i].as_object().unwrap())
                        })?
                    }
                    Value::Array(items) => s.array(k, &mut items.iter().cloned())?,
                    v => s.put(k, v.clone())?,
                }
            }
            Ok(())
        }
        let mut out = Vec::new();
        let mut s = Streamed::open(&mut out, pretty, 1).unwrap();
        fill(&mut s, doc.as_object().unwrap()).unwrap();
        s.close().unwrap();
        out
    }

    #[test]
    fn streamed_objects_are_serde_json_bytes() {
        let docs = [
            json!({}),
            json!({"a": {}}),
            json!({"a": [], "b": {"c": [1, [2, 3], {"d": "x\ny"}, [], {}], "e": {}}, "f": null}),
            json!({"a": [[[1.5]], [{"b": [[]]}]], "c": [{}]}),
            json!({"o": [{"id": 0, "v": [[1, 2]], "va": {"w": [1]}}, {}, {"id": 2, "l": []}]}),
            json!({"levels": {"0": {"chunks": [[0.5, 1e300], []], "objects": {"1": [1]}},
                              "1": {}}, "n": "NaN"}),
        ];
        for doc in &docs {
            assert_eq!(
                String::from_utf8(streamed(doc, true)).unwrap(),
                serde_json::to_string_pretty(doc).unwrap()
            );
            assert_eq!(
                String::from_utf8(streamed(doc, false)).unwrap(),
                serde_json::to_string(doc).unwrap()
            );
        }
    }

    #[test]
    fn sections_build_the_same_object_in_memory() {
        let mut m = Map::new();
        m.put("a", json!(1)).unwrap();
        m.nested("b", &mut |s| s.put("c", json!([2]))).unwrap();
        m.array("d", &mut [json!(3), json!([4])].into_iter())
            .unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"a": 1, "b": {"c": [2]}, "d": [3, [4]]})
        );
    }
}
