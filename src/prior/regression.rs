//! Logistic regression with an L2 penalty and balanced class weights, by Newton's method.

use std::ops::Range;

use super::fit::Aggregated;
use super::sigmoid;

/// The L2 pulls to zero of a fit: of the features' weights, and of each project's own intercept
/// where the fit gives projects one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Penalties {
    pub(super) weights: f64,
    pub(super) intercepts: Option<f64>,
}

/// Maximum-likelihood logistic regression with L2 penalties and balanced class weights, by
/// Newton's method, on sparse rows of `(feature, value)` with their label and count. The
/// features in `intercepts`, the last ones, are the projects' own intercepts: each row has at
/// most one of them.
pub(super) fn fit_logistic(
    rows: &Aggregated,
    features: usize,
    penalties: Penalties,
    intercepts: &Range<usize>,
) -> (f64, Vec<f64>) {
    let positives: f64 = rows
        .iter()
        .filter(|(_, flaky, _)| *flaky)
        .map(|(_, _, count)| count)
        .sum();
    let total: f64 = rows.iter().map(|(_, _, count)| count).sum();
    let negatives = total - positives;
    if positives == 0.0 || negatives == 0.0 {
        let bias = if positives == 0.0 { -10.0 } else { 10.0 };
        return (bias, vec![0.0; features]);
    }
    let class_weight = |flaky: bool| {
        if flaky {
            total / (2.0 * positives)
        } else {
            total / (2.0 * negatives)
        }
    };
    // Parameters: bias at 0, weights at 1..=features. The projects' intercepts never meet in
    // a row, so their block of the Hessian is diagonal and is eliminated before the dense solve.
    let size = features + 1;
    let dense = intercepts.start + 1;
    let projects = size - dense;
    let (penalty, intercept_penalty) =
        (penalties.weights, penalties.intercepts.unwrap_or_default());
    let mut theta = vec![0.0; size];
    for _ in 0..50 {
        let mut gradient = vec![0.0; size];
        let mut hessian = vec![vec![0.0; dense]; dense];
        let mut cross = vec![vec![0.0; dense]; projects];
        let mut diagonal = vec![0.0; projects];
        for (row, flaky, count) in rows {
            let logit = theta[0] + row.iter().map(|&(i, x)| theta[i + 1] * x).sum::<f64>();
            let p = sigmoid(logit);
            let weight = class_weight(*flaky) * count;
            let residual = weight * (p - if *flaky { 1.0 } else { 0.0 });
            let curvature = weight * p * (1.0 - p);
            let active: Vec<(usize, f64)> = std::iter::once((0, 1.0))
                .chain(row.iter().map(|&(i, x)| (i + 1, x)))
                .collect();
            for &(a, x_a) in &active {
                gradient[a] += residual * x_a;
            }
            let intercept = active.iter().find(|&&(a, _)| a >= dense).copied();
            for &(a, x_a) in active.iter().filter(|&&(a, _)| a < dense) {
                for &(b, x_b) in active.iter().filter(|&&(b, _)| b < dense) {
                    hessian[a][b] += curvature * x_a * x_b;
                }
                if let Some((e, x_e)) = intercept {
                    cross[e - dense][a] += curvature * x_a * x_e;
                }
            }
            if let Some((e, x_e)) = intercept {
                diagonal[e - dense] += curvature * x_e * x_e;
            }
        }
        for i in 1..dense {
            gradient[i] += penalty * theta[i];
            hessian[i][i] += penalty;
        }
        for e in 0..projects {
            gradient[dense + e] += intercept_penalty * theta[dense + e];
            diagonal[e] += intercept_penalty;
        }
        hessian[0][0] += 1e-9;
        // Schur complement of the diagonal block.
        let mut reduced = gradient[..dense].to_vec();
        for e in 0..projects {
            if diagonal[e] <= 0.0 {
                continue;
            }
            let scale = gradient[dense + e] / diagonal[e];
            for a in 0..dense {
                reduced[a] -= cross[e][a] * scale;
                for b in 0..dense {
                    hessian[a][b] -= cross[e][a] * cross[e][b] / diagonal[e];
                }
            }
        }
        let Some(mut step) = solve(hessian, reduced) else {
            break;
        };
        for e in 0..projects {
            let known: f64 = (0..dense).map(|a| cross[e][a] * step[a]).sum();
            step.push(if diagonal[e] > 0.0 {
                (gradient[dense + e] - known) / diagonal[e]
            } else {
                0.0
            });
        }
        let mut largest = 0.0f64;
        for (parameter, delta) in theta.iter_mut().zip(&step) {
            *parameter -= delta;
            largest = largest.max(delta.abs());
        }
        if largest < 1e-10 {
            break;
        }
    }
    (theta[0], theta[1..].to_vec())
}

/// Solves `matrix * x = vector` by Gaussian elimination with partial pivoting.
pub(super) fn solve(mut matrix: Vec<Vec<f64>>, mut vector: Vec<f64>) -> Option<Vec<f64>> {
    let size = vector.len();
    for column in 0..size {
        let pivot = (column..size)
            .max_by(|&a, &b| matrix[a][column].abs().total_cmp(&matrix[b][column].abs()))?;
        if matrix[pivot][column].abs() < 1e-12 {
            return None;
        }
        matrix.swap(column, pivot);
        vector.swap(column, pivot);
        let pivot_row = matrix[column].clone();
        for row in column + 1..size {
            let factor = matrix[row][column] / pivot_row[column];
            for (entry, pivot_entry) in matrix[row][column..].iter_mut().zip(&pivot_row[column..]) {
                *entry -= factor * pivot_entry;
            }
            vector[row] -= factor * vector[column];
        }
    }
    let mut solution = vec![0.0; size];
    for row in (0..size).rev() {
        let known: f64 = (row + 1..size).map(|k| matrix[row][k] * solution[k]).sum();
        solution[row] = (vector[row] - known) / matrix[row][row];
    }
    Some(solution)
}

/// The regression with the features of `capped` kept at or below zero, refitted without any
/// the data weighs positive until none is; left out, a feature's weight is 0. Two kinds are
/// capped. A mitigation is a cure by definition: one weighed positive is a sign of asynchronous
/// code more than a cure of it. A risk's share among its project's tests may only lower what the
/// risk says of each test: weighed positive (the projects where a risk is common are often the
/// flakier ones), it raises every test with the risk of such a project together.
pub(super) fn fit_logistic_capped(
    rows: &Aggregated,
    features: usize,
    penalties: Penalties,
    capped: &[Range<usize>],
    intercepts: &Range<usize>,
) -> (f64, Vec<f64>) {
    let mut rows = rows.clone();
    loop {
        let (bias, weights) = fit_logistic(&rows, features, penalties, intercepts);
        let positive: Vec<usize> = capped
            .iter()
            .flat_map(|range| range.clone())
            .filter(|&feature| weights[feature] > 0.0)
            .collect();
        if positive.is_empty() {
            return (bias, weights);
        }
        for (row, _, _) in &mut rows {
            row.retain(|(feature, _)| !positive.contains(feature));
        }
    }
}
