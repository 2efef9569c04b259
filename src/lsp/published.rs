//! Counts the diagnostics the session publishes and those the transport relays to the client,
//! so that a command can answer only after its publications are on their way.
//!
//! tower-lsp-server merges its notifications and its replies into one output in no fixed order
//! when both are pending, so a reply can overtake the notifications a handler sent before it
//! returned. Emacs 28's jsonrpc.el (eglot's transport) leaves the messages that follow a reply in
//! the same read unprocessed until the server next writes, so a mark's new diagnostics must
//! precede its reply. The transport passes every frame to the client through one queue, in the
//! order the service wrote them: once the transport has queued a publication, anything the
//! service writes afterwards, the reply included, reaches the client after it.
//!
//! The session counts a publication once tower-lsp-server has taken it, and the transport counts
//! each `textDocument/publishDiagnostics` frame it queues. Publications are handed over one at a
//! time (under [`Session::publishing`](super::session::Session)), each counted before the next
//! is handed over, so the first `n` frames the service writes are the first `n` publications
//! counted: when the transport has queued as many as the session had counted, every one counted
//! by then has been queued.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;

/// The publications handed to tower-lsp-server and those the transport has queued for the client.
#[derive(Debug)]
pub struct Publications {
    handed: AtomicU64,
    relayed: watch::Sender<u64>,
}

impl Default for Publications {
    fn default() -> Publications {
        Publications {
            handed: AtomicU64::new(0),
            relayed: watch::Sender::new(0),
        }
    }
}

impl Publications {
    /// Counts a publication tower-lsp-server has taken; called under the session's publishing
    /// lock, right after the hand-over.
    pub fn count_handed(&self) {
        self.handed.fetch_add(1, Ordering::SeqCst);
    }

    /// Counts a `textDocument/publishDiagnostics` frame the transport has queued for the client.
    pub fn count_relayed(&self) {
        self.relayed.send_modify(|relayed| *relayed += 1);
    }

    /// Waits until the transport has queued every publication handed over so far; false when it
    /// has not within `timeout` (the output was closed, or the machine is stalled).
    pub async fn wait_until_relayed(&self, timeout: Duration) -> bool {
        let handed = self.handed.load(Ordering::SeqCst);
        let mut relayed = self.relayed.subscribe();
        // The sender lives as long as `self`, so waiting fails only by the timeout.
        let waited = tokio::time::timeout(timeout, relayed.wait_for(|relayed| *relayed >= handed));
        matches!(waited.await, Ok(Ok(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: Duration = Duration::from_millis(50);

    #[tokio::test]
    async fn waits_until_as_many_publications_are_relayed_as_were_handed() {
        let publications = std::sync::Arc::new(Publications::default());
        assert!(publications.wait_until_relayed(SHORT).await, "none handed");
        publications.count_handed();
        publications.count_handed();
        publications.count_relayed();
        assert!(!publications.wait_until_relayed(SHORT).await, "one of two");

        let waiting = tokio::spawn({
            let publications = publications.clone();
            async move {
                publications
                    .wait_until_relayed(Duration::from_secs(20))
                    .await
            }
        });
        tokio::task::yield_now().await;
        publications.count_relayed();
        assert!(waiting.await.expect("no panic"), "two of two");
    }
}
