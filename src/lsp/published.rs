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

use tokio::sync::watch;

/// The publications handed to tower-lsp-server and those the transport has queued for the client.
#[derive(Debug)]
pub struct Publications {
    handed: watch::Sender<u64>,
    relayed: watch::Sender<u64>,
}

impl Default for Publications {
    fn default() -> Publications {
        Publications {
            handed: watch::Sender::new(0),
            relayed: watch::Sender::new(0),
        }
    }
}

impl Publications {
    /// Counts a publication tower-lsp-server has taken; called under the session's publishing
    /// lock, right after the hand-over.
    pub fn count_handed(&self) {
        self.handed.send_modify(|handed| *handed += 1);
    }

    /// Changes each time a publication is handed over.
    pub fn subscribe_handed(&self) -> watch::Receiver<u64> {
        self.handed.subscribe()
    }

    /// Counts a `textDocument/publishDiagnostics` frame the transport has queued for the client.
    pub fn count_relayed(&self) {
        self.relayed.send_modify(|relayed| *relayed += 1);
    }

    /// Waits until the transport has queued every publication handed over so far. It never
    /// ends when the client's output is closed: callers bound it with a timeout.
    pub async fn wait_until_relayed(&self) {
        let handed = *self.handed.borrow();
        let mut relayed = self.relayed.subscribe();
        // The sender lives as long as `self`, so waiting cannot fail.
        let _ = relayed.wait_for(|relayed| *relayed >= handed).await;
    }
}

/// Whether the wait for the relay ends within a short time (for tests here and in the
/// transport's).
#[cfg(test)]
pub(super) async fn relayed_soon(publications: &Publications) -> bool {
    let short = std::time::Duration::from_millis(50);
    tokio::time::timeout(short, publications.wait_until_relayed())
        .await
        .is_ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn waits_until_as_many_publications_are_relayed_as_were_handed() {
        let publications = std::sync::Arc::new(Publications::default());
        assert!(relayed_soon(&publications).await, "none handed");
        publications.count_handed();
        publications.count_handed();
        publications.count_relayed();
        assert!(!relayed_soon(&publications).await, "one of two");

        let waiting = tokio::spawn({
            let publications = publications.clone();
            async move { publications.wait_until_relayed().await }
        });
        tokio::task::yield_now().await;
        publications.count_relayed();
        tokio::time::timeout(Duration::from_secs(20), waiting)
            .await
            .expect("two of two")
            .expect("no panic");
    }
}
