//! Projected vectors held as 8-bit integers in column-major blocks, and the exact
//! nearest-neighbour scan over them, both as an index file stores them.

mod dots;

/// Rows per block. A block's column is contiguous, so adding a query dimension's contribution
/// to every row of a block is one vectorised loop; a block's dot products (64 KB) stay in the
/// processor's cache.
pub const BLOCK: usize = 16384;

/// Rows whose keys are compared with the k-th best at once, before any is ranked alone.
const RANK_CHUNK: usize = 16;

/// The stored vectors of an index, read where they lie (see [`lay_out`] for the layout).
///
/// Projected entries are small integers (token counts times +-1), so most rows are stored
/// exactly; a row whose largest entry exceeds 127 is scaled down and rounded. A query touches
/// only its non-zero dimensions: a test of 60 distinct tokens has about 250 of 940, so a scan
/// reads a quarter of the index. Rows are laid out column by column within blocks of [`BLOCK`]
/// rows so that those reads are contiguous.
#[derive(Debug, Clone, Copy)]
pub struct VectorsView<'a> {
    dims: usize,
    len: usize,
    /// Signed bytes, stored as `u8`.
    values: &'a [u8],
    /// Per row, its squared norm (u32).
    squared_norms: &'a [u8],
    /// Per row, 1/sqrt of its squared norm, 0 for a zero row (f64): ranks rows by cosine
    /// without a square root and a division per row.
    inverse_norms: &'a [u8],
}

/// Lays rows out as they are stored: blocks of [`BLOCK`] rows (the last one holding only its
/// rows), each block column by column, so row `r`'s value in dimension `d` lies at
/// `first * dims + d * rows + r - first` where `first` is the block's first row and `rows` its
/// number of rows. `rows` holds the quantised rows one after the other.
pub fn lay_out(rows: &[i8], dims: usize) -> Vec<u8> {
    let len = rows.len().checked_div(dims).unwrap_or(0);
    let mut values = vec![0u8; len * dims];
    for first in (0..len).step_by(BLOCK) {
        let block_rows = BLOCK.min(len - first);
        let block = &mut values[first * dims..(first + block_rows) * dims];
        // A tile of rows at a time, so that writing columns does not scatter single bytes
        // over hundreds of cache lines per row.
        const TILE: usize = 64;
        for tile in (0..block_rows).step_by(TILE) {
            let tile_rows = TILE.min(block_rows - tile);
            for dim in 0..dims {
                let column = &mut block[dim * block_rows + tile..][..tile_rows];
                for (offset, slot) in column.iter_mut().enumerate() {
                    *slot = rows[(first + tile + offset) * dims + dim] as u8;
                }
            }
        }
    }
    values
}

/// The squared norm (u32) and the inverse norm (f64) of each quantised row, as stored.
pub fn norms(rows: &[i8], dims: usize) -> (Vec<u8>, Vec<u8>) {
    let len = rows.len().checked_div(dims).unwrap_or(0);
    let mut squared = Vec::with_capacity(len * 4);
    let mut inverse = Vec::with_capacity(len * 8);
    for row in rows.chunks_exact(dims.max(1)).take(len) {
        let norm = squared_norm(row);
        squared.extend_from_slice(&norm.to_le_bytes());
        inverse.extend_from_slice(&inverse_norm(norm).to_le_bytes());
    }
    (squared, inverse)
}

/// A query prepared for scanning: its non-zero dimensions after quantisation.
#[derive(Debug, Clone)]
pub struct QueryVector {
    /// Values are signed bytes, as [`quantize`] makes them: the scan's kernel relies on it.
    nonzeros: Vec<dots::Term>,
    squared_norm: u32,
}

impl QueryVector {
    pub fn new(projected: &[i32]) -> QueryVector {
        let values = quantize(projected);
        let squared_norm = squared_norm(&values);
        let nonzeros = values
            .iter()
            .enumerate()
            .filter(|&(_, &value)| value != 0)
            .map(|(dim, &value)| (dim as u32, value))
            .collect();
        QueryVector {
            nonzeros,
            squared_norm,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.squared_norm == 0
    }
}

impl<'a> VectorsView<'a> {
    /// The vectors of `len` rows of `dims` dimensions, from sections whose lengths were checked
    /// against these counts.
    pub fn new(
        dims: usize,
        len: usize,
        values: &'a [u8],
        squared_norms: &'a [u8],
        inverse_norms: &'a [u8],
    ) -> VectorsView<'a> {
        VectorsView {
            dims,
            len,
            values,
            squared_norms,
            inverse_norms,
        }
    }

    /// The rows of the block starting at `first`, and that block's bytes.
    fn block(&self, first: usize) -> (usize, &'a [u8]) {
        let rows = BLOCK.min(self.len - first);
        (
            rows,
            &self.values[first * self.dims..(first + rows) * self.dims],
        )
    }

    fn squared_norm(&self, row: usize) -> u32 {
        super::layout::le_u32(self.squared_norms, row * 4)
    }

    /// Whether every row's stored squared norm is the one its values give, and its inverse norm
    /// the one that squared norm gives: a crafted norm made similarities of -4.999. One pass
    /// over the vectors, a block at a time.
    pub fn norms_agree(&self) -> bool {
        let mut sums = [0u32; BLOCK];
        (0..self.len).step_by(BLOCK).all(|first| {
            let (rows, block) = self.block(first);
            let sums = &mut sums[..rows];
            sums.fill(0);
            for column in block.chunks_exact(rows) {
                for (sum, &value) in sums.iter_mut().zip(column) {
                    let value = i32::from(value as i8);
                    *sum += (value * value) as u32;
                }
            }
            sums.iter().enumerate().all(|(offset, &sum)| {
                let row = first + offset;
                let inverse = f64::from_le_bytes(
                    self.inverse_norms[row * 8..row * 8 + 8]
                        .try_into()
                        .unwrap_or_default(),
                );
                self.squared_norm(row) == sum && inverse.to_bits() == inverse_norm(sum).to_bits()
            })
        })
    }

