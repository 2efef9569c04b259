//! Projected vectors held as 8-bit integers in column-major blocks, and the exact
//! nearest-neighbour scan over them.

/// Rows per block. A block's column is contiguous, so adding a query dimension's contribution
/// to every row of a block is one vectorised loop over 256 bytes.
const BLOCK: usize = 16384;

/// One projected vector per entry, with each row's squared norm.
///
/// Projected entries are small integers (token counts times +-1), so most rows are stored
/// exactly; a row whose largest entry exceeds 127 is scaled down and rounded. A query touches
/// only its non-zero dimensions: a test of 60 distinct tokens has about 250 of 940, so a scan
/// reads a quarter of the index. Rows are laid out column by column within blocks of [`BLOCK`]
/// rows so that those reads are contiguous.
#[derive(Debug, Clone, Default)]
pub struct Vectors {
    dims: usize,
    len: usize,
    /// Block `b` holds rows `b * BLOCK ..`. Every block but the last is full.
    blocks: Vec<Block>,
    squared_norms: Vec<u32>,
    /// 1/sqrt of each squared norm (0 for a zero row): ranks rows by cosine without a square
    /// root and a division per row.
    inverse_norms: Vec<f64>,
}

/// Up to [`BLOCK`] rows, column by column: row `r`'s value in dimension `d` is at
/// `d * capacity + r`. A block starts small and doubles, so a small index stays small.
#[derive(Debug, Clone, Default)]
struct Block {
    capacity: usize,
    values: Box<[i8]>,
}

impl Block {
    fn with_capacity(dims: usize, capacity: usize) -> Block {
        Block {
            capacity,
            values: vec![0i8; dims * capacity].into_boxed_slice(),
        }
    }

    fn column(&self, dim: usize) -> &[i8] {
        &self.values[dim * self.capacity..(dim + 1) * self.capacity]
    }

    fn grown(&self, dims: usize) -> Block {
        let mut grown = Block::with_capacity(dims, (self.capacity * 2).clamp(16, BLOCK));
        for dim in 0..dims {
            grown.values[dim * grown.capacity..][..self.capacity].copy_from_slice(self.column(dim));
        }
        grown
    }
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

impl Vectors {
    pub fn new(dims: usize) -> Vectors {
        Vectors {
            dims,
            ..Vectors::default()
        }
    }

    pub fn push(&mut self, projected: &[i32]) {
        debug_assert_eq!(projected.len(), self.dims);
        let row = quantize(projected);
        self.push_quantized(&row);
    }

    /// Appends many rows at once. Rows are gathered row by row and written into the column
    /// layout a tile at a time, so building a large index does not scatter single bytes over
    /// hundreds of cache lines per row.
    pub fn extend(&mut self, rows: impl IntoIterator<Item = Vec<i32>>) {
        const TILE: usize = 64;
        let mut staged: Vec<Vec<i8>> = Vec::with_capacity(TILE);
        let mut rows = rows.into_iter().peekable();
        while rows.peek().is_some() {
            staged.clear();
            // Stage up to TILE rows that land in the same block.
            let room = BLOCK - self.len % BLOCK;
            staged.extend(rows.by_ref().take(TILE.min(room)).map(|row| quantize(&row)));
            let (block, offset) = (self.len / BLOCK, self.len % BLOCK);
            if block == self.blocks.len() {
                self.blocks.push(Block::with_capacity(self.dims, 16));
            }
            while offset + staged.len() > self.blocks[block].capacity {
                self.blocks[block] = self.blocks[block].grown(self.dims);
            }
            let target = &mut self.blocks[block];
            for dim in 0..self.dims {
                let column = &mut target.values[dim * target.capacity + offset..][..staged.len()];
                for (slot, row) in column.iter_mut().zip(&staged) {
                    *slot = row[dim];
                }
            }
            for row in &staged {
                let squared_norm = squared_norm(row);
                self.squared_norms.push(squared_norm);
                self.inverse_norms.push(inverse_norm(squared_norm));
            }
            self.len += staged.len();
        }
    }

    fn push_quantized(&mut self, row: &[i8]) {
        let (block, offset) = (self.len / BLOCK, self.len % BLOCK);
        if block == self.blocks.len() {
            self.blocks.push(Block::with_capacity(self.dims, 16));
        }
        if offset == self.blocks[block].capacity {
            self.blocks[block] = self.blocks[block].grown(self.dims);
        }
        let block = &mut self.blocks[block];
        for (dim, &value) in row.iter().enumerate() {
            block.values[dim * block.capacity + offset] = value;
        }
        let squared_norm = squared_norm(row);
        self.squared_norms.push(squared_norm);
        self.inverse_norms.push(inverse_norm(squared_norm));
        self.len += 1;
    }

    fn row(&self, row: usize) -> Vec<i8> {
        let (block, offset) = (&self.blocks[row / BLOCK], row % BLOCK);
        (0..self.dims)
            .map(|dim| block.column(dim)[offset])
            .collect()
    }

