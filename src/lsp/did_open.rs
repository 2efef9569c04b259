//! `textDocument/didOpen`: the document joins the store and is judged at once.

use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::ls_types::DidOpenTextDocumentParams;

use crate::language::Language;
use crate::lsp::analyze;
use crate::lsp::document::Document;
use crate::lsp::session::Session;
use crate::lsp::state::file_path;

pub fn did_open(session: &Arc<Session>, params: DidOpenTextDocumentParams) {
    let document = params.text_document;
    let language = Language::from_name(&document.language_id)
        .or_else(|| file_path(&document.uri).and_then(|path| Language::from_path(&path)));
    // Files of other languages are none of flakesense's business.
    let Some(language) = language else {
        return;
    };
    let relative_path = session.state().relative_path(&document.uri);
    session.documents.lock().insert(
        document.uri.clone(),
        Document::new(language, relative_path, document.version, document.text),
    );
    analyze::schedule(session, document.uri, Duration::ZERO);
}
