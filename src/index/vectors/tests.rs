//! The stored vectors and the scan against plain computations.

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
    let rows = |found: Vec<(usize, f64)>| found.into_iter().map(|(row, _)| row).collect::<Vec<_>>();
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
    for ((row, similarity), (expected_row, expected_similarity)) in found.iter().zip(&expected) {
        assert_eq!(row, expected_row);
        assert!((similarity - expected_similarity).abs() < 1e-12);
    }
    for row in [0, BLOCK - 1, BLOCK, 2 * BLOCK + 5, 39_999] {
        let expected: Vec<i8> = quantize(&rows[row]);
        assert_eq!(vectors.row(row), expected, "row {row}");
    }
}

/// A xorshift generator: the same numbers on every run and platform.
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `low..=high`.
    fn between(&mut self, low: i32, high: i32) -> i32 {
        low + (self.next() % (high - low + 1) as u64) as i32
    }
}

#[test]
fn the_kernel_adds_what_the_plain_loop_adds() {
    let mut numbers = Numbers(0x5eed);
    // Row counts around the kernel's steps and tiles; bytes of the whole range, -128 included,
    // which no quantised vector holds but a crafted file may.
    for rows in [1, 15, 16, 17, 100, 4095, 4096, 4097, 9000] {
        let dims = numbers.between(1, 40) as usize;
        let block: Vec<u8> = (0..rows * dims).map(|_| numbers.next() as u8).collect();
        for terms_len in [0, 1, 2, 3, 7, 8, 9, dims] {
            let terms: Vec<dots::Term> = (0..terms_len)
                .map(|_| {
                    let dim = numbers.between(0, dims as i32 - 1) as u32;
                    (dim, numbers.between(-128, 127) as i8)
                })
                .collect();
            let start: Vec<i32> = (0..rows).map(|_| numbers.between(-1000, 1000)).collect();
            let plain: Vec<i32> = (0..rows)
                .map(|row| {
                    start[row]
                        + terms
                            .iter()
                            .map(|&(dim, value)| {
                                i32::from(value) * i32::from(block[dim as usize * rows + row] as i8)
                            })
                            .sum::<i32>()
                })
                .collect();
            let mut fast = start.clone();
            dots::add_block_dots(&block, rows, &terms, &mut fast);
            assert_eq!(fast, plain, "{rows} rows, {terms_len} terms");
            let mut portable = start.clone();
            dots::add_dots_portable(&block, rows, 0, &terms, &mut portable);
            assert_eq!(portable, plain, "{rows} rows, {terms_len} terms");
        }
    }
}

#[test]
fn the_scan_keeps_what_a_plain_ranking_keeps() {
    // Few distinct small rows make many ties; 20,000 rows span two blocks, the second partly
    // filled and not a whole number of the kernel's steps.
    let mut numbers = Numbers(42);
    let dims = 6;
    let rows: Vec<Vec<i32>> = (0..20_000)
        .map(|_| (0..dims).map(|_| numbers.between(-1, 1)).collect())
        .collect();
    let stored = Stored::new(&rows);
    let vectors = stored.view();
    let quantised: Vec<Vec<i8>> = rows.iter().map(|row| quantize(row)).collect();
    let filters: [(&str, &dyn Fn(usize) -> bool); 3] = [
        ("every row", &|_| true),
        ("some rows", &|row| row % 3 != 1),
        ("no row", &|_| false),
    ];
    for _ in 0..8 {
        let query_values: Vec<i32> = (0..dims).map(|_| numbers.between(-300, 300)).collect();
        let query = QueryVector::new(&query_values);
        let query_bytes = quantize(&query_values);
        for k in [1, 7, 25, rows.len() + 5] {
            for (name, include) in filters {
                // Keys as the scan ranks them, then a stable sort: ties keep row order.
                let mut plain: Vec<(usize, f64)> = quantised
                    .iter()
                    .enumerate()
                    .filter(|&(row, _)| include(row))
                    .map(|(row, values)| {
                        let dot: i32 = values
                            .iter()
                            .zip(&query_bytes)
                            .map(|(&a, &b)| i32::from(a) * i32::from(b))
                            .sum();
                        (row, f64::from(dot) * inverse_norm(squared_norm(values)))
                    })
                    .collect();
                plain.sort_by(|a, b| b.1.total_cmp(&a.1));
                plain.truncate(k);
                let plain: Vec<(usize, f64)> = plain
                    .into_iter()
                    .map(|(row, _)| (row, vectors.similarity(&query, row)))
                    .collect();
                assert_eq!(vectors.nearest(&query, k, include), plain, "k {k}, {name}");
            }
        }
    }
}