    /// Removes a row, moving the later ones up. It rewrites the blocks, which is fine for the
    /// rare edits of an index (a user marking a test) and keeps the scan simple.
    pub fn remove(&mut self, row: usize) {
        let rows: Vec<Vec<i8>> = (0..self.len)
            .filter(|&other| other != row)
            .map(|other| self.row(other))
            .collect();
        *self = Vectors::new(self.dims);
        for values in rows {
            self.push_quantized(&values);
        }
    }

    /// Cosine similarity of a query with one row; 0 when either vector is zero.
    pub fn similarity(&self, query: &QueryVector, row: usize) -> f64 {
        let (block, offset) = (&self.blocks[row / BLOCK], row % BLOCK);
        let dot: i32 = query
            .nonzeros
            .iter()
            .map(|&(dim, value)| value * i32::from(block.column(dim as usize)[offset]))
            .sum();
        cosine(dot, query.squared_norm, self.squared_norms[row])
    }

    /// The `k` rows most similar to `query` among those `include` accepts, most similar first;
    /// equal similarities keep row order, so results are deterministic.
    pub fn nearest(
        &self,
        query: &QueryVector,
        k: usize,
        include: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        if k == 0 || query.is_zero() {
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
        let mut all_dots = [0i32; BLOCK];
        for (block_number, block) in self.blocks.iter().enumerate() {
            let dots = &mut all_dots[..block.capacity];
            dots.fill(0);
            // Four dimensions per pass: the dot products are read and written once for four
            // columns instead of once for each, which is most of the scan's memory traffic.
            // Integer sums are exact in any order, so results do not change.
            let mut groups = query.nonzeros.chunks_exact(4);
            for group in &mut groups {
                let [(d0, v0), (d1, v1), (d2, v2), (d3, v3)] =
                    [group[0], group[1], group[2], group[3]];
                let columns = block
                    .column(d0 as usize)
                    .iter()
                    .zip(block.column(d1 as usize))
                    .zip(block.column(d2 as usize))
                    .zip(block.column(d3 as usize));
                for (dot, (((&a, &b), &c), &d)) in dots.iter_mut().zip(columns) {
                    *dot += v0 * i32::from(a)
                        + v1 * i32::from(b)
                        + v2 * i32::from(c)
                        + v3 * i32::from(d);
                }
            }
            for &(dim, value) in groups.remainder() {
                for (dot, &entry) in dots.iter_mut().zip(block.column(dim as usize)) {
                    *dot += value * i32::from(entry);
                }
            }
            let first_row = block_number * BLOCK;
            let rows = block.capacity.min(self.len - first_row);
            for (offset, &dot) in dots[..rows].iter().enumerate() {
                let row = first_row + offset;
                let key = f64::from(dot) * self.inverse_norms[row];
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

fn quantize(projected: &[i32]) -> Vec<i8> {
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

    #[test]
    fn small_integer_vectors_are_exact() {
        let mut vectors = Vectors::new(3);
        vectors.push(&[1, -2, 0]);
        let query = QueryVector::new(&[1, -2, 0]);
        assert_eq!(vectors.similarity(&query, 0), 1.0);
        assert!(QueryVector::new(&[0, 0, 0]).is_zero());
    }

    #[test]
    fn large_entries_are_scaled_without_changing_direction_much() {
        let original = [1000, -500, 3, 0];
        assert_eq!(quantize(&original), [127, -64, 0, 0]);
        let mut vectors = Vectors::new(4);
        vectors.push(&original);
        assert!(vectors.similarity(&QueryVector::new(&[2, -1, 0, 0]), 0) > 0.9999);
    }

    #[test]
    fn nearest_orders_by_similarity_and_honours_the_filter() {
        let mut vectors = Vectors::new(2);
        for row in [[1, 0], [0, 1], [1, 1], [3, 1]] {
            vectors.push(&row);
        }
        let query = QueryVector::new(&[1, 0]);
        let rows =
            |found: Vec<(usize, f64)>| found.into_iter().map(|(row, _)| row).collect::<Vec<_>>();
        assert_eq!(rows(vectors.nearest(&query, 3, |_| true)), [0, 3, 2]);
        assert_eq!(rows(vectors.nearest(&query, 2, |row| row != 0)), [3, 2]);
        vectors.remove(3);
        assert_eq!(rows(vectors.nearest(&query, 5, |_| true)), [0, 2, 1]);
    }

    #[test]
    fn the_scan_is_exact_across_block_boundaries() {
        // 10,000 pseudo-random rows span three blocks, the last one growing; compare with a
        // plain computation.
        let dims = 37;
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 15) as i32 - 7
        };
        let rows: Vec<Vec<i32>> = (0..10_000)
            .map(|_| (0..dims).map(|_| next()).collect())
            .collect();
        let mut vectors = Vectors::new(dims);
        rows.iter().take(5).for_each(|row| vectors.push(row));
        vectors.extend(rows[5..].iter().cloned());
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
    }
}
