//! Errors of a rendering ([`RenderError`]).

/// Why a store could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// Reading the store failed (the error names the store key).
    #[error(transparent)]
    Format(#[from] zv_format::Error),
    /// An axis name that the store does not have.
    #[error("unknown axis `{axis}` (the store's axes: {axes})")]
    UnknownAxis {
        /// The name given.
        axis: String,
        /// The store's axis names, comma-separated.
        axes: String,
    },
    /// A vertex attribute that the level does not have.
    #[error("unknown vertex attribute `{name}` at level {level} (vertex attributes: {available})")]
    UnknownAttribute {
        /// The name given.
        name: String,
        /// The level rendered.
        level: u32,
        /// The level's vertex attribute names, comma-separated (or "none").
        available: String,
    },
    /// An attribute that cannot be coloured by.
    #[error("vertex attribute `{name}` cannot colour a picture: {reason}")]
    UnsupportedAttribute {
        /// The attribute.
        name: String,
        /// Why not.
        reason: String,
    },
    /// A `--box` without volume on the projected axes, or with bounds out of order.
    #[error("empty box: {0}")]
    EmptyBox(String),
    /// A view that cannot be fitted (bounds not finite or out of order).
    #[error("cannot fit the view: {0}")]
    InvalidView(String),
    /// An option with a value out of range.
    #[error("{0}")]
    InvalidOption(String),
    /// PNG encoding failed.
    #[error("PNG encoding: {0}")]
    Png(#[from] png::EncodingError),
}

/// A result of this crate.
pub type Result<T, E = RenderError> = std::result::Result<T, E>;
