//! `textDocument/didSave`: a saved `conftest.py` changes what the open Python tests run (its
//! fixtures), a saved pytest configuration file which of their functions are tests. What was read
//! from it is forgotten and every open Python document is judged again. The file's text is read
//! from disk, as pytest reads it.

use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::ls_types::{DidSaveTextDocumentParams, Uri};

use crate::language::Language;
use crate::lsp::analyze;
use crate::lsp::session::{Session, file_path};

pub fn did_save(session: &Arc<Session>, params: DidSaveTextDocumentParams) {
    let Some(path) = file_path(&params.text_document.uri) else {
        return;
    };
    let Some(surroundings) = session.state().surroundings.clone() else {
        return;
    };
    if !surroundings.forget(&path) {
        return;
    }
    let python: Vec<Uri> = session
        .documents
        .lock()
        .iter()
        .filter(|(_, document)| document.language == Language::Python)
        .map(|(uri, _)| uri.clone())
        .collect();
    for uri in python {
        analyze::schedule(session, uri, Duration::ZERO);
    }
}
