//! A line-oriented shell over a Hark store on disk, with no server in
//! between: for poking at `hark-mvcc` alone (put, get, delete, compact).
//!
//! `cargo run --example hark-store [-- DATA_DIR]` (default `hark.data`), then type
//! `help`.

use std::io::{BufRead, Write};

use hark_mvcc::{DeleteRangeRequest, PutRequest, RangeRequest, Store, StoreOptions};

const HELP: &str = "\
commands:
  put KEY VALUE          write a key
  get KEY [END] [REV]    read a key, or [KEY, END) (END \\0 = all keys >= KEY), at REV
  del KEY [END]          delete a key or range
  compact REV            drop history older than REV
  status                 current and compacted revision, keys, db size
  quit";

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "hark.data".to_string());
    let store = match Store::open(&dir, StoreOptions::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot open store in {dir}: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "hark store in {dir} at revision {}; type `help`",
        store.current_revision()
    );
    let stdin = std::io::stdin();
    prompt();
    for line in stdin.lock().lines().map_while(Result::ok) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match run(&store, &words) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => println!("error: {e}"),
        }
        prompt();
    }
}

fn prompt() {
    print!("> ");
    let _ = std::io::stdout().flush();
}

fn unescape(s: &str) -> Vec<u8> {
    if s == "\\0" {
        vec![0]
    } else {
        s.as_bytes().to_vec()
    }
}

fn run(store: &Store, words: &[&str]) -> Result<bool, String> {
    let err = |e: hark_mvcc::Error| e.to_string();
    match words {
        [] => {}
        ["help"] => println!("{HELP}"),
        ["quit" | "exit"] => return Ok(false),
        ["put", key, value] => {
            let r = store
                .put(PutRequest::new(key.to_string(), value.to_string()))
                .map_err(err)?;
            println!("OK (revision {})", r.header_revision);
        }
        ["get", key, rest @ ..] if rest.len() <= 2 => {
            let mut req = RangeRequest::range(
                unescape(key),
                rest.first().map(|e| unescape(e)).unwrap_or_default(),
            );
            if let Some(rev) = rest.get(1) {
                req.revision = rev.parse().map_err(|_| format!("bad revision {rev}"))?;
            }
            let r = store.range(&req).map_err(err)?;
            for kv in r.kvs {
                println!(
                    "{} = {} (create {}, mod {}, version {})",
                    String::from_utf8_lossy(&kv.key),
                    String::from_utf8_lossy(&kv.value),
                    kv.create_revision,
                    kv.mod_revision,
                    kv.version
                );
            }
        }
        ["del", key, rest @ ..] if rest.len() <= 1 => {
            let end = rest.first().map(|e| unescape(e)).unwrap_or_default();
            let r = store
                .delete_range(DeleteRangeRequest::new(unescape(key), end))
                .map_err(err)?;
            println!("{} deleted (revision {})", r.deleted, r.header_revision);
        }
        ["compact", rev] => {
            let rev = rev.parse().map_err(|_| format!("bad revision {rev}"))?;
            store.compact(rev, true).map_err(err)?;
            println!("compacted at {rev}");
        }
        ["status"] => println!(
            "revision {}, compacted {}, {} keys, {} bytes",
            store.current_revision(),
            store.compacted_revision(),
            store.key_count(),
            store.db_size()
        ),
        _ => println!("unknown command; type `help`"),
    }
    Ok(true)
}
