//! `textDocument/didClose`: the document leaves the store and its diagnostics are cleared.

use tower_lsp_server::ls_types::DidCloseTextDocumentParams;

use crate::lsp::session::Session;

pub async fn did_close(session: &Session, params: DidCloseTextDocumentParams) {
    let uri = params.text_document.uri;
    session.cancel_analysis(&uri);
    let was_open = session.documents.lock().remove(&uri).is_some();
    if was_open {
        // After any publication under way, so the cleared list is the last word.
        let in_order = session.publishing.lock().await;
        session
            .publish_diagnostics(&in_order, uri, Vec::new(), None)
            .await;
    }
}
