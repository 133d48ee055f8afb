//! `--auto-tls`: a self-signed certificate, made once and kept.

use std::path::{Path, PathBuf};

/// `--auto-tls`: a self-signed certificate for the listen hosts, made once
/// and kept in `dir` (etcd keeps its own under the data dir too).
pub(super) fn self_signed(dir: &Path, hosts: &[String]) -> Result<(PathBuf, PathBuf), String> {
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let mut names: Vec<String> = hosts.to_vec();
    names.extend(["localhost".to_string(), "127.0.0.1".to_string()]);
    names.sort();
    names.dedup();
    let generated = rcgen::generate_simple_self_signed(names)
        .map_err(|e| format!("cannot make a self-signed certificate: {e}"))?;
    hark_mvcc::ensure_private_dir(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // The key is readable by its owner alone (etcd writes it 0600).
    let write = |path: &Path, body: String| {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .and_then(|mut f| f.write_all(body.as_bytes()))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write(&key, generated.signing_key.serialize_pem())?;
    write(&cert, generated.cert.pem())?;
    tracing::warn!(dir = %dir.display(), "--auto-tls: serving a self-signed certificate (development only)");
    Ok((cert, key))
}
