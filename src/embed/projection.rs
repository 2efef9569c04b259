//! The sparse random projection (Achlioptas 2003; Li, Hastie and Church 2006), derived from a
//! seed and each token's text so that no matrix is stored and a new token gets its own columns.

use std::collections::HashSet;

use rand::{Rng, SeedableRng};
use rand_xoshiro::SplitMix64;
use serde::{Deserialize, Serialize};
use sprs::{CsMat, TriMat};

/// The parameters that regenerate a projection bit for bit.
///
/// scikit-learn's `SparseRandomProjection` gives each of the `dims` entries of a token's row a
/// non-zero with probability `s = 1/sqrt(n_features)`. Here every token gets exactly
/// `round(dims * s)` non-zeros at distinct positions (the sparse Johnson-Lindenstrauss transform
/// of Kane and Nelson), the same density in expectation at a cost of a few random draws per token
/// instead of `dims`. Entries are +1 or -1: the common scale `sqrt(1/s)/sqrt(dims)` of
/// scikit-learn cancels out of every cosine, and integer entries keep projected vectors exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Projection {
    pub dims: u32,
    pub nonzeros_per_token: u32,
    pub seed: u64,
}

impl Projection {
    /// A projection to `dims` dimensions for a vocabulary of `n_features` tokens.
    pub fn new(dims: u32, n_features: usize, seed: u64) -> Projection {
        let dims = dims.max(1);
        let density = 1.0 / (n_features.max(1) as f64).sqrt();
        let nonzeros = (f64::from(dims) * density)
            .round()
            .clamp(1.0, f64::from(dims)) as u32;
        Projection {
            dims,
            nonzeros_per_token: nonzeros,
            seed,
        }
    }

    /// The Johnson-Lindenstrauss bound as scikit-learn computes it
    /// (`johnson_lindenstrauss_min_dim`): `4 ln(n) / (eps^2/2 - eps^3/3)`, truncated.
    pub fn johnson_lindenstrauss_dims(n_samples: usize, eps: f64) -> u32 {
        let denominator = eps * eps / 2.0 - eps * eps * eps / 3.0;
        let dims = 4.0 * (n_samples.max(2) as f64).ln() / denominator;
        dims.clamp(1.0, f64::from(u32::MAX)) as u32
    }

    /// The non-zero entries of `token`'s row: `(column, sign)` pairs, sorted by column.
    pub fn row(&self, token: &str) -> Vec<(u32, i8)> {
        let mut rng = SplitMix64::seed_from_u64(token_hash(self.seed, token));
        let wanted = self.nonzeros_per_token.min(self.dims) as usize;
        let mut row: Vec<(u32, i8)> = Vec::with_capacity(wanted);
        // Columns taken so far: a scan of the row for the few of a real model, a set past that,
        // or a dense row of a large dimension would take a scan per draw (quadratic time).
        let mut taken_columns: HashSet<u32> = HashSet::new();
        while row.len() < wanted {
            let draw = rng.next_u64();
            // Lemire's multiply-shift maps the draw onto 0..dims with integer arithmetic only,
            // so every platform picks the same column.
            let column = ((u128::from(draw) * u128::from(self.dims)) >> 64) as u32;
            let taken = if wanted <= 32 {
                row.iter().any(|&(taken, _)| taken == column)
            } else {
                !taken_columns.insert(column)
            };
            if taken {
                continue;
            }
            let sign = if draw & 1 == 0 { 1 } else { -1 };
            row.push((column, sign));
        }
        row.sort_unstable();
        row
    }

    /// The projection matrix of a vocabulary: one row per token, `dims` columns.
    pub fn matrix<'a>(&self, vocabulary: impl ExactSizeIterator<Item = &'a str>) -> CsMat<i32> {
        let rows = vocabulary.len();
        let mut triplets = TriMat::with_capacity(
            (rows, self.dims as usize),
            rows * self.nonzeros_per_token as usize,
        );
        for (row_index, token) in vocabulary.enumerate() {
            for (column, sign) in self.row(token) {
                triplets.add_triplet(row_index, column as usize, i32::from(sign));
            }
        }
        triplets.to_csr()
    }
}

/// FNV-1a over the token's bytes, mixed with the seed by SplitMix64's finaliser: a hash that is
/// the same on every platform and in every Rust release, unlike `std`'s `DefaultHasher`.
fn token_hash(seed: u64, token: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in token.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut mixed = hash ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    mixed ^ (mixed >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimension_follows_the_johnson_lindenstrauss_bound_like_scikit_learn() {
        // sklearn.random_projection.johnson_lindenstrauss_min_dim(n, eps=0.33)
        assert_eq!(Projection::johnson_lindenstrauss_dims(21_802, 0.33), 940);
        assert_eq!(Projection::johnson_lindenstrauss_dims(1_000, 0.33), 650);
        assert_eq!(Projection::johnson_lindenstrauss_dims(100, 0.5), 221);
    }

    #[test]
    fn density_is_one_over_the_square_root_of_the_vocabulary() {
        let projection = Projection::new(940, 40_000, 1);
        assert_eq!(projection.nonzeros_per_token, 5); // 940 / 200 = 4.7
        assert_eq!(Projection::new(10, 1_000_000, 1).nonzeros_per_token, 1);
    }

    #[test]
    fn rows_are_pinned_for_a_seed() {
        // These values must never change: a model stores only the seed, and every platform and
        // release must regenerate the same projection from it.
        let projection = Projection {
            dims: 940,
            nonzeros_per_token: 4,
            seed: 42,
        };
        assert_eq!(projection.row("thread.sleep"), PINNED_THREAD_SLEEP);
        assert_eq!(projection.row(""), PINNED_EMPTY);
        assert_eq!(token_hash(0, "a"), PINNED_HASH_A);
    }

    const PINNED_THREAD_SLEEP: [(u32, i8); 4] = [(449, 1), (610, 1), (768, 1), (904, -1)];
    const PINNED_EMPTY: [(u32, i8); 4] = [(532, 1), (852, 1), (879, -1), (881, -1)];
    const PINNED_HASH_A: u64 = 198_367_012_849_983_736;

    #[test]
    fn rows_differ_between_tokens_and_seeds() {
        let projection = Projection {
            dims: 940,
            nonzeros_per_token: 5,
            seed: 7,
        };
        assert_ne!(projection.row("sleep"), projection.row("sleeps"));
        assert_ne!(
            projection.row("sleep"),
            Projection {
                seed: 8,
                ..projection
            }
            .row("sleep")
        );
        let row = projection.row("sleep");
        assert_eq!(row.len(), 5);
        assert!(
            row.windows(2).all(|pair| pair[0].0 < pair[1].0),
            "distinct sorted columns"
        );
    }

    #[test]
    fn the_matrix_holds_each_tokens_row() {
        let projection = Projection {
            dims: 50,
            nonzeros_per_token: 3,
            seed: 3,
        };
        let matrix = projection.matrix(["a", "bb"].into_iter());
        assert_eq!(matrix.shape(), (2, 50));
        let row: Vec<(u32, i8)> = matrix
            .outer_view(1)
            .unwrap()
            .iter()
            .map(|(column, &value)| (column as u32, value as i8))
            .collect();
        assert_eq!(row, projection.row("bb"));
    }
}
