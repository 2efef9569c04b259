//! `workspace/didChangeConfiguration`: new editor settings, then every open document is judged
//! again with them.

use std::sync::Arc;

use tower_lsp_server::ls_types::DidChangeConfigurationParams;

use crate::lsp::analyze;
use crate::lsp::loading::{
    apply_editor_settings, apply_settings, load_extra_models, load_settings,
};
use crate::lsp::session::Session;

pub async fn did_change_configuration(
    session: &Arc<Session>,
    params: DidChangeConfigurationParams,
) {
    session.wait_until_ready().await;
    let models_before = session.state().config.models.clone();
    if session.state().client_support.configuration {
        // Pull-model clients send an empty notification and expect to be asked.
        load_settings(session, false).await;
    } else {
        apply_editor_settings(session, Some(params.settings)).await;
        apply_settings(session).await;
    }
    if session.state().config.models != models_before {
        load_extra_models(session).await;
    }
    session.invalidate_predictions();
    analyze::schedule_all(session);
}
