//! `zv render STORE -o preview.png [--level L] [--axes x,y] [--color object|attribute:NAME]
//! [--box x0,y0,z0,x1,y1,z1] [--size 1024] [--fill]`: a PNG projection of a store's geometry
//! (`zv_render::render`). The level rendered and the vertices drawn are reported on stderr.

use clap::Args;
use zv_format::ZvStore;
use zv_render::{render, ColorBy, RenderOptions};

use crate::CliResult;

/// The arguments of `zv render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// The store: a path, file:///path or memory://name.
    store: String,
    /// The PNG file to write.
    #[arg(long, short)]
    output: String,
    /// The level (default: the finest with at most 4 vertices per pixel).
    #[arg(long)]
    level: Option<u32>,
    /// The horizontal and vertical axis by name (default: the first two).
    #[arg(long, value_delimiter = ',', num_args = 1)]
    axes: Vec<String>,
    /// Colour by `object` or by `attribute:NAME` (a one-channel numeric vertex attribute,
    /// through viridis, with a legend).
    #[arg(long, default_value = "object")]
    color: String,
    /// Render only this box: the low corner then the high corner, one value per axis.
    #[arg(
        long = "box",
        value_delimiter = ',',
        num_args = 1,
        allow_negative_numbers = true
    )]
    bbox: Vec<f64>,
    /// The longer side of the picture in pixels.
    #[arg(long, default_value_t = 1024)]
    size: u32,
    /// Fill mesh triangles instead of drawing their edges.
    #[arg(long)]
    fill: bool,
}

/// Runs `zv render`.
pub(crate) fn run(args: RenderArgs) -> CliResult {
    let axes = match args.axes.as_slice() {
        [] => None,
        [x, y] => Some([x.clone(), y.clone()]),
        other => return Err(format!("--axes needs two names (x,y), got {}", other.len()).into()),
    };
    let bbox = match args.bbox.len() {
        0 => None,
        n if n % 2 == 0 => {
            let (lo, hi) = args.bbox.split_at(n / 2);
            Some((lo.to_vec(), hi.to_vec()))
        }
        n => {
            return Err(format!(
                "--box needs the low corner then the high corner (an even count), got {n} values"
            )
            .into())
        }
    };
    let options = RenderOptions {
        level: args.level,
        axes,
        color: ColorBy::parse(&args.color)?,
        bbox,
        size: args.size,
        fill: args.fill,
    };
    let store = ZvStore::open_url(&args.store)?;
    let image = render(&store, &options)?;
    let png = image.to_png()?;
    std::fs::write(&args.output, png).map_err(|e| format!("{}: {e}", args.output))?;
    let chosen = if args.level.is_some() {
        ""
    } else {
        " (the finest within 4 vertices per pixel)"
    };
    let range = image
        .value_range
        .map(|(a, b)| format!(", values {a} to {b}"))
        .unwrap_or_default();
    crate::progress::note(format_args!(
        "rendered level {}{chosen}: {} vertices, {}×{} pixels{range} → {}",
        image.level,
        image.vertices,
        image.width(),
        image.height(),
        args.output
    ));
    Ok(())
}
