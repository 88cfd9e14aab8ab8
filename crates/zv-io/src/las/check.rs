//! What is checked before the `las` and `laz` crates read a file: counts and lengths the
//! header, the LAZ VLR and the LAZ chunks claim, against the file's length, because those
//! crates reserve memory at the sizes they read.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use super::read::{contained, las_error};
use crate::error::{FileName, Location, Result};

/// The size of an extended VLR's header (before its payload).
const EVLR_HEADER_LEN: u64 = 60;

/// What the header says about where the points are, checked against the file's length
/// before the `las` crate reads it (it allocates an extended VLR's payload at the length the
/// header gives). Gives the byte offset of the point records.
pub(super) fn precheck(file: &FileName, f: &mut File) -> Result<u64> {
    let len = f.metadata().map_err(|e| file.io(e))?.len();
    let raw =
        las::raw::Header::read_from(&mut *f).map_err(|e| las_error(file, Location::Byte(0), e))?;
    if let Some(evlr) = raw.evlr {
        let start = evlr.start_of_first_evlr;
        let mut head = [0u8; EVLR_HEADER_LEN as usize];
        let fits = start
            .checked_add(EVLR_HEADER_LEN)
            .is_some_and(|end| end <= len);
        if !fits {
            return Err(file.parse(
                Location::Byte(start),
                format!("the header's first extended VLR starts at byte {start}, past the end of the file ({len} bytes)"),
            ));
        }
        f.seek(SeekFrom::Start(start)).map_err(|e| file.io(e))?;
        f.read_exact(&mut head).map_err(|e| file.io(e))?;
        let mut n = [0u8; 8];
        n.copy_from_slice(&head[20..28]);
        let payload = u64::from_le_bytes(n);
        if payload > len - start - EVLR_HEADER_LEN {
            return Err(file.parse(
                Location::Byte(start + 20),
                format!(
                    "the extended VLR claims {payload} bytes; the file has {} after it",
                    len - start - EVLR_HEADER_LEN
                ),
            ));
        }
    }
    let compressed = raw.point_data_record_format & 0x80 != 0;
    let n = if raw.number_of_point_records > 0 {
        u64::from(raw.number_of_point_records)
    } else {
        raw.large_file.map_or(0, |l| l.number_of_point_records)
    };
    let record = u64::from(raw.point_data_record_length);
    let start = u64::from(raw.offset_to_point_data);
    if !compressed && record > 0 {
        let fit = len.saturating_sub(start) / record;
        if fit < n {
            return Err(file.parse(
                Location::Byte(start + fit * record),
                format!(
                    "the file ends in point {fit}: the header says {n} points of {record} bytes from byte {start} (the file has {len} bytes)"
                ),
            ));
        }
    }
    if compressed {
        check_chunk_table(file, f, start, len)?;
    }
    f.seek(SeekFrom::Start(0)).map_err(|e| file.io(e))?;
    Ok(start)
}

/// The LAZ chunk table's count against the file's length (the `laz` crate reserves room for
/// the count it reads; every chunk takes at least a byte of the file). The table is found as
/// the `laz` crate finds it: at the offset stored where the point data starts, else at the
/// offset in the file's last 8 bytes; a file with neither is left to the `laz` crate's error.
fn check_chunk_table(file: &FileName, f: &mut File, start: u64, len: u64) -> Result<()> {
    let mut word = [0u8; 8];
    let read_at = |f: &mut File, at: u64, buf: &mut [u8]| -> Result<bool> {
        if at.checked_add(buf.len() as u64).is_none_or(|end| end > len) {
            return Ok(false);
        }
        f.seek(SeekFrom::Start(at)).map_err(|e| file.io(e))?;
        f.read_exact(buf).map_err(|e| file.io(e))?;
        Ok(true)
    };
    if !read_at(f, start, &mut word)? {
        return Err(file.parse(
            Location::Byte(start),
            "the LAZ point data is missing (the file ends where it starts)",
        ));
    }
    let mut table = i64::from_le_bytes(word);
    if table <= start as i64 && len >= 8 && read_at(f, len - 8, &mut word)? {
        table = i64::from_le_bytes(word);
    }
    let Ok(table) = u64::try_from(table) else {
        return Ok(());
    };
    if table <= start {
        return Ok(());
    }
    if !read_at(f, table, &mut word)? {
        return Err(file.parse(
            Location::Byte(start),
            format!(
                "the LAZ chunk table is at byte {table}, past the end of the file ({len} bytes)"
            ),
        ));
    }
    let chunks = u32::from_le_bytes([word[4], word[5], word[6], word[7]]);
    if u64::from(chunks) > len {
        return Err(file.parse(
            Location::Byte(table + 4),
            format!("the LAZ chunk table claims {chunks} chunks; the file has {len} bytes"),
        ));
    }
    Ok(())
}

/// The LAZ item types of the standard point fields (laz-rs's `LazItemType` numbers): point
/// formats 0–5 (Point10, GpsTime, RGB12) and 6–8 (Point14, RGB14, RGBNIR14).
const LAZ_STANDARD_ITEMS: [u16; 6] = [6, 7, 8, 10, 11, 12];

