//! The first analyses wait briefly for the workspace's signal shares: read from the cache they
//! come within milliseconds, and a file judged before they come is judged again once they do,
//! which doubled the time to a large file's first diagnostics. A count from scratch takes
//! seconds and is not waited for. The gate remembers whether any analysis went on without them,
//! so that the documents are judged again only then.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// How long after the reading of the shares began an analysis waits for them.
pub const SHARES_WAIT: Duration = Duration::from_millis(50);

#[derive(Debug)]
pub struct SharesGate {
    state: Mutex<GateState>,
    /// Whether the reading has ended, with the shares counted or not.
    counted: watch::Sender<bool>,
}

#[derive(Debug, Default)]
struct GateState {
    /// When the reading began, once it has.
    started: Option<Instant>,
    /// An analysis went on before the reading ended. Read and written with `counted` under the
    /// same lock, so an analysis is either counted here or passed the gate after the end.
    judged_without: bool,
}

impl Default for SharesGate {
    fn default() -> Self {
        SharesGate {
            state: Mutex::default(),
            counted: watch::Sender::new(false),
        }
    }
}

impl SharesGate {
    fn state(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn started(&self) {
        self.state().started = Some(Instant::now());
    }

    /// Ends the reading (the shares, if counted, are in the session's state by now); true when
    /// an analysis went on without them and the documents must be judged again.
    pub fn counted(&self) -> bool {
        let state = self.state();
        self.counted.send_replace(true);
        state.judged_without
    }

    /// Waits until the shares are counted or [`SHARES_WAIT`] has passed since their reading
    /// began; returns at once when it has not begun (no workspace) or has long begun.
    pub async fn wait_briefly(&self) {
        let started = self.state().started;
        if let Some(started) = started {
            let left = SHARES_WAIT.saturating_sub(started.elapsed());
            let mut counted = self.counted.subscribe();
            // The sender lives as long as the gate, so waiting cannot fail while anyone waits.
            let _ = tokio::time::timeout(left, counted.wait_for(|counted| *counted)).await;
        }
        let mut state = self.state();
        if !*self.counted.borrow() {
            state.judged_without = true;
        }
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
        let counted = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            counting.counted()
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
        assert!(
            !counted.await.unwrap(),
            "no analysis went on without the shares: nothing to judge again"
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
        assert!(
            gate.counted(),
            "analyses went on without the shares: the documents are judged again"
        );
    }
}
