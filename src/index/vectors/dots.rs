//! The dot products of a query with every row of a block of stored vectors: the inner loop of
//! the nearest-neighbour scan, as an AVX2 kernel and the portable loop it must agree with.
//!
//! Both compute exact integer sums, so the order in which dimensions and rows are added does
//! not change a single result: the kernel is free to pair dimensions and to walk the rows in
//! tiles.

/// A query dimension and its value. Query values are quantised to signed bytes, which is what
/// lets the kernel multiply 16-bit lanes without overflow.
pub type Term = (u32, i8);

/// Adds to `dots[row]` the dot product of the query `terms` with each `row` of a block of `rows`
/// rows laid out column by column (`block[dim * rows + row]`, signed bytes).
///
/// Panics if a term's dimension lies outside the block or `dots` does not hold `rows` numbers:
/// callers check the query against the index first, and the kernel relies on it.
pub fn add_block_dots(block: &[u8], rows: usize, terms: &[Term], dots: &mut [i32]) {
    assert_eq!(dots.len(), rows, "one dot product per row");
    assert!(
        terms
            .iter()
            .all(|&(dim, _)| (dim as usize + 1) * rows <= block.len()),
        "every dimension of the query lies in the block"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            let whole = rows / avx2::ROWS * avx2::ROWS;
            // SAFETY: the CPU supports AVX2, checked just above; the asserts above and
            // `whole <= rows` are what the kernel requires of its arguments.
            unsafe { avx2::add_dots(block, rows, whole, terms, &mut dots[..whole]) };
            add_dots_portable(block, rows, whole, terms, &mut dots[whole..]);
            return;
        }
    }
    add_dots_portable(block, rows, 0, terms, dots);
}

/// The plain loop: adds to `dots[i]` the dot product of the query with the block's row
/// `start + i`.
pub fn add_dots_portable(
    block: &[u8],
    rows: usize,
    start: usize,
    terms: &[Term],
    dots: &mut [i32],
) {
    let len = dots.len();
    let column = |dim: u32| &block[dim as usize * rows + start..][..len];
    // Four dimensions per pass: the dot products are read and written once for four columns
    // instead of once for each, which is most of the loop's memory traffic.
    let mut groups = terms.chunks_exact(4);
    for group in &mut groups {
        let [(d0, v0), (d1, v1), (d2, v2), (d3, v3)] = [group[0], group[1], group[2], group[3]];
        let [v0, v1, v2, v3] = [v0, v1, v2, v3].map(i32::from);
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
            *dot += i32::from(value) * i32::from(entry as i8);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Term;

    /// Rows per step: sixteen signed bytes of a column widen to one register of 16-bit lanes.
    pub const ROWS: usize = 16;
    /// Rows whose dot products are finished before the next ones are started: 16 KB of sums stay
    /// in the first-level cache while every column adds to them, and each column is read in
    /// runs of this many bytes, long enough for the hardware to prefetch them (runs of 1 KB made
    /// the scan half as fast again, here).
    const TILE: usize = 4096;
    /// Pairs of dimensions added per pass over a tile.
    const PAIRS_PER_PASS: usize = 4;

    /// Two columns (their offsets in the block) and their query values as the two 16-bit halves
    /// of one 32-bit lane, the operand layout of `vpmaddwd`.
    #[derive(Clone, Copy)]
    struct Pair {
        first: usize,
        second: usize,
        values: i32,
    }

    /// Adds the dot products of the first `whole` rows (a multiple of [`ROWS`]) to `dots`.
    ///
    /// `vpmaddwd` multiplies 16-bit lanes and adds neighbouring products into 32-bit lanes, so
    /// the rows of two columns are interleaved (row `r` of the first column next to row `r` of
    /// the second) and multiplied by the two query values at once. Products of a signed byte and
    /// a query value of a signed byte, and their pairwise sums, are far from overflowing.
    ///
    /// # Safety
    ///
    /// The CPU supports AVX2; `whole` is a multiple of [`ROWS`], at most `rows`; `dots` holds
    /// `whole` numbers; every term's column, `block[dim * rows..(dim + 1) * rows]`, lies in
    /// `block`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn add_dots(
        block: &[u8],
        rows: usize,
        whole: usize,
        terms: &[Term],
        dots: &mut [i32],
    ) {
        // An odd dimension out is paired with itself, its second value 0.
        let pairs: Vec<Pair> = terms
            .chunks(2)
            .map(|pair| {
                let (first, first_value) = pair[0];
                let (second, second_value) = pair.get(1).copied().unwrap_or((first, 0));
                Pair {
                    first: first as usize * rows,
                    second: second as usize * rows,
                    values: i32::from(first_value as i16 as u16)
                        | (i32::from(second_value as i16 as u16) << 16),
                }
            })
            .collect();
        for tile in (0..whole).step_by(TILE) {
            let end = (tile + TILE).min(whole);
            let mut passes = pairs.chunks_exact(PAIRS_PER_PASS);
            for pass in &mut passes {
                // SAFETY: as this function's; `tile..end` lies within `0..whole`.
                unsafe { add_pass::<PAIRS_PER_PASS>(block, tile, end, pass, dots) };
            }
            for pair in passes.remainder() {
                // SAFETY: as above.
                unsafe { add_pass::<1>(block, tile, end, std::slice::from_ref(pair), dots) };
            }
        }
    }

    /// Adds the products of `N` pairs of columns to the dot products of rows `start..end`.
    ///
    /// # Safety
    ///
    /// As [`add_dots`], with `start..end` a range of whole steps of [`ROWS`] within `whole`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn add_pass<const N: usize>(
        block: &[u8],
        start: usize,
        end: usize,
        pairs: &[Pair],
        dots: &mut [i32],
    ) {
        let pairs: &[Pair; N] = pairs.try_into().expect("N pairs");
        let values = pairs.map(|pair| _mm256_set1_epi32(pair.values));
        let bytes = block.as_ptr();
        for row in (start..end).step_by(ROWS) {
            // Lanes of `low` hold rows 0-3 and 8-11 of the step, those of `high` rows 4-7 and
            // 12-15: `unpacklo` and `unpackhi` interleave within each 128-bit half.
            let mut low = _mm256_setzero_si256();
            let mut high = _mm256_setzero_si256();
            for (pair, values) in pairs.iter().zip(&values) {
                // SAFETY: `row + ROWS <= whole <= rows`, so both 16-byte reads lie within
                // their columns, which lie in `block`.
                let (first, second) = unsafe {
                    (
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(bytes.add(pair.first + row).cast())),
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(bytes.add(pair.second + row).cast())),
                    )
                };
                low = _mm256_add_epi32(
                    low,
                    _mm256_madd_epi16(_mm256_unpacklo_epi16(first, second), *values),
                );
                high = _mm256_add_epi32(
                    high,
                    _mm256_madd_epi16(_mm256_unpackhi_epi16(first, second), *values),
                );
            }
            // Back in row order: rows 0-7, then rows 8-15.
            let rows_0_7 = _mm256_permute2x128_si256::<0x20>(low, high);
            let rows_8_15 = _mm256_permute2x128_si256::<0x31>(low, high);
            // SAFETY: `row + ROWS <= whole == dots.len()`.
            unsafe {
                let out = dots.as_mut_ptr().add(row).cast::<__m256i>();
                _mm256_storeu_si256(out, _mm256_add_epi32(_mm256_loadu_si256(out), rows_0_7));
                let out = out.add(1);
                _mm256_storeu_si256(out, _mm256_add_epi32(_mm256_loadu_si256(out), rows_8_15));
            }
        }
    }
}
