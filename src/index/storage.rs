//! Where an index's bytes lie (embedded in the binary, owned, or mapped from a file) and the ways
//! an [`Index`] is opened on them: from bytes, from a model embedded in the binary, from a file of
//! any format; and how it is saved.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::layout::kind;
use super::layout::reading::Layout;
use super::numbers::check_numbers;
use super::vectors::VectorsView;
use super::{FormatError, Index, LoadError, ModelParams, file, v1, v2, writer};

/// Where an index's bytes are.
#[derive(Clone)]
pub(super) enum Storage {
    /// A model embedded in the binary.
    Static(&'static [u8]),
    /// Built in memory, or converted from an older format.
    Owned(Arc<[u8]>),
    /// A file mapped into memory. Index files are replaced by renaming a new file over them,
    /// never rewritten in place, so the mapped bytes stay as they were checked.
    Mapped(Arc<memmap2::Mmap>),
}

impl Storage {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Storage::Static(bytes) => bytes,
            Storage::Owned(bytes) => bytes,
            Storage::Mapped(map) => map,
        }
    }
}

impl Index {
    /// Opens laid-out bytes: the directory is checked, the params decoded and checked, and the
    /// tables checked unless they are the binary's own (`Storage::Static`, which the test suite
    /// checks: reading every table costs a short check a third of its time). The header was
    /// checked by the caller.
    fn open(storage: Storage) -> Result<Index, FormatError> {
        let bytes = storage.bytes();
        let layout = Layout::read(bytes, file::HEADER_LEN)?;
        if !matches!(storage, Storage::Static(_)) {
            layout.check_contents(bytes)?;
            let vectors = VectorsView::new(
                layout.summary.dims,
                layout.summary.entries,
                layout.section(bytes, kind::VECTORS),
                layout.section(bytes, kind::SQUARED_NORMS),
                layout.section(bytes, kind::INVERSE_NORMS),
            );
            if !vectors.norms_agree() {
                return Err(FormatError::InvalidNumber(
                    "a vector's stored norm is not its own".to_string(),
                ));
            }
        }
        let params: ModelParams = file::decode_payload(layout.section(bytes, kind::PARAMS))?;
        if params.projection.dims as usize != layout.summary.dims {
            return Err(FormatError::Undecodable(
                "the vectors and the projection differ in dimension".to_string(),
            ));
        }
        check_numbers(
            &params,
            layout.summary.vocabulary,
            layout.summary.entries,
            bytes.len() - file::HEADER_LEN,
        )?;
        let mut params = params;
        for prior in &mut params.priors {
            prior.rename_old_features();
        }
        Ok(Index {
            storage,
            layout,
            params,
            params_changed: false,
            flaky_by_signal: OnceLock::new(),
        })
    }

    /// Bytes this build just laid out: read back without checking what it wrote.
    pub(super) fn laid_out(storage: Storage, params: ModelParams) -> Index {
        // The writer's own layout: a failure here is a bug in the writer, not a bad file.
        let layout = Layout::read(storage.bytes(), file::HEADER_LEN)
            .unwrap_or_else(|error| panic!("a laid-out index reads back: {error}"));
        Index {
            storage,
            layout,
            params,
            params_changed: false,
            flaky_by_signal: OnceLock::new(),
        }
    }

    /// The index in its file format.
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.params_changed {
            writer::relaid(self)
        } else {
            self.bytes().to_vec()
        }
    }

    /// The sections of this index as they are laid out, the params as they are now.
    pub(super) fn sections(&self) -> Vec<(u32, std::borrow::Cow<'_, [u8]>)> {
        kind::REQUIRED
            .iter()
            .map(|&section_kind| {
                let bytes = if section_kind == kind::PARAMS {
                    std::borrow::Cow::Owned(writer::encode_params(&self.params))
                } else {
                    std::borrow::Cow::Borrowed(self.section(section_kind))
                };
                (section_kind, bytes)
            })
            .collect()
    }

    /// Reads an index from the bytes of its file format, checking its checksum.
    pub fn from_bytes(bytes: &[u8]) -> Result<Index, FormatError> {
        let (version, payload) = file::open(bytes)?;
        match version {
            1 | 2 => Index::from_legacy(version, payload),
            3 => Index::open(Storage::Owned(Arc::from(bytes))),
            _ => Err(unknown_version(version)),
        }
    }

    /// Reads a model embedded in the binary, in place. Neither its checksum nor its tables are
    /// checked on every start (that would read every byte of it): the bytes are the binary's
    /// own, and the test suite opens each embedded model as a file, checking both.
    pub fn from_static(bytes: &'static [u8]) -> Result<Index, FormatError> {
        let (version, payload) = file::open_unverified(bytes)?;
        match version {
            1 | 2 => {
                file::open(bytes)?;
                Index::from_legacy(version, payload)
            }
            3 => Index::open(Storage::Static(bytes)),
            _ => Err(unknown_version(version)),
        }
    }

    /// Decodes a payload of format 1 or 2 and lays it out anew.
    fn from_legacy(version: u32, payload: &[u8]) -> Result<Index, FormatError> {
        let legacy = match version {
            1 => v1::decode(payload)?,
            _ => v2::decode(payload)?,
        };
        legacy.check(payload.len())?;
        let mut index = legacy.into_index();
        for prior in &mut index.params.priors {
            prior.rename_old_features();
        }
        Ok(index)
    }

    /// Loads an index file: a large one is mapped into memory, a small one read. The checksum
    /// is verified before anything else reads the bytes.
    pub fn load(path: &Path) -> Result<Index, LoadError> {
        let format_error = |source| LoadError::Format {
            path: path.to_path_buf(),
            source,
        };
        match file::map(path)? {
            file::Mapped::Read(bytes) => Index::from_bytes(&bytes).map_err(format_error),
            file::Mapped::Map(map) => {
                let (version, payload) = file::open(&map).map_err(format_error)?;
                match version {
                    1 | 2 => Index::from_legacy(version, payload),
                    3 => Index::open(Storage::Mapped(Arc::new(map))),
                    _ => Err(unknown_version(version)),
                }
                .map_err(format_error)
            }
        }
    }

    /// Loads an index file into memory, never mapping it: for a project index, which people and
    /// tools may rewrite in place (`cp backup .flakesense/index`), where a mapping of the old
    /// file would fault on the pages the rewrite cut off. Project indexes are small.
    pub fn load_unmapped(path: &Path) -> Result<Index, LoadError> {
        Index::from_bytes(&file::read(path)?).map_err(|source| LoadError::Format {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Writes the index atomically (see [`file::write_bytes`]).
    pub fn save(&self, place: crate::files::write::Place, path: &Path) -> anyhow::Result<()> {
        file::write_bytes(place, path, &self.to_bytes())
    }
}

/// A version below the current one that no release wrote (0): a damaged header.
fn unknown_version(version: u32) -> FormatError {
    FormatError::Undecodable(format!("no format has version {version}"))
}
