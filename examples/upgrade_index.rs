//! Rewrites index files (models, project indexes) of an older format in the current one, in
//! place, keeping their entries, labels (migrated as loading migrates them) and priors:
//!
//! ```sh
//! cargo run --release --example upgrade_index -- models/java.idx models/python.idx models/rust.idx
//! ```
//!
//! A file already of the current format is left as it is. Nothing is retrained.

use std::process::ExitCode;

use flakesense::index::{Index, file};

fn main() -> ExitCode {
    let mut failed = false;
    for path in std::env::args_os().skip(1).map(std::path::PathBuf::from) {
        let upgraded = std::fs::read(&path)
            .map_err(anyhow::Error::from)
            .and_then(|bytes| {
                let (version, _) = file::open(&bytes)?;
                if version == file::FORMAT_VERSION {
                    return Ok(format!("already of format {version}"));
                }
                let index = Index::from_bytes(&bytes)?;
                index.save(flakesense::files::write::Place::Named, &path)?;
                let size = std::fs::metadata(&path)?.len();
                Ok(format!(
                    "format {version} -> {}: {} tests, {} -> {} bytes",
                    file::FORMAT_VERSION,
                    index.len(),
                    bytes.len(),
                    size
                ))
            });
        match upgraded {
            Ok(what) => eprintln!("{}: {what}", path.display()),
            Err(error) => {
                eprintln!("{}: {error:#}", path.display());
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