    /// A row's values, for carrying an entry into a new index.
    #[cfg(test)]
    pub fn row(&self, row: usize) -> Vec<i8> {
        let first = row / BLOCK * BLOCK;
        let (rows, block) = self.block(first);
        (0..self.dims)
            .map(|dim| block[dim * rows + row - first] as i8)
            .collect()
    }

    /// Cosine similarity of a query with one row; 0 when either vector is zero.
    pub fn similarity(&self, query: &QueryVector, row: usize) -> f64 {
        let first = row / BLOCK * BLOCK;
        let (rows, block) = self.block(first);
        let dot: i32 = query
            .nonzeros
            .iter()
            .map(|&(dim, value)| {
                i32::from(value) * i32::from(block[dim as usize * rows + row - first] as i8)
            })
            .sum();
        cosine(dot, query.squared_norm, self.squared_norm(row))
    }

    /// The `k` rows most similar to `query` among those `include` accepts, most similar first;
    /// equal similarities keep row order, so results are deterministic.
    pub fn nearest(
        &self,
        query: &QueryVector,
        k: usize,
        include: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        if k == 0
            || query.is_zero()
            || query
                .nonzeros
                .iter()
                .any(|&(dim, _)| dim as usize >= self.dims)
        {
            return Vec::new();
        }
        // Rank by dot / |row|, which orders rows as the cosine does (|query| is the same for
        // all), then compute the exact cosine of the k kept.
        // k comes from a flag or a settings file: never more room than there are rows.
        let mut best: Vec<(usize, f64)> = Vec::with_capacity(k.min(self.len).saturating_add(1));
        let mut all_dots = vec![0i32; BLOCK.min(self.len)];
        for first in (0..self.len).step_by(BLOCK) {
            let (rows, block) = self.block(first);
            let dots = &mut all_dots[..rows];
            dots.fill(0);
            dots::add_block_dots(block, rows, &query.nonzeros, dots);
            // Read in place, without a call per row.
            let (inverse_norms, _) = self.inverse_norms[first * 8..(first + rows) * 8].as_chunks();
            let key =
                |dot: i32, inverse_norm: [u8; 8]| f64::from(dot) * f64::from_le_bytes(inverse_norm);
            let chunks = dots
                .chunks(RANK_CHUNK)
                .zip(inverse_norms.chunks(RANK_CHUNK));
            for (chunk, (dots, inverse_norms)) in chunks.enumerate() {
                // Once k rows are kept, most chunks hold none that beats the k-th: a loop the
                // compiler vectorises tells, and the rows are ranked one by one only when one
                // does. Keys are finite (norms are checked when an index is opened), so a chunk
                // left out holds only rows the loop below would have passed over.
                if let Some(&(_, kth)) = best.get(k - 1)
                    && !dots
                        .iter()
                        .zip(inverse_norms)
                        .fold(false, |beats, (&dot, &norm)| beats | (key(dot, norm) > kth))
                {
                    continue;
                }
                for (offset, (&dot, &inverse_norm)) in dots.iter().zip(inverse_norms).enumerate() {
                    let key = key(dot, inverse_norm);
                    let row = first + chunk * RANK_CHUNK + offset;
                    if (best.len() == k && key <= best[k - 1].1) || !include(row) {
                        continue;
                    }
                    let position = best
                        .iter()
                        .position(|&(_, other)| key > other)
                        .unwrap_or(best.len());
                    best.insert(position, (row, key));
                    best.truncate(k);
                }
            }
        }
        for (row, similarity) in &mut best {
            *similarity = self.similarity(query, *row);
        }
        best
    }
}

fn cosine(dot: i32, squared_norm_a: u32, squared_norm_b: u32) -> f64 {
    if squared_norm_a == 0 || squared_norm_b == 0 {
        return 0.0;
    }
    // The product of two u32 is exact in f64 up to 2^53, and sqrt is correctly rounded, so a
    // vector compared with itself gives exactly 1.
    f64::from(dot) / (f64::from(squared_norm_a) * f64::from(squared_norm_b)).sqrt()
}

/// A projected vector as stored: exact when every entry fits a signed byte, else scaled so that
/// the largest is 127.
pub fn quantize(projected: &[i32]) -> Vec<i8> {
    let largest = projected
        .iter()
        .map(|value| value.unsigned_abs())
        .max()
        .unwrap_or(0);
    if largest <= 127 {
        return projected.iter().map(|&value| value as i8).collect();
    }
    let largest = i64::from(largest);
    projected
        .iter()
        .map(|&value| {
            // Round half away from zero with integers only, so every platform agrees.
            let scaled = i64::from(value) * 127;
            let rounded = (scaled.abs() + largest / 2) / largest;
            (rounded * scaled.signum()) as i8
        })
        .collect()
}

fn inverse_norm(squared_norm: u32) -> f64 {
    if squared_norm == 0 {
        0.0
    } else {
        1.0 / f64::from(squared_norm).sqrt()
    }
}

fn squared_norm(values: &[i8]) -> u32 {
    values
        .iter()
        .map(|&value| (i32::from(value) * i32::from(value)) as u32)
        .sum()
}

#[cfg(test)]
mod tests;
