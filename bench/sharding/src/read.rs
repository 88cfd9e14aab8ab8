//! The two readers under test, each opened once per array: a full read and one-inner-chunk
//! region reads, both returning the raw little-endian element bytes (no conversion).

use std::path::Path;
use std::sync::Arc;

use zarrs::array::{Array as ZarrsArray, ArrayBytes as ZarrsBytes, ArraySubset};
use zarrs::filesystem::FilesystemStore as ZarrsStore;
use zv_core::array::Array as ZvArray;
use zv_core::codec::ArrayBytes as ZvBytes;
use zv_core::grid::Region;
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_store_fs::FilesystemStore as ZvStore;

use crate::BoxError;

/// One implementation's handle on the benchmark array.
pub trait Reader {
    /// The implementation's name in the report.
    fn name(&self) -> &'static str;
    /// The elements of the box `start`, `shape`, as bytes in C order.
    fn read(
        &self,
        start: &[u64],
        shape: &[u64],
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BoxError>;
}

/// zv: `Array::retrieve_region` over the filesystem store.
pub struct Zv(ZvArray);

impl Zv {
    /// Opens the array at the root of the filesystem store `root`.
    pub fn open(root: &Path) -> Result<Self, BoxError> {
        zv_codecs::link();
        let store: Arc<dyn Store> = Arc::new(ZvStore::new(root)?);
        Ok(Self(ZvArray::open(store, &NodePath::root())?))
    }
}

impl Reader for Zv {
    fn name(&self) -> &'static str {
        "zv"
    }

    fn read(
        &self,
        start: &[u64],
        shape: &[u64],
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BoxError> {
        let region = Region::new(start.to_vec(), shape.to_vec())?;
        match self.0.retrieve_region(&region)? {
            ZvBytes::Fixed(bytes) => {
                sink(&bytes);
                Ok(())
            }
            _ => Err("zv returned variable-length data for uint16".into()),
        }
    }
}

/// zarrs: `Array::retrieve_array_subset::<ArrayBytes>` over its filesystem store, default
/// codec options (its own rayon-based concurrency), no shard index cache.
pub struct Zarrs(ZarrsArray<ZarrsStore>);

impl Zarrs {
    /// Opens the array at the root of the filesystem store `root`.
    pub fn open(root: &Path) -> Result<Self, BoxError> {
        let store = Arc::new(ZarrsStore::new(root)?);
        Ok(Self(ZarrsArray::open(store, "/")?))
    }
}

impl Reader for Zarrs {
    fn name(&self) -> &'static str {
        "zarrs"
    }

    fn read(
        &self,
        start: &[u64],
        shape: &[u64],
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BoxError> {
        let subset = ArraySubset::new_with_start_shape(start.to_vec(), shape.to_vec())?;
        let bytes: ZarrsBytes<'static> = self.0.retrieve_array_subset(&subset)?;
        sink(&bytes.into_fixed()?);
        Ok(())
    }
}
