//! What the command line writes for a terminal or a pipe: text made safe to print, and the
//! reader that went away.

/// True when `error` comes from writing to a reader that went away (`| head`): the command
/// then ends quietly, with the exit code its work earned.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        let kind = match cause.downcast_ref::<serde_json::Error>() {
            Some(error) => error.io_error_kind(),
            None => cause
                .downcast_ref::<std::io::Error>()
                .map(std::io::Error::kind),
        };
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}
