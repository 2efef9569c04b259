//! Projected vectors held as 8-bit integers in column-major blocks, and the exact
//! nearest-neighbour scan over them, both as an index file stores them.

/// Rows per block. A block's column is contiguous, so adding a query dimension's contribution
/// to every row of a block is one vectorised loop; a block's dot products (64 KB) stay in the
/// processor's cache.
pub const BLOCK: usize = 16384;

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
    nonzeros: Vec<(u32, i32)>,
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
            .map(|(dim, &value)| (dim as u32, i32::from(value)))
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

    fn inverse_norm(&self, row: usize) -> f64 {
        super::layout::le_f64(self.inverse_norms, row * 8)
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
            .map(|&(dim, value)| value * i32::from(block[dim as usize * rows + row - first] as i8))
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
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2, checked just above.
                return unsafe { self.nearest_avx2(query, k, &include) };
            }
        }
        self.nearest_portable(query, k, &include)
    }

    /// The same scan compiled for AVX2, so the column loop runs on 256-bit registers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn nearest_avx2(
        &self,
        query: &QueryVector,
        k: usize,
        include: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        self.nearest_portable(query, k, include)
    }

    #[inline(always)]
    fn nearest_portable(
        &self,
        query: &QueryVector,
        k: usize,
        include: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        // Rank by dot / |row|, which orders rows as the cosine does (|query| is the same for
        // all), then compute the exact cosine of the k kept.
        // k comes from a flag or a settings file: never more room than there are rows.
        let mut best: Vec<(usize, f64)> = Vec::with_capacity(k.min(self.len).saturating_add(1));
        let mut all_dots = vec![0i32; BLOCK.min(self.len)];
        for first in (0..self.len).step_by(BLOCK) {
            let (rows, block) = self.block(first);
            let column = |dim: u32| &block[dim as usize * rows..(dim as usize + 1) * rows];
            let dots = &mut all_dots[..rows];
            dots.fill(0);
            // Four dimensions per pass: the dot products are read and written once for four
            // columns instead of once for each, which is most of the scan's memory traffic.
            // Integer sums are exact in any order, so results do not change.
            let mut groups = query.nonzeros.chunks_exact(4);
            for group in &mut groups {
                let [(d0, v0), (d1, v1), (d2, v2), (d3, v3)] =
                    [group[0], group[1], group[2], group[3]];
                let columns = column(d0)
                    .iter()
                    .zip(column(d1))
                    .zip(column(d2))
                    .zip(column(d3));
                for (dot, (((&a, &b), &c), &d)) in dots.iter_mut().zip(columns) {
                    *dot += v0 * i32::from(a as i8)
                        + v1 * i32::from(b as i8)
                        + v2 * i32::from(c as i8)
                        + v3 * i32::from(d as i8);
                }
            }
            for &(dim, value) in groups.remainder() {
                for (dot, &entry) in dots.iter_mut().zip(column(dim)) {
                    *dot += value * i32::from(entry as i8);
                }
            }
            for (offset, &dot) in dots.iter().enumerate() {
                let row = first + offset;
                let key = f64::from(dot) * self.inverse_norm(row);
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
mod tests {
    use super::*;

    /// Stored vectors of some rows, as an index file holds them.
    struct Stored {
        dims: usize,
        len: usize,
        values: Vec<u8>,
        squared: Vec<u8>,
        inverse: Vec<u8>,
    }

    impl Stored {
        fn new(rows: &[Vec<i32>]) -> Stored {
            let dims = rows[0].len();
            let quantised: Vec<i8> = rows.iter().flat_map(|row| quantize(row)).collect();
            let (squared, inverse) = norms(&quantised, dims);
            Stored {
                dims,
                len: rows.len(),
                values: lay_out(&quantised, dims),
                squared,
                inverse,
            }
        }

        fn view(&self) -> VectorsView<'_> {
            VectorsView::new(
                self.dims,
                self.len,
                &self.values,
                &self.squared,
                &self.inverse,
            )
        }
    }

    #[test]
    fn small_integer_vectors_are_exact() {
        let stored = Stored::new(&[vec![1, -2, 0]]);
        let query = QueryVector::new(&[1, -2, 0]);
        assert_eq!(stored.view().similarity(&query, 0), 1.0);
        assert_eq!(stored.view().row(0), [1, -2, 0]);
        assert!(QueryVector::new(&[0, 0, 0]).is_zero());
    }

    #[test]
    fn large_entries_are_scaled_without_changing_direction_much() {
        let original = [1000, -500, 3, 0];
        assert_eq!(quantize(&original), [127, -64, 0, 0]);
        let stored = Stored::new(&[original.to_vec()]);
        assert!(
            stored
                .view()
                .similarity(&QueryVector::new(&[2, -1, 0, 0]), 0)
                > 0.9999
        );
    }

    #[test]
    fn nearest_orders_by_similarity_and_honours_the_filter() {
        let stored = Stored::new(&[vec![1, 0], vec![0, 1], vec![1, 1], vec![3, 1]]);
        let query = QueryVector::new(&[1, 0]);
        let rows =
            |found: Vec<(usize, f64)>| found.into_iter().map(|(row, _)| row).collect::<Vec<_>>();
        assert_eq!(rows(stored.view().nearest(&query, 3, |_| true)), [0, 3, 2]);
        assert_eq!(
            rows(stored.view().nearest(&query, 2, |row| row != 0)),
            [3, 2]
        );
        // A query wider than the stored vectors (a crafted file) finds nothing.
        assert!(
            stored
                .view()
                .nearest(&QueryVector::new(&[0, 0, 1]), 3, |_| true)
                .is_empty()
        );
    }

    #[test]
    fn the_scan_is_exact_across_block_boundaries() {
        // 40,000 pseudo-random rows span three blocks, the last one partly filled; compare with
        // a plain computation.
        let dims = 37;
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 15) as i32 - 7
        };
        let rows: Vec<Vec<i32>> = (0..40_000)
            .map(|_| (0..dims).map(|_| next()).collect())
            .collect();
        let stored = Stored::new(&rows);
        let vectors = stored.view();
        let query_values: Vec<i32> = (0..dims).map(|_| next()).collect();
        let query = QueryVector::new(&query_values);
        let plain = |row: &Vec<i32>| {
            let dot: i32 = row.iter().zip(&query_values).map(|(a, b)| a * b).sum();
            let norm = |v: &[i32]| v.iter().map(|x| x * x).sum::<i32>() as f64;
            f64::from(dot) / (norm(row) * norm(&query_values)).sqrt()
        };
        let mut expected: Vec<(usize, f64)> = rows.iter().map(plain).enumerate().collect();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let found = vectors.nearest(&query, 10, |_| true);
        for ((row, similarity), (expected_row, expected_similarity)) in found.iter().zip(&expected)
        {
            assert_eq!(row, expected_row);
            assert!((similarity - expected_similarity).abs() < 1e-12);
        }
        for row in [0, BLOCK - 1, BLOCK, 2 * BLOCK + 5, 39_999] {
            let expected: Vec<i8> = quantize(&rows[row]);
            assert_eq!(vectors.row(row), expected, "row {row}");
        }
    }
}
