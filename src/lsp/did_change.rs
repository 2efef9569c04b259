//! `textDocument/didChange`: the edits are applied before anything awaits, then the document's
//! analysis is (re)started after the debounce.

use std::sync::Arc;

use tower_lsp_server::ls_types::DidChangeTextDocumentParams;

use crate::lsp::analyze;
use crate::lsp::session::Session;

pub fn did_change(session: &Arc<Session>, params: DidChangeTextDocumentParams) {
    let (encoding, debounce) = {
        let state = session.state();
        (state.encoding, state.config.debounce())
    };
    let uri = params.text_document.uri;
    {
        let mut documents = session.documents.lock();
        let Some(document) = documents.get_mut(&uri) else {
            return;
        };
        document.apply_changes(
            params.text_document.version,
            params.content_changes,
            encoding,
        );
    }
    analyze::schedule(session, uri, debounce);
}
