//! The errors of the converters: every one names the file, and a parse error the line or
//! byte offset where the input went wrong.

use std::fmt;

/// Where in a file an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A line of a text file (1-based).
    Line(u64),
    /// A byte offset of a binary file (0-based).
    Byte(u64),
    /// A point record of a binary point file (0-based), where no byte offset can be given
    /// (compressed data).
    Point(u64),
    /// The end of the file.
    End,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(l) => write!(f, "line {l}"),
            Location::Byte(b) => write!(f, "byte {b}"),
            Location::Point(p) => write!(f, "point {p}"),
            Location::End => write!(f, "end of file"),
        }
    }
}

/// An error of an import or export.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file is malformed at a place.
    #[error("{file}: {at}: {reason}")]
    Parse {
        /// The file.
        file: String,
        /// Where.
        at: Location,
        /// What is wrong.
        reason: String,
    },
    /// The file is well formed but holds something this format's converter does not take (or
    /// the store holds something the output format cannot hold).
    #[error("{file}: {reason}")]
    Unsupported {
        /// The file.
        file: String,
        /// What cannot be converted.
        reason: String,
    },
    /// Reading or writing the file failed.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The ZV writer or reader refused (the message names the store key or the input item).
    #[error("{file}: {source}")]
    Format {
        /// The file being imported or exported.
        file: String,
        /// The writer's or reader's error.
        #[source]
        source: zv_format::Error,
    },
}

/// The result of the converters.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The name of a file in error messages, and the constructors of its errors.
#[derive(Debug, Clone)]
pub(crate) struct FileName(pub(crate) String);

impl FileName {
    /// A parse error at `at`.
    pub(crate) fn parse(&self, at: Location, reason: impl Into<String>) -> Error {
        Error::Parse {
            file: self.0.clone(),
            at,
            reason: reason.into(),
        }
    }

    /// Something the converter does not take.
    pub(crate) fn unsupported(&self, reason: impl Into<String>) -> Error {
        Error::Unsupported {
            file: self.0.clone(),
            reason: reason.into(),
        }
    }

    /// An I/O error.
    pub(crate) fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            file: self.0.clone(),
            source,
        }
    }

    /// A writer or reader error.
    pub(crate) fn format(&self, source: zv_format::Error) -> Error {
        Error::Format {
            file: self.0.clone(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file_and_the_place() {
        let f = FileName("a.ply".into());
        assert_eq!(
            f.parse(Location::Byte(12), "truncated").to_string(),
            "a.ply: byte 12: truncated"
        );
        assert_eq!(
            f.parse(Location::Line(3), "bad").to_string(),
            "a.ply: line 3: bad"
        );
        assert_eq!(f.unsupported("no").to_string(), "a.ply: no");
    }
}
