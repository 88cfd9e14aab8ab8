//! Property tests: PNG encoding round-trips through the `png` decoder, and the rasteriser
//! never panics nor draws beyond a segment's own pixels, whatever the coordinates.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use proptest::prelude::*;
use zv_render::{Canvas, Image, Ink, Vert};

fn decode(png: Vec<u8>) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn coordinate() -> impl Strategy<Value = f64> {
    prop_oneof![
        -20.0..60.0f64,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-1e300),
        Just(1e300),
    ]
}

proptest! {
    #[test]
    fn png_round_trip(w in 1u32..40, h in 1u32..40, pixels in prop::collection::vec((0u32..40, 0u32..40, any::<[u8; 3]>()), 0..50)) {
        let mut image = Image::new(w, h);
        for (x, y, c) in pixels {
            image.set(x, y, c);
        }
        let (dw, dh, rgba) = decode(image.to_png().unwrap());
        prop_assert_eq!((dw, dh), (w, h));
        prop_assert_eq!(rgba.as_slice(), image.rgba());
    }

    #[test]
    fn segments_stay_between_their_ends(ax in coordinate(), ay in coordinate(), bx in coordinate(), by in coordinate()) {
        let mut c = Canvas::new(40, 30);
        let ink = Ink::Rgb([1, 2, 3]);
        let a = Vert { x: ax, y: ay, ink };
        let b = Vert { x: bx, y: by, ink };
        c.line(&a, &b);
        c.triangle(&a, &b, &Vert { x: 5.0, y: 5.0, ink });
        if [ax, ay, bx, by].iter().all(|v| v.abs() < 1e6) {
            let mut c = Canvas::new(40, 30);
            c.line(&a, &b);
            for y in 0..30u32 {
                for x in 0..40u32 {
                    if c.get(x, y).is_some() {
                        // inside the segment's bounding box, widened by a pixel
                        prop_assert!(f64::from(x) + 1.0 >= ax.min(bx) - 1.0 && f64::from(x) <= ax.max(bx) + 1.0);
                        prop_assert!(f64::from(y) + 1.0 >= ay.min(by) - 1.0 && f64::from(y) <= ay.max(by) + 1.0);
                    }
                }
            }
        }
    }
}
