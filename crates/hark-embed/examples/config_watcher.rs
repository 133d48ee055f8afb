//! A service that follows its configuration live: list the `config/`
//! prefix once, then watch it from the revision after that list, so no
//! change between the two is missed and none is seen twice (the
//! list-and-watch pattern Kubernetes' informers use against etcd).
//!
//! Run: `cargo run --example config_watcher` (set `CONFIG_WATCHER_DIR` to
//! keep the data somewhere; a temporary directory by default). It changes
//! the configuration a few times itself, prints what the watcher sees, and
//! exits once its view matches the store.

use std::collections::BTreeMap;
use std::time::Duration;

use hark_embed::{EventKind, Hark, RangeRequest, ResponseKind, WatchRequest};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let temp = tempfile::tempdir()?;
    // Not from the arguments: `cargo test` passes its own to examples.
    let dir = std::env::var_os("CONFIG_WATCHER_DIR")
        .map_or_else(|| temp.path().to_path_buf(), Into::into);
    let hark = Hark::open(&dir)?;
    hark.put("config/color", "blue")?;
    hark.put("config/size", "10")?;

    // List, then watch from the next revision.
    let listed = hark.range(&RangeRequest::prefix("config/"))?;
    let mut config: BTreeMap<String, String> = listed
        .kvs
        .iter()
        .map(|kv| (text(&kv.key), text(&kv.value)))
        .collect();
    println!("at revision {}: {config:?}", listed.header_revision);
    let watch =
        hark.watch(WatchRequest::prefix("config/").from_revision(listed.header_revision + 1))?;

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
    let mut seen = listed.header_revision;
    while seen < last {
        let response = watch
            .recv_timeout(Duration::from_secs(10))
            .ok_or("no change within 10 s")?;
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
