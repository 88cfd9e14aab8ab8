//! The rendered picture ([`Image`]): RGBA pixels, PNG encoding.

use crate::error::Result;

/// An RGBA image, 8 bits per channel, rows top to bottom. Pixels not drawn are transparent
/// (alpha 0), drawn pixels opaque.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
    /// The level rendered.
    pub level: u32,
    /// The vertices inside the view (drawn as dots or as ends of segments and triangles).
    pub vertices: u64,
    /// The attribute value range of the colouring (`None`: coloured by object).
    pub value_range: Option<(f64, f64)>,
}

impl Image {
    /// A transparent image.
    pub fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            rgba: vec![0; width as usize * height as usize * 4],
            level: 0,
            vertices: 0,
            value_range: None,
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The RGBA bytes, row after row.
    pub fn rgba(&self) -> &[u8] {
        &self.rgba
    }

    /// The RGBA value of pixel `(x, y)` (transparent outside the image).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        if x >= self.width || y >= self.height {
            return [0; 4];
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        [
            self.rgba[i],
            self.rgba[i + 1],
            self.rgba[i + 2],
            self.rgba[i + 3],
        ]
    }

    /// Sets pixel `(x, y)` to the opaque colour `rgb` (ignored outside the image).
    pub fn set(&mut self, x: u32, y: u32, rgb: [u8; 3]) {
        if x >= self.width || y >= self.height {
            return;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.rgba[i..i + 3].copy_from_slice(&rgb);
        self.rgba[i + 3] = 255;
    }

    /// The image as a PNG file (RGBA, 8 bits).
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
            encoder.set_color(png::ColorType::Rgba);
            encoder.set_depth(png::BitDepth::Eight);
            encoder.set_compression(png::Compression::Balanced);
            let mut writer = encoder.write_header()?;
            writer.write_image_data(&self.rgba)?;
            writer.finish()?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip() {
        let mut image = Image::new(3, 2);
        image.set(0, 0, [1, 2, 3]);
        image.set(2, 1, [250, 251, 252]);
        image.set(5, 5, [9, 9, 9]); // outside: ignored
        let png = image.to_png().unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (3, 2));
        assert_eq!(&buf[..info.buffer_size()], image.rgba());
        assert_eq!(image.pixel(0, 0), [1, 2, 3, 255]);
        assert_eq!(image.pixel(1, 0), [0, 0, 0, 0]);
    }
}
