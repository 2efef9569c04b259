//! Writing files: the one way flakesense writes anything (indexes, their lock, the cache of signal
//! shares, `.flakesense/.gitignore`, `--out` and other output files).
//!
//! A file of flakesense's own lives below a directory it trusts ([`Place::Below`]: a workspace
//! root, a git directory, the user's cache directory), and nothing from there down may be a
//! symbolic link: a cloned repository could otherwise point `.flakesense` anywhere and have
//! flakesense write there. Files are created with `O_EXCL` and opened with `O_NOFOLLOW`, so a
//! link put in place of a file is never written through either. A path the user named
//! ([`Place::Named`]) is written where it leads, as long as it is (or will be) a regular file: a
//! device or a FIFO is refused, never replaced.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a file may be written.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// Below this directory, with no symbolic link from it down.
    Below(&'a Path),
    /// Where the user said: links followed, an existing target must be a regular file.
    Named,
}

/// Writes `bytes` to `path` atomically: a new temporary file beside it, flushed to disk, then
/// renamed over it, so a crash leaves the old file or the new one, never half of one, and a
/// process that mapped the old file keeps reading it unchanged.
pub fn write_atomically(place: Place, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let directory = prepare(place, path)?;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy());
    // A name of this process and write: concurrent writers never share a temporary file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let temporary = directory.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = new_file(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, path)?;
        // The rename itself is durable once the directory is synced (POSIX); Windows has no
        // directory handles to sync and makes renames durable on its own.
        #[cfg(unix)]
        File::open(&directory)?.sync_all()?;
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// Writes `bytes` to `path` if there is nothing there yet; `false` when there is.
pub fn write_if_missing(place: Place, path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    prepare(place, path)?;
    match new_file(path) {
        Ok(mut file) => file.write_all(bytes).map(|()| true),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(error) => Err(error),
    }
}

/// Opens `path` for writing without truncating it, creating it if it is missing: a lock file.
pub fn open_existing_or_new(place: Place, path: &Path) -> std::io::Result<File> {
    prepare(place, path)?;
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    no_follow_no_wait(&mut options);
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular(path));
    }
    Ok(file)
}

/// Fails as a write of `path` would for what is already there (a link, a device), creating
/// nothing: a long command checks before its work, not after it.
pub fn check(place: Place, path: &Path) -> std::io::Result<()> {
    walk(place, path, false).map(|_| ())
}

/// Checks `path` against `place` and creates its missing directories; returns its directory.
fn prepare(place: Place, path: &Path) -> std::io::Result<PathBuf> {
    walk(place, path, true)
}

fn walk(place: Place, path: &Path, create: bool) -> std::io::Result<PathBuf> {
    let directory = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    match place {
        Place::Named => {
            match fs::metadata(path) {
                Ok(metadata) if !metadata.is_file() => return Err(not_regular(path)),
                _ => {}
            }
            if !create {
                return Ok(directory);
            }
            fs::create_dir_all(&directory).map_err(|error| {
                std::io::Error::new(
                    error.kind(),
                    format!("cannot create {}: {error}", directory.display()),
                )
            })?;
        }
        Place::Below(root) => {
            let below = path.strip_prefix(root).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{} is outside {}", path.display(), root.display()),
                )
            })?;
            let mut current = root.to_path_buf();
            let parts: Vec<_> = below.components().collect();
            for (position, part) in parts.iter().enumerate() {
                current.push(part);
                let last = position + 1 == parts.len();
                match fs::symlink_metadata(&current) {
                    Ok(metadata) if metadata.file_type().is_symlink() => {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidInput,
                            format!(
                                "{} is a symbolic link: refusing to write through it",
                                current.display()
                            ),
                        ));
                    }
                    Ok(metadata) if last && !metadata.is_file() => {
                        return Err(not_regular(&current));
                    }
                    Ok(_) => {}
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound && !create => {
                        return Ok(directory);
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound && !last => {
                        fs::create_dir(&current).map_err(|error| {
                            std::io::Error::new(
                                error.kind(),
                                format!("cannot create {}: {error}", current.display()),
                            )
                        })?;
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                    Err(error) => return Err(error),
                }
            }
        }
    }
    Ok(directory)
}

/// A file that did not exist, never a link's target.
fn new_file(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    no_follow_no_wait(&mut options);
    options.open(path)
}

fn no_follow_no_wait(options: &mut OpenOptions) {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    #[cfg(not(unix))]
    let _ = options;
}

fn not_regular(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{} is not a regular file (a directory, a device, a FIFO or a socket): refusing to write to it",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_below_the_root_are_refused_and_nothing_is_written_through_them() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = root.path();
        std::os::unix::fs::symlink(outside.path(), root.join(".flakesense")).unwrap();
        let error = write_atomically(Place::Below(root), &root.join(".flakesense/index"), b"x")
            .unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
        fs::remove_file(root.join(".flakesense")).unwrap();
        fs::create_dir(root.join(".flakesense")).unwrap();
        let lock = root.join(".flakesense/index.lock");
        std::os::unix::fs::symlink(outside.path().join("made"), &lock).unwrap();
        assert!(open_existing_or_new(Place::Below(root), &lock).is_err());
        let ignore = root.join(".flakesense/.gitignore");
        std::os::unix::fs::symlink(outside.path().join("ignore"), &ignore).unwrap();
        assert!(write_if_missing(Place::Below(root), &ignore, b"x").is_err());
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
        let elsewhere = outside.path().join("index");
        assert!(write_atomically(Place::Below(root), &elsewhere, b"x").is_err());
    }

    #[test]
    fn a_named_device_is_refused_and_a_named_file_is_replaced() {
        let error = write_atomically(Place::Named, Path::new("/dev/null"), b"x").unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("a/b/out.idx");
        write_atomically(Place::Named, &path, b"one").unwrap();
        write_atomically(Place::Named, &path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }
}
