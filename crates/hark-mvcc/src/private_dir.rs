//! Directories only their owner can enter, as etcd keeps its data dir:
//! whatever the files inside them allow, other users read nothing.

use std::io;
use std::path::Path;

/// The mode etcd gives its data and WAL dirs (`fileutil.PrivateDirMode`).
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Creates `dir`, and any missing parent, with mode 0700. A dir that exists
/// keeps its mode (its owner chose it), with etcd's warning when users other
/// than the owner may enter or read it.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {
                let mode = meta.permissions().mode() & 0o777;
                if mode & !PRIVATE_DIR_MODE != 0 {
                    tracing::warn!(
                        path = %dir.display(),
                        permission = format!("{mode:o}"),
                        recommended = format!("{PRIVATE_DIR_MODE:o}"),
                        "check file permission: the directory exists, but others may read it; \
                         the recommended permission prevents unprivileged access to the data"
                    );
                }
                Ok(())
            }
            Ok(_) => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a directory", dir.display()),
            )),
            Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
                .recursive(true)
                .mode(PRIVATE_DIR_MODE)
                .create(dir),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_dir_and_its_new_parents_are_private_and_an_old_one_keeps_its_mode() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("a/b/data");
        ensure_private_dir(&deep).unwrap();
        assert_eq!(mode(&deep), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&open).unwrap();
        assert_eq!(
            mode(&open),
            0o755,
            "the owner's choice is kept (and warned about)"
        );
        let file = root.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        assert!(ensure_private_dir(&file).is_err());
    }
}
