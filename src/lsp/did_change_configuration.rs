//! `workspace/didChangeConfiguration`: new editor settings, then every open document is judged
//! again with them.

use std::sync::Arc;

use tower_lsp_server::ls_types::DidChangeConfigurationParams;

use crate::lsp::analyze;
use crate::lsp::loading::{apply_editor_settings, apply_settings, load_settings, settings_changed};
use crate::lsp::session::Session;

pub async fn did_change_configuration(
    session: &Arc<Session>,
    params: DidChangeConfigurationParams,
) {
    session.wait_until_ready().await;
    let before = session.state().config.clone();
    if session.state().client_support.configuration {
        // Pull-model clients send an empty notification and expect to be asked.
        load_settings(session, false).await;
    } else {
        apply_editor_settings(session, Some(params.settings)).await;
        apply_settings(session).await;
    }
    settings_changed(session, &before).await;
    analyze::schedule_all(session);
}