/// The items the LAZ VLR lists must be standard point fields adding up to the point record:
/// the `laz` decoder is built from that list, with models per byte of any extra-bytes item,
/// so a forged list could make it allocate gigabytes for a small file. Gives the number of
/// layer sizes a layered (point formats 6–10) chunk starts with: 0 for point-wise chunks.
pub(super) fn check_laz_items(file: &FileName, header: &las::Header) -> Result<u64> {
    let Some(vlr) = header
        .vlrs()
        .iter()
        .find(|v| v.user_id == "laszip encoded" && v.record_id == 22204)
    else {
        return Ok(0); // the las crate says it is missing
    };
    let d = &vlr.data;
    let u16_at = |i: usize| d.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let bad = |why: String| file.unsupported(format!("the LAZ VLR: {why}"));
    let n = u16_at(32).ok_or_else(|| bad(format!("{} bytes are too few", d.len())))?;
    let mut total = 0u32;
    let mut layers = 0u64;
    for i in 0..usize::from(n) {
        let (Some(ty), Some(size)) = (u16_at(34 + 6 * i), u16_at(36 + 6 * i)) else {
            return Err(bad(format!("it lists {n} items but holds fewer")));
        };
        if !LAZ_STANDARD_ITEMS.contains(&ty) {
            return Err(bad(format!(
                "item {i} is of type {ty}: zv reads the standard point fields only"
            )));
        }
        total += u32::from(size);
        // Point14 has nine layers, RGB14 one, RGBNIR14 two (RGB and NIR)
        layers += match ty {
            10 => 9,
            11 => 1,
            12 => 2,
            _ => 0,
        };
    }
    let record = u32::from(header.point_format().len());
    if total != record {
        return Err(bad(format!(
            "its items hold {total} bytes a point; the point records have {record}"
        )));
    }
    Ok(layers)
}

/// The layer sizes of every chunk of layered LAZ data, against the file's length: the `laz`
/// decoder reads a chunk's layers into buffers of the sizes the chunk's header gives, before
/// reading them. A layered chunk is the first point as is (`record` bytes), its point count,
/// `layers` sizes (u32 each) and the layers; the next chunk follows. The walk stops where a
/// chunk header no longer fits the file (the decoder's read fails there too), so it reads at
/// most one header per `record + 4` bytes of the file.
pub(super) fn check_laz_layers(
    file: &FileName,
    f: &mut File,
    start: u64,
    record: u16,
    layers: u64,
) -> Result<()> {
    if layers == 0 {
        return Ok(());
    }
    let len = f.metadata().map_err(|e| file.io(e))?.len();
    let head = u64::from(record) + 4 + 4 * layers;
    let mut sizes = vec![0u8; (4 * layers) as usize];
    // the chunks start after the 8-byte offset of the chunk table
    let mut at = start + 8;
    while at.checked_add(head).is_some_and(|end| end <= len) {
        f.seek(SeekFrom::Start(at + u64::from(record) + 4))
            .map_err(|e| file.io(e))?;
        f.read_exact(&mut sizes).map_err(|e| file.io(e))?;
        let room = len - at - head;
        let mut total = 0u64;
        for (l, b) in sizes.chunks_exact(4).enumerate() {
            let size = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            if size > room {
                return Err(file.parse(
                    Location::Byte(at + u64::from(record) + 4 + 4 * l as u64),
                    format!(
                        "the LAZ chunk at byte {at} claims a layer of {size} bytes; {room} bytes follow its header"
                    ),
                ));
            }
            total += size;
        }
        at += head + total;
    }
    f.seek(SeekFrom::Start(0)).map_err(|e| file.io(e))?;
    Ok(())
}

/// The points a variable-size LAZ chunk table counts, against the header's: the `laz`
/// decoder indexes the table by chunk while it reads the header's number of points, and
/// panics past its end. (Fixed-size chunks are not counted by the table.)
pub(super) fn check_laz_chunk_counts(
    file: &FileName,
    f: &mut File,
    start: u64,
    header: &las::Header,
) -> Result<()> {
    let Some(vlr) = header
        .vlrs()
        .iter()
        .find(|v| v.user_id == "laszip encoded" && v.record_id == 22204)
    else {
        return Ok(());
    };
    let vlr = laz::LazVlr::from_buffer(&vlr.data)
        .map_err(|e| file.unsupported(format!("the LAZ VLR: {e}")))?;
    if !vlr.uses_variable_size_chunks() {
        return Ok(());
    }
    f.seek(SeekFrom::Start(start)).map_err(|e| file.io(e))?;
    // the table's entries are arithmetic-coded too: the decoder's panics are contained
    let table = contained(file, Location::Byte(start), || {
        laz::laszip::ChunkTable::read_from(std::io::BufReader::new(&mut *f), &vlr)
            .map_err(|e| file.parse(Location::Byte(start), format!("the LAZ chunk table: {e}")))
    })?;
    let counted = table
        .as_ref()
        .iter()
        .fold(0u64, |n, c| n.saturating_add(c.point_count));
    let n = header.number_of_points();
    if counted < n {
        return Err(file.parse(
            Location::Byte(start),
            format!("the LAZ chunk table counts {counted} points; the header says {n}"),
        ));
    }
    f.seek(SeekFrom::Start(0)).map_err(|e| file.io(e))?;
    Ok(())
}
