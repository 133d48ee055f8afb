//! The web console in a real browser: headless Chromium (Debian's
//! `chromium`) loads `/ui/` from a running server, runs the console's
//! scripts against the JSON gateway, and the test reads the DOM it built
//! (`--dump-dom`). Screenshots of each page, at a laptop's and a phone's
//! width, are saved as test artifacts under the target dir's
//! `tmp/console-screenshots/`. Without `chromium` on PATH the test is
//! skipped, unless `HARK_REQUIRE_CHROMIUM=1` (CI) makes it fail.

mod common;

use std::path::PathBuf;

use common::{find_on_path, start};
use etcd_client::{Txn, TxnOp};

/// Runs Chromium headless on `url` and returns the DOM after the page's
/// scripts settled; also saves a screenshot per width as `<name>-<width>.png`.
async fn browse(chromium: &PathBuf, url: &str, name: &str) -> String {
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    // Chromium's own profile, per run: a shared one would lock between runs.
    let profile = tempfile::tempdir().unwrap();
    let headless = |extra: Vec<String>| {
        let mut cmd = tokio::process::Command::new(chromium);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            // A container's small /dev/shm can crash the renderer.
            "--disable-dev-shm-usage",
            // Virtual time runs on while the page is busy (its fetches
            // included), then the DOM or screenshot is taken.
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .kill_on_drop(true);
        cmd
    };
    for (width, height) in [(1280, 800), (390, 844)] {
        let file = shots.join(format!("{name}-{width}.png"));
        let out = run(headless(vec![
            format!("--window-size={width},{height}"),
            format!("--screenshot={}", file.display()),
        ]))
        .await;
        assert!(out.status.success(), "chromium failed: {out:?}");
        let png = std::fs::read(&file).unwrap();
        assert!(
            png.starts_with(b"\x89PNG"),
            "{} is not a PNG",
            file.display()
        );
    }
    let out = run(headless(vec!["--dump-dom".into()])).await;
    assert!(out.status.success(), "chromium failed: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs one Chromium, killed if it hangs rather than holding up the suite.
async fn run(mut cmd: tokio::process::Command) -> std::process::Output {
    tokio::time::timeout(std::time::Duration::from_secs(60), cmd.output())
        .await
        .expect("chromium finished within a minute")
        .unwrap()
}

/// The text of the status line; empty unless something failed.
fn status_line(dom: &str) -> &str {
    let at = dom.find("id=\"status\"").expect("a status line");
    let rest = &dom[at..];
    let text = &rest[rest.find('>').unwrap() + 1..];
    &text[..text.find('<').unwrap()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_browses_keys_and_shows_values_as_text() {
    let Some(chromium) = find_on_path("chromium") else {
        assert_ne!(
            std::env::var("HARK_REQUIRE_CHROMIUM").as_deref(),
            Ok("1"),
            "chromium is not on PATH"
        );
        eprintln!("no chromium on PATH: the browser test is skipped");
        return;
    };
    let srv = start(&["--unsafe-no-fsync"]).await;
    let mut c = srv.client().await;
    // A prefix of 10k keys, written 100 to a transaction.
    for chunk in 0..100 {
        let puts: Vec<TxnOp> = (0..100)
            .map(|i| TxnOp::put(format!("big/{:05}", chunk * 100 + i), "v", None))
            .collect();
        c.txn(Txn::new().and_then(puts)).await.unwrap();
    }
    let html_key = "<img src=x onerror=alert(1)>";
    c.put(html_key, "v<b>bold</b>", None).await.unwrap();
    c.put("conf/app.json", r#"{"port":8080,"tags":["a","b"]}"#, None)
        .await
        .unwrap();
    c.put("conf/blob", vec![0u8, 1, 0xff, 0xfe], None)
        .await
        .unwrap();
    let lease = c.lease_grant(600, None).await.unwrap().id();
    c.put(
        "conf/leased",
        "x",
        Some(etcd_client::PutOptions::new().with_lease(lease)),
    )
    .await
    .unwrap();
    let base = format!("http://{}/ui/", srv.server.client_addrs[0]);

    // The whole keyspace: two directories and the HTML key, as text.
    let dom = browse(&chromium, &format!("{base}#/keys"), "keys").await;
    assert_eq!(status_line(&dom), "", "{dom}");
    for entry in [
        r#"<button class="dir" title="big/" aria-expanded="false">big/</button>"#,
        r#"<button class="dir" title="conf/" aria-expanded="false">conf/</button>"#,
        r#"<button class="leaf" title="&lt;img src=x onerror=alert(1)&gt;">&lt;img src=x onerror=alert(1)&gt;</button>"#,
    ] {
        assert!(dom.contains(entry), "no {entry} in\n{dom}");
    }
    assert!(!dom.contains("<img"), "a key became markup:\n{dom}");
    assert_eq!(dom.matches(r#"title="big/""#).count(), 1, "{dom}");
    assert!(
        !dom.contains(r#"class="more""#),
        "a level of three has no more:\n{dom}"
    );

    // A level of 10k keys: the first 100, then a button for more.
    let dom = browse(&chromium, &format!("{base}#/keys/big%2F"), "keys-big").await;
    assert_eq!(status_line(&dom), "", "{dom}");
    assert_eq!(dom.matches(r#"<button class="leaf""#).count(), 100, "{dom}");
    assert!(dom.contains(r#"title="big/00000">00000</button>"#), "{dom}");
    assert!(dom.contains(r#"title="big/00099">00099</button>"#), "{dom}");
    assert!(!dom.contains(r#"title="big/00100""#), "{dom}");
    assert!(
        dom.contains(r#"<button class="more">more…</button>"#),
        "{dom}"
    );

    // Values: JSON pretty-printed, markup as text, binary as hex.
    let dom = browse(
        &chromium,
        &format!("{base}#/keys/conf%2Fapp.json"),
        "value-json",
    )
    .await;
    assert!(dom.contains("<dd>30 bytes, JSON</dd>"), "{dom}");
    assert!(
        dom.contains("<pre class=\"value\">{\n  \"port\": 8080,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}</pre>"),
        "{dom}"
    );
    let link = "%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E";
    let dom = browse(&chromium, &format!("{base}#/keys/{link}"), "value-html").await;
    assert!(
        dom.contains(r#"<pre class="value">v&lt;b&gt;bold&lt;/b&gt;</pre>"#),
        "{dom}"
    );
    assert!(!dom.contains("<b>bold"), "a value became markup:\n{dom}");
    let dom = browse(
        &chromium,
        &format!("{base}#/keys/conf%2Fblob"),
        "value-binary",
    )
    .await;
    assert!(dom.contains("<dd>4 bytes, binary (hex)</dd>"), "{dom}");
    assert!(
        dom.contains(r#"<pre class="value">00000000  00 01 ff fe</pre>"#),
        "{dom}"
    );
    // A lease id in hex, as etcdctl prints it.
    let dom = browse(
        &chromium,
        &format!("{base}#/keys/conf%2Fleased"),
        "value-leased",
    )
    .await;
    assert!(
        dom.contains(&format!("<dt>lease</dt><dd>{lease:x}</dd>")),
        "{dom}"
    );
}
