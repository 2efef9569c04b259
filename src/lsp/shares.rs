//! The first analyses wait briefly for the workspace's signal shares: read from the cache they
//! come within milliseconds, and a file judged before they come is judged again once they do,
//! which doubled the time to a large file's first diagnostics. A count from scratch takes
//! seconds and is not waited for.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// How long after the reading of the shares began an analysis waits for them.
pub const SHARES_WAIT: Duration = Duration::from_millis(50);

#[derive(Debug)]
pub struct SharesGate {
    /// When the reading began, once it has.
    started: Mutex<Option<Instant>>,
    /// Whether it has ended, with the shares counted or not.
    counted: watch::Sender<bool>,
}

impl Default for SharesGate {
    fn default() -> Self {
        SharesGate {
            started: Mutex::default(),
            counted: watch::Sender::new(false),
        }
    }
}

impl SharesGate {
    pub fn started(&self) {
        *self.started.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    }

    pub fn counted(&self) {
        self.counted.send_replace(true);
    }

    /// Waits until the shares are counted or [`SHARES_WAIT`] has passed since their reading
    /// began; returns at once when it has not begun (no workspace) or has long begun.
    pub async fn wait_briefly(&self) {
        let started = *self.started.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(started) = started else {
            return;
        };
        let left = SHARES_WAIT.saturating_sub(started.elapsed());
        let mut counted = self.counted.subscribe();
        // The sender lives as long as the gate, so waiting cannot fail while anyone waits.
        let _ = tokio::time::timeout(left, counted.wait_for(|counted| *counted)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_analysis_waits_for_shares_counted_soon_and_no_longer_than_the_bound() {
        let gate = SharesGate::default();
        let began = Instant::now();
        gate.wait_briefly().await;
        assert_eq!(
            began.elapsed(),
            Duration::ZERO,
            "nothing to wait for before the reading"
        );

        let gate = Arc::new(SharesGate::default());
        gate.started();
        let counting = gate.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            counting.counted();
        });
        let began = Instant::now();
        gate.wait_briefly().await;
        assert_eq!(
            began.elapsed(),
            Duration::from_millis(10),
            "until the shares are counted"
        );
        gate.wait_briefly().await;
        assert_eq!(
            began.elapsed(),
            Duration::from_millis(10),
            "at once once they are"
        );

        let gate = SharesGate::default();
        gate.started();
        let began = Instant::now();
        gate.wait_briefly().await;
        assert_eq!(
            began.elapsed(),
            SHARES_WAIT,
            "a slow count is not waited for"
        );
        gate.wait_briefly().await;
        assert_eq!(began.elapsed(), SHARES_WAIT, "nor waited for again");
    }
}
