//! Projected vectors held as 8-bit integers, and the brute-force nearest-neighbour scan over them.

/// One projected vector per entry, row after row, with each row's squared norm.
///
/// Projected entries are small integers (token counts times +-1), so most rows are stored
/// exactly; a row whose largest entry exceeds 127 is scaled down and rounded. Eight bits a
/// dimension keep the FlakeFlagger index (21,802 tests, 940 dimensions) at 20 MB, inside a
/// server CPU's last-level cache, and let one scan take a fraction of a millisecond.
#[derive(Debug, Clone, Default)]
pub struct Vectors {
    dims: usize,
    values: Vec<i8>,
    squared_norms: Vec<u32>,
    /// 1/sqrt of each squared norm (0 for a zero row): ranks rows by cosine without a square
    /// root and a division per row.
    inverse_norms: Vec<f64>,
}

/// A query prepared for scanning.
#[derive(Debug, Clone)]
pub struct QueryVector {
    values: Vec<i8>,
    squared_norm: u32,
}

impl QueryVector {
    pub fn new(projected: &[i32]) -> QueryVector {
        let values = quantize(projected);
        let squared_norm = squared_norm(&values);
        QueryVector {
            values,
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
            values: Vec::new(),
            squared_norms: Vec::new(),
            inverse_norms: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.squared_norms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.squared_norms.is_empty()
    }

    pub fn push(&mut self, projected: &[i32]) {
        debug_assert_eq!(projected.len(), self.dims);
        let row = quantize(projected);
        let squared_norm = squared_norm(&row);
        self.squared_norms.push(squared_norm);
        self.inverse_norms.push(if squared_norm == 0 { 0.0 } else { 1.0 / f64::from(squared_norm).sqrt() });
        self.values.extend_from_slice(&row);
    }

    pub fn remove(&mut self, row: usize) {
        self.values.drain(row * self.dims..(row + 1) * self.dims);
        self.squared_norms.remove(row);
        self.inverse_norms.remove(row);
    }

    /// Cosine similarity of a query with one row; 0 when either vector is zero.
    pub fn similarity(&self, query: &QueryVector, row: usize) -> f64 {
        let values = &self.values[row * self.dims..(row + 1) * self.dims];
        cosine(
            dot(&query.values, values),
            query.squared_norm,
            self.squared_norms[row],
        )
    }

    /// The `k` rows most similar to `query` among those `include` accepts, most similar first;
    /// equal similarities keep row order, so results are deterministic.
    pub fn nearest(
        &self,
        query: &QueryVector,
        k: usize,
        include: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        // Rank by dot / |row|, which orders rows as the cosine does (|query| is the same for
        // all), then compute the exact cosine of the k kept.
        let mut best: Vec<(usize, f64)> = Vec::with_capacity(k + 1);
        if k == 0 || self.dims == 0 || query.is_zero() {
            return best;
        }
        for (row, values) in self.values.chunks_exact(self.dims).enumerate() {
            let key = f64::from(dot(&query.values, values)) * self.inverse_norms[row];
            if best.len() == k && key <= best[k - 1].1 {
                continue;
            }
            if !include(row) {
                continue;
            }
            let position = best.iter().position(|&(_, other)| key > other).unwrap_or(best.len());
            best.insert(position, (row, key));
            best.truncate(k);
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

fn squared_norm(values: &[i8]) -> u32 {
    values
        .iter()
        .map(|&value| (i32::from(value) * i32::from(value)) as u32)
        .sum()
}

/// The inner product of two rows, the hot loop of every prediction. Written so the compiler
/// vectorises it; with AVX2 available at run time the same loop is compiled for it.
fn dot(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_portable(a, b)
}

/// Sixteen 8-bit lanes at a time: sign-extend to 16 bits, multiply and add neighbouring pairs
/// into 32-bit lanes (`vpmaddwd`), which is four times the throughput of 32-bit multiplies.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let length = a.len().min(b.len());
    let whole = length - length % 16;
    let mut sums = _mm256_setzero_si256();
    let mut offset = 0;
    while offset < whole {
        // SAFETY: offset + 16 <= whole <= the length of both slices, and the loads are unaligned.
        let (x, y) = unsafe {
            (
                _mm_loadu_si128(a.as_ptr().add(offset).cast::<__m128i>()),
                _mm_loadu_si128(b.as_ptr().add(offset).cast::<__m128i>()),
            )
        };
        let products = _mm256_madd_epi16(_mm256_cvtepi8_epi16(x), _mm256_cvtepi8_epi16(y));
        sums = _mm256_add_epi32(sums, products);
        offset += 16;
    }
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 bytes, the size of the register stored.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), sums) };
    lanes.iter().sum::<i32>() + dot_portable(&a[whole..length], &b[whole..length])
}

#[inline(always)]
fn dot_portable(a: &[i8], b: &[i8]) -> i32 {
    let mut sums = [0i32; 16];
    let mut chunks_a = a.chunks_exact(16);
    let mut chunks_b = b.chunks_exact(16);
    for (chunk_a, chunk_b) in (&mut chunks_a).zip(&mut chunks_b) {
        for lane in 0..16 {
            sums[lane] += i32::from(chunk_a[lane]) * i32::from(chunk_b[lane]);
        }
    }
    let tail: i32 = chunks_a
        .remainder()
        .iter()
        .zip(chunks_b.remainder())
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    sums.iter().sum::<i32>() + tail
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
        assert_eq!(QueryVector::new(&[0, 0, 0]).is_zero(), true);
    }

    #[test]
    fn large_entries_are_scaled_without_changing_direction_much() {
        let original = [1000, -500, 3, 0];
        let quantized = quantize(&original);
        assert_eq!(quantized, [127, -64, 0, 0]);
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
        let rows: Vec<usize> = vectors
            .nearest(&query, 3, |_| true)
            .into_iter()
            .map(|(row, _)| row)
            .collect();
        assert_eq!(rows, [0, 3, 2]);
        let rows: Vec<usize> = vectors
            .nearest(&query, 2, |row| row != 0)
            .into_iter()
            .map(|(row, _)| row)
            .collect();
        assert_eq!(rows, [3, 2]);
        vectors.remove(3);
        assert_eq!(vectors.len(), 3);
        assert_eq!(vectors.nearest(&query, 2, |_| true)[1].0, 2);
    }

    #[test]
    fn the_vectorised_dot_product_matches_the_plain_one() {
        let a: Vec<i8> = (0..1000).map(|i| ((i * 37) % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..1000).map(|i| ((i * 91) % 255 - 127) as i8).collect();
        let plain: i32 = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum();
        assert_eq!(dot(&a, &b), plain);
        assert_eq!(
            dot(&a[..7], &b[..7]),
            a[..7]
                .iter()
                .zip(&b[..7])
                .map(|(&x, &y)| i32::from(x) * i32::from(y))
                .sum()
        );
    }
}
