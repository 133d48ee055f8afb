//! A service that follows its configuration live: list the `config/`
//! prefix once, then watch it from the revision after that list, so no
//! change between the two is missed and none is seen twice (the
//! list-and-watch pattern Kubernetes' informers use against etcd).
//!
//! It runs on the pure-Rust backend (fjall), iterates the list a page at a
//! time and takes the watch's responses as an iterator.
//!
//! Run: `cargo run -p hark-embed --example config_watcher` (set
//! `CONFIG_WATCHER_DIR` to keep the data somewhere; a temporary directory
//! by default). It changes the configuration a few times itself, prints
//! what the watcher sees, and exits once its view matches the store.

use std::collections::BTreeMap;

use hark_embed::{BackendKind, EventKind, Hark, Options, RangeRequest, ResponseKind, WatchRequest};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let temp = tempfile::tempdir()?;
    // Not from the arguments: `cargo test` passes its own to examples.
    let dir = std::env::var_os("CONFIG_WATCHER_DIR")
        .map_or_else(|| temp.path().to_path_buf(), Into::into);
    let options = Options::default().with_backend(BackendKind::Fjall);
    let hark = Hark::open_with(&dir, options)?;
    hark.put("config/color", "blue")?;
    hark.put("config/size", "10")?;

    // List (a page at a time, all at one revision), then watch from the
    // next revision.
    let listed = hark.range_iter(&RangeRequest::prefix("config/"))?;
    let listed_at = listed.revision();
    let mut config = BTreeMap::new();
    for kv in listed {
        let kv = kv?;
        config.insert(text(&kv.key), text(&kv.value));
    }
    println!("at revision {listed_at}: {config:?}");
    let watch = hark.watch(WatchRequest::prefix("config/").from_revision(listed_at + 1))?;

    // Someone changes the configuration.
    let writer = {
        let hark = hark.clone();
        std::thread::spawn(move || -> hark_embed::Result<i64> {
            hark.put("config/color", "green")?;
            hark.put("config/mode", "fast")?;
            hark.delete("config/size")?;
            hark.put("config/color", "red")
        })
    };
    let last = writer.join().expect("the writer")?;

    // The watcher applies each change in order until it has seen the last.
    // (A live watch waits for the next change; `recv_timeout` bounds a wait.)
    let mut seen = listed_at;
    for response in watch {
        match response.kind {
            ResponseKind::Events { .. } => {}
            ResponseKind::Compacted { compact_revision } => {
                return Err(format!("history compacted at {compact_revision}: list again").into());
            }
            _ => continue,
        }
        for event in response.events() {
            let key = text(&event.kv.key);
            match event.kind {
                EventKind::Put => {
                    println!(
                        "rev {}: {key} = {}",
                        event.revision(),
                        text(&event.kv.value)
                    );
                    config.insert(key, text(&event.kv.value));
                }
                EventKind::Delete => {
                    println!("rev {}: {key} deleted", event.revision());
                    config.remove(&key);
                }
            }
            seen = event.revision();
        }
        if seen >= last {
            break;
        }
    }

    let now: BTreeMap<String, String> = hark
        .range(&RangeRequest::prefix("config/"))?
        .kvs
        .iter()
        .map(|kv| (text(&kv.key), text(&kv.value)))
        .collect();
    assert_eq!(config, now, "the watcher's view is the store's");
    println!("at revision {seen}: {config:?}");
    Ok(())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
