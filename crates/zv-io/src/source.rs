//! A buffered file reader that knows where it is: the byte offset (binary formats) and the
//! line (text formats), for error messages that point into the file.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use zv_format::progress::{Progress, Reporter};

use crate::error::{FileName, Location, Result};
use crate::options::ImportOptions;

/// The file at `path` (named `file` in errors) opened for an import: every byte read
/// advances the import's progress.
pub(crate) fn open(
    path: &Path,
    file: &FileName,
    opts: &ImportOptions,
) -> Result<Tracked<std::fs::File>> {
    let f = std::fs::File::open(path).map_err(|e| file.io(e))?;
    Ok(Tracked {
        inner: f,
        progress: opts.progress.clone(),
    })
}

/// A reader reporting the bytes it reads to a [`Progress`].
pub(crate) struct Tracked<R> {
    inner: R,
    progress: Reporter,
}

impl<R> Tracked<R> {
    /// The reader inside.
    pub(crate) fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

/// A buffered reader counting bytes and lines.
pub(crate) struct Source<R> {
    inner: BufReader<R>,
    /// Bytes consumed so far.
    pos: u64,
    /// Lines consumed so far (the current line is `line + 1`).
    line: u64,
    /// The file, for errors.
    pub(crate) file: FileName,
    /// The current text line and the cursor in it (text reading).
    text: String,
    cursor: usize,
}

impl<R: Read> Source<R> {
    /// A source over `inner`, named `file` in errors.
    pub(crate) fn new(inner: R, file: FileName) -> Self {
        Self {
            inner: BufReader::with_capacity(1 << 20, inner),
            pos: 0,
            line: 0,
            file,
            text: String::new(),
            cursor: 0,
        }
    }

    /// The byte offset of the next byte.
    pub(crate) fn byte(&self) -> Location {
        Location::Byte(self.pos)
    }

    /// The line last read (1-based).
    pub(crate) fn line(&self) -> Location {
        Location::Line(self.line.max(1))
    }

    /// The next line, without its end (`\n` or `\r\n`); `None` at the end of the file.
    pub(crate) fn read_line(&mut self) -> Result<Option<&str>> {
        self.text.clear();
        self.cursor = 0;
        let mut raw = Vec::new();
        let n = self
            .inner
            .read_until(b'\n', &mut raw)
            .map_err(|e| self.file.io(e))?;
        if n == 0 {
            return Ok(None);
        }
        self.pos += n as u64;
        self.line += 1;
        while matches!(raw.last(), Some(b'\n' | b'\r')) {
            raw.pop();
        }
        self.text = String::from_utf8(raw)
            .map_err(|_| self.file.parse(self.line(), "the line is not UTF-8 text"))?;
        // the line is consumed: tokens resume on the next one
        self.cursor = self.text.len();
        Ok(Some(&self.text))
    }

    /// The next whitespace-separated token, across lines; `None` at the end of the file.
    pub(crate) fn token(&mut self) -> Result<Option<&str>> {
        loop {
            let rest = &self.text[self.cursor..];
            let trimmed = rest.trim_start();
            if !trimmed.is_empty() {
                let start = self.cursor + (rest.len() - trimmed.len());
                let len = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
                self.cursor = start + len;
                return Ok(Some(&self.text[start..start + len]));
            }
            if self.read_line()?.is_none() {
                return Ok(None);
            }
            self.cursor = 0;
        }
    }

    /// Fills `buf` exactly; `Ok(false)` if the file ends first (at any byte).
    pub(crate) fn read_exact(&mut self, buf: &mut [u8]) -> Result<bool> {
        let mut done = 0;
        while done < buf.len() {
            let n = self
                .inner
                .read(&mut buf[done..])
                .map_err(|e| self.file.io(e))?;
            if n == 0 {
                self.pos += done as u64;
                return Ok(false);
            }
            done += n;
        }
        self.pos += done as u64;
        Ok(true)
    }

    /// Whether any byte is left.
    pub(crate) fn at_end(&mut self) -> Result<bool> {
        let buf = self.inner.fill_buf().map_err(|e| self.file.io(e))?;
        Ok(buf.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_cross_lines_and_lines_are_counted() {
        let mut s = Source::new(&b"a b\r\n\n  c\n"[..], FileName("t".into()));
        assert_eq!(s.token().ok().flatten(), Some("a"));
        assert_eq!(s.token().ok().flatten(), Some("b"));
        assert_eq!(s.line(), Location::Line(1));
        assert_eq!(s.token().ok().flatten(), Some("c"));
        assert_eq!(s.line(), Location::Line(3));
        assert_eq!(s.token().ok().flatten(), None);
    }

    #[test]
    fn read_exact_reports_a_short_file() {
        let mut s = Source::new(&b"abc"[..], FileName("t".into()));
        let mut two = [0u8; 2];
        assert!(matches!(s.read_exact(&mut two), Ok(true)));
        assert_eq!(s.byte(), Location::Byte(2));
        assert!(matches!(s.read_exact(&mut two), Ok(false)));
        assert!(matches!(s.at_end(), Ok(true)));
    }
}
