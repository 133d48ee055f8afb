//! The web console in a real browser: headless Chromium (Debian's
//! `chromium`), driven over WebDriver (Debian's `chromedriver`), loads
//! `/ui/` from a running `hark`, and the tests click, type and read the
//! page as a person would. Screenshots of each page, at a laptop's and a
//! phone's width, are saved as test artifacts under the target dir's
//! `tmp/console-screenshots/`. Without the two tools on PATH the tests are
//! skipped, unless `HARK_REQUIRE_CHROMIUM=1` (CI) makes them fail.

#[path = "console/browser.rs"]
mod browser;
mod common;

use std::time::{Duration, Instant};

use browser::Browser;
use common::{TestServer, find_on_path, start};
use etcd_client::{Client, ConnectOptions, PutOptions, Txn, TxnOp};
use serde_json::json;

/// One browser at a time: the watch test times an event's arrival, and
/// two Chromiums on two cores would time each other instead.
static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn base(srv: &TestServer) -> String {
    format!("http://{}/ui/", srv.server.client_addrs[0])
}

async fn value(c: &mut Client, key: &str) -> Option<(String, i64)> {
    let kv = c.get(key, None).await.unwrap().kvs().first().cloned()?;
    Some((kv.value_str().unwrap().to_owned(), kv.mod_revision()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browses_a_prefix_of_ten_thousand_keys_and_shows_values_as_text() {
    let Some(tools) = browser::tools() else {
        return;
    };
    let _one = ONE_BROWSER.lock().await;
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
        Some(PutOptions::new().with_lease(lease)),
    )
    .await
    .unwrap();
    let b = Browser::start(&tools).await;
    let base = base(&srv);

    // The whole keyspace: two directories and the HTML key, as text.
    b.open(&format!("{base}#/keys")).await;
    b.screenshot("keys").await;
    let dom = b.dom().await;
    for entry in [
        r#"<button class="dir" title="big/" aria-expanded="false">big/</button>"#,
        r#"<button class="dir" title="conf/" aria-expanded="false">conf/</button>"#,
        r#"<button class="leaf" title="&lt;img src=x onerror=alert(1)&gt;">&lt;img src=x onerror=alert(1)&gt;</button>"#,
    ] {
        assert!(dom.contains(entry), "no {entry} in\n{dom}");
    }
    assert!(!dom.contains("<img"), "a key became markup:\n{dom}");
    assert!(!dom.contains(r#"class="more""#), "a level of three: {dom}");
    // Each folder shows its size from the server's counters: 10k keys of
    // "big/NNNNN" (9 bytes) and "v", and conf/'s three.
    for size in [
        r#"<span class="size" title="with history: 10000 revisions, "#,
        r#">10000 keys · 97.7 KiB</span>"#,
        r#">3 keys · "#,
    ] {
        assert!(dom.contains(size), "no {size} in\n{dom}");
    }

    // The keyboard: down to conf/, right opens it, down to its first key,
    // Enter shows the value.
    b.client
        .execute("document.querySelector('button.dir').focus()", vec![])
        .await
        .unwrap();
    // ArrowDown, ArrowRight, then (once conf/ is open) ArrowDown, Enter,
    // each to the focused element.
    let browser = &b;
    let press = |key: &'static str| async move {
        browser
            .client
            .active_element()
            .await
            .unwrap()
            .send_keys(key)
            .await
            .unwrap();
    };
    press("\u{e015}").await;
    press("\u{e014}").await;
    b.until(
        "ArrowRight opened conf/",
        "return document.querySelector('button.dir[title=\"conf/\"]').getAttribute('aria-expanded') === 'true'",
    )
    .await;
    press("\u{e015}").await;
    press("\u{e007}").await;
    b.until(
        "the keyboard opened conf/app.json",
        "return document.querySelector('.viewer h2')?.textContent === 'conf/app.json'",
    )
    .await;

    // A level of 10k keys: the first 100, then "more" brings the next 100.
    b.open(&format!("{base}#/keys/big%2F")).await;
    b.screenshot("keys-big").await;
    let count = "return document.querySelectorAll('button.leaf').length";
    assert_eq!(b.until("leaves", count).await, json!(100));
    let dom = b.dom().await;
    assert!(dom.contains(r#"title="big/00000">00000</button>"#), "{dom}");
    assert!(dom.contains(r#"title="big/00099">00099</button>"#), "{dom}");
    assert!(!dom.contains(r#"title="big/00100""#), "{dom}");
    b.click("button.more").await;
    b.until(
        "a second page",
        "return document.querySelectorAll('button.leaf').length === 200",
    )
    .await;
    let dom = b.dom().await;
    assert!(dom.contains(r#"title="big/00199">00199</button>"#), "{dom}");
    assert_eq!(dom.matches(r#"class="more""#).count(), 1, "{dom}");

    // Values: JSON pretty-printed, markup as text, binary as hex, a lease
    // in hex as etcdctl prints it.
    b.open(&format!("{base}#/keys/conf%2Fapp.json")).await;
    b.screenshot("value-json").await;
    let dom = b.dom().await;
    assert!(dom.contains("<dd>30 bytes, JSON</dd>"), "{dom}");
    assert!(
        dom.contains("<pre class=\"value\">{\n  \"port\": 8080,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}</pre>"),
        "{dom}"
    );
    b.open(&format!(
        "{base}#/keys/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E"
    ))
    .await;
    let dom = b.dom().await;
    assert!(
        dom.contains(r#"<pre class="value">v&lt;b&gt;bold&lt;/b&gt;</pre>"#),
        "{dom}"
    );
    assert!(!dom.contains("<b>bold"), "a value became markup:\n{dom}");
    b.open(&format!("{base}#/keys/conf%2Fblob")).await;
    let dom = b.dom().await;
    assert!(dom.contains("<dd>4 bytes, binary (hex)</dd>"), "{dom}");
    assert!(
        dom.contains(r#"<pre class="value">00000000  00 01 ff fe</pre>"#),
        "{dom}"
    );
    b.open(&format!("{base}#/keys/conf%2Fleased")).await;
    let dom = b.dom().await;
    assert!(
        dom.contains(&format!("<dt>lease</dt><dd>{lease:x}</dd>")),
        "{dom}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_is_refused_when_the_key_changed_underneath() {
    let Some(tools) = browser::tools() else {
        return;
    };
    let _one = ONE_BROWSER.lock().await;
    let srv = start(&["--unsafe-no-fsync"]).await;
    let mut c = srv.client().await;
    c.put("app/config", "color = blue", None).await.unwrap();
    let lease = c.lease_grant(600, None).await.unwrap().id();
    c.put(
        "app/leased",
        "one",
        Some(PutOptions::new().with_lease(lease)),
    )
    .await
    .unwrap();
    let b = Browser::start(&tools).await;
    let base = base(&srv);

    // Someone else changes the key while it is being edited: refused.
    b.open(&format!("{base}#/keys/app%2Fconfig")).await;
    b.click("button.edit").await;
    b.type_into("textarea.draft", "color = green").await;
    c.put("app/config", "color = red", None).await.unwrap();
    let (_, theirs) = value(&mut c, "app/config").await.unwrap();
    b.click("button.save").await;
    let notice = b
        .until(
            "the conflict is shown",
            "return document.querySelector('.conflict')?.textContent",
        )
        .await;
    assert!(
        notice
            .as_str()
            .unwrap()
            .contains(&format!("changed at revision {theirs}")),
        "{notice}"
    );
    assert_eq!(b.text("pre.theirs").await, "color = red");
    b.screenshot("edit-conflict").await;
    assert_eq!(
        value(&mut c, "app/config").await.unwrap().0,
        "color = red",
        "the refused edit wrote nothing"
    );
    // Saving again, knowingly over their change, writes the draft kept.
    assert_eq!(
        b.element("textarea.draft")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("color = green")
    );
    b.click("button.save").await;
    b.until(
        "saved",
        "return document.querySelector('.saved')?.textContent.startsWith('Saved at revision')",
    )
    .await;
    assert_eq!(
        value(&mut c, "app/config").await.unwrap().0,
        "color = green"
    );

    // An edit keeps the key's lease.
    b.open(&format!("{base}#/keys/app%2Fleased")).await;
    b.click("button.edit").await;
    b.type_into("textarea.draft", "two").await;
    b.click("button.save").await;
    b.until("saved", "return document.querySelector('.saved')")
        .await;
    let kv = c.get("app/leased", None).await.unwrap().kvs()[0].clone();
    assert_eq!((kv.value_str().unwrap(), kv.lease()), ("two", lease));

    // A new key; creating one that exists is refused.
    b.open(&format!("{base}#/keys/app%2F")).await;
    b.click("button.new").await;
    b.type_into("input.new-key", "app/fresh").await;
    b.type_into("form.creator textarea", "{\"a\": 1}").await;
    b.click("button.create").await;
    b.until(
        "the new key is shown",
        "return document.querySelector('.viewer h2')?.textContent === 'app/fresh'",
    )
    .await;
    assert_eq!(value(&mut c, "app/fresh").await.unwrap().0, "{\"a\": 1}");
    b.click("button.new").await;
    b.type_into("input.new-key", "app/config").await;
    b.type_into("form.creator textarea", "clobber").await;
    b.click("button.create").await;
    b.until(
        "creating an existing key is refused",
        "return document.querySelector('.conflict')?.textContent.includes('already exists')",
    )
    .await;
    assert_eq!(
        value(&mut c, "app/config").await.unwrap().0,
        "color = green"
    );

    // A delete is refused after a change too, and done when confirmed on
    // the latest version.
    b.open(&format!("{base}#/keys/app%2Fconfig")).await;
    b.click("button.delete").await;
    c.put("app/config", "color = black", None).await.unwrap();
    b.click("button.confirm-delete").await;
    b.until(
        "the delete is refused",
        "return document.querySelector('.conflict')?.textContent.includes('Not saved')",
    )
    .await;
    assert!(value(&mut c, "app/config").await.is_some());

    // History: every version, and a diff between two.
    b.open(&format!("{base}#/keys/app%2Fconfig")).await;
    b.click("button.show-history").await;
    b.until(
        "the history",
        "return document.querySelectorAll('.history tbody tr').length === 4",
    )
    .await;
    let rows: Vec<String> = b
        .client
        .execute(
            "return [...document.querySelectorAll('.history tbody tr')].map(r => r.textContent)",
            vec![],
        )
        .await
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    let values: Vec<&str> = [
        "color = black",
        "color = green",
        "color = red",
        "color = blue",
    ]
    .to_vec();
    for (row, want) in rows.iter().zip(&values) {
        assert!(row.ends_with(want), "{row} is not {want}: {rows:?}");
    }
    let diff = b.text("pre.diff").await;
    assert_eq!(diff, "- color = green\n+ color = black", "{diff}");
    b.screenshot("history").await;

    // After a compaction the history starts at the compacted revision,
    // with the version current there.
    let compact_at = c
        .get("app/config", None)
        .await
        .unwrap()
        .header()
        .unwrap()
        .revision();
    c.put("app/config", "color = white", None).await.unwrap();
    c.compact(compact_at, None).await.unwrap();
    b.open(&format!("{base}#/keys/app%2Fconfig")).await;
    b.click("button.show-history").await;
    let note = b
        .until(
            "the compacted history",
            "return document.querySelector('.history .note')?.textContent",
        )
        .await;
    assert_eq!(
        note,
        json!(format!(
            "History before revision {compact_at} was compacted."
        ))
    );
    assert_eq!(
        b.until(
            "two versions",
            "return document.querySelectorAll('.history tbody tr').length"
        )
        .await,
        json!(2)
    );
    assert!(b.text(".history tbody").await.contains("color = black"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_watch_shows_an_etcdctl_put_within_a_second() {
    let Some(tools) = browser::tools() else {
        return;
    };
    let Some(etcdctl) = find_on_path("etcdctl-3.5").or_else(|| find_on_path("etcdctl")) else {
        assert_ne!(
            std::env::var("HARK_REQUIRE_CHROMIUM").as_deref(),
            Ok("1"),
            "etcdctl is not on PATH"
        );
        return;
    };
    let _one = ONE_BROWSER.lock().await;
    let srv = start(&["--unsafe-no-fsync"]).await;
    let mut c = srv.client().await;
    let first = c.put("jobs/1", "queued", None).await.unwrap();
    let first = first.header().unwrap().revision();
    c.put("jobs/1", "running", None).await.unwrap();
    c.put("other", "x", None).await.unwrap();
    let b = Browser::start(&tools).await;
    let base = base(&srv);

    // From a past revision: the two changes already made, newest first,
    // with their previous values.
    b.open(&format!("{base}#/watch/jobs%2F?prefix=1&from={first}"))
        .await;
    let rows = "return [...document.querySelectorAll('.events tbody tr')].map(r => [...r.cells].map(c => c.textContent).join('|'))";
    let want = json!([
        format!("{}|PUT|jobs/1|running|queued", first + 1),
        format!("{first}|PUT|jobs/1|queued|"),
    ]);
    b.until(
        "the past events",
        &format!("const r = (() => {{ {rows} }})(); return JSON.stringify(r) === '{want}' && r"),
    )
    .await;

    // Now: a put by etcdctl shows within a second of its answer.
    let endpoint = srv.endpoint();
    let out = tokio::process::Command::new(&etcdctl)
        .args(["--endpoints", &endpoint, "put", "jobs/2", "<b>new</b>"])
        .output()
        .await
        .unwrap();
    let put_done = Instant::now();
    assert!(out.status.success(), "{out:?}");
    b.until(
        "the etcdctl put",
        "return document.querySelector('.events tbody tr')?.cells[2].textContent === 'jobs/2'",
    )
    .await;
    let shown_after = put_done.elapsed();
    assert!(
        shown_after < Duration::from_secs(1),
        "the event showed {shown_after:?} after etcdctl's put"
    );
    assert_eq!(
        b.text(".events tbody tr td.cell-value").await,
        "<b>new</b>",
        "the value is text"
    );
    b.screenshot("watch").await;

    // The filter hides what does not match; pause holds events back.
    b.type_into("input.watch-filter", "running").await;
    let visible =
        "return [...document.querySelectorAll('.events tbody tr')].filter(r => !r.hidden).length";
    assert_eq!(b.until("filtered", visible).await, json!(1));
    // Typed away, so the page hears the field change.
    b.type_into("input.watch-filter", "x\u{e003}").await;
    assert_eq!(b.until("unfiltered", visible).await, json!(3));
    b.click("button.pause").await;
    c.delete("jobs/1", None).await.unwrap();
    b.until(
        "a held event",
        "return document.querySelector('button.pause').textContent === 'Resume (1 waiting)'",
    )
    .await;
    assert_eq!(
        b.until(
            "rows while paused",
            "return document.querySelectorAll('.events tbody tr').length"
        )
        .await,
        json!(3)
    );
    b.click("button.pause").await;
    b.until(
        "the held event shown",
        "return document.querySelector('.events tbody tr')?.cells[1].textContent === 'DELETE'",
    )
    .await;
    // The sparkline counted them.
    // The sparkline counts them at its next second.
    b.until(
        "the rate line counted the events",
        "return /^\\d+ events\\/s \\(peak [1-9]\\d*\\)$/.test(document.querySelector('.rate').textContent) \
         && document.querySelector('.sparkline polyline').getAttribute('points').split(' ').some(p => Number(p.split(',')[1]) < 23)",
    )
    .await;

    // A watch from a compacted revision says so.
    let now = c
        .get("jobs/", None)
        .await
        .unwrap()
        .header()
        .unwrap()
        .revision();
    c.compact(now, None).await.unwrap();
    b.open(&format!("{base}#/watch/jobs%2F?prefix=1&from={first}"))
        .await;
    let notice = b
        .until(
            "the compaction notice",
            "return document.querySelector('.notice .conflict')?.textContent",
        )
        .await;
    assert!(
        notice.as_str().unwrap().starts_with(&format!(
            "History before revision {now} was compacted: the changes from revision {first} to {}",
            now - 1
        )),
        "{notice}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_watch_resumes_after_the_server_restarts() {
    let Some(tools) = browser::tools() else {
        return;
    };
    let _one = ONE_BROWSER.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let peer = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let args = vec![
        "--data-dir".to_owned(),
        dir.path().join("data").display().to_string(),
        "--listen-client-urls".into(),
        url.clone(),
        "--advertise-client-urls".into(),
        url.clone(),
        "--listen-peer-urls".into(),
        format!("http://127.0.0.1:{peer}"),
    ];
    let mut hark = common::spawn(dir.path(), &args, &[]);
    let mut c = common::ready(&url, &mut hark).await;
    c.put("k", "1", None).await.unwrap();
    let b = Browser::start(&tools).await;
    b.open(&format!("{url}/ui/#/watch/k")).await;
    c.put("k", "2", None).await.unwrap();
    let top = "return document.querySelector('.events tbody tr')?.cells[3].textContent";
    assert_eq!(b.until("the first event", top).await, json!("2"));

    // The server goes; puts made while it is back but before the page
    // reconnects are not lost: the page resumes after the last it showed.
    hark.kill().unwrap();
    hark.wait().unwrap();
    b.until(
        "the page notices",
        "return document.querySelector('.watch-state.error')?.textContent.startsWith('Connection lost')",
    )
    .await;
    let mut hark = common::spawn(dir.path(), &args, &[]);
    let mut c = common::ready(&url, &mut hark).await;
    c.put("k", "3", None).await.unwrap();
    c.put("k", "4", None).await.unwrap();
    let all = "return [...document.querySelectorAll('.events tbody tr')].map(r => r.cells[3].textContent).join(',')";
    b.until(
        "every change once",
        &format!("return (() => {{ {all} }})() === '4,3,2'"),
    )
    .await;
    let state = b.text(".watch-state").await;
    assert!(
        state.contains("resumed from revision") && state.contains("after a dropped connection"),
        "{state}"
    );
    b.screenshot("watch-resumed").await;
    hark.kill().unwrap();
    hark.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_page_shows_the_cluster_the_engine_and_leases() {
    let Some(tools) = browser::tools() else {
        return;
    };
    let _one = ONE_BROWSER.lock().await;
    let srv = start(&["--unsafe-no-fsync", "--quota-backend-bytes", "104857600"]).await;
    let mut c = srv.client().await;
    let lease = c.lease_grant(300, None).await.unwrap().id();
    c.put("svc/a", "1", Some(PutOptions::new().with_lease(lease)))
        .await
        .unwrap();
    // Watchers for the engine's plot.
    let mut watches = Vec::new();
    for i in 0..3 {
        watches.push(c.watch(format!("w{i}"), None).await.unwrap());
    }
    let b = Browser::start(&tools).await;
    b.open(&format!("{}#/health", base(&srv))).await;
    let member = c.status().await.unwrap().header().unwrap().member_id();
    let fact = |name: &str| {
        format!(
            "return [...document.querySelectorAll('.facts dt')].find(d => d.textContent === '{name}')?.nextElementSibling.textContent"
        )
    };
    assert_eq!(
        b.until("the leader", &fact("leader")).await,
        json!(format!("{member:x}"))
    );
    assert_eq!(
        b.until("this member", &fact("this member")).await,
        json!(format!("{member:x}"))
    );
    let quota = b.text(".quota-text").await;
    assert!(quota.contains(" of 100.0 MiB quota, "), "{quota}");
    assert_eq!(b.text(".alarms").await, "No alarms.");
    assert!(b.text(".cluster table").await.contains("leader"));
    let watchers = b
        .until(
            "the watcher count",
            "const f = [...document.querySelectorAll('.plot')].find(p => p.querySelector('.series').textContent === 'watchers'); return f && f.querySelector('.latest').textContent",
        )
        .await;
    assert_eq!(watchers, json!("3"));
    // The deepest queues: each client's stream by its address (etcd-client
    // opens a stream per watch).
    assert_eq!(
        b.text(".engine h3").await,
        "Deepest queues (3 of 3 streams)"
    );
    let streams = b.text(".engine table").await;
    assert_eq!(streams.matches("127.0.0.1:").count(), 3, "{streams}");
    let leases = b.text(".leases table").await;
    assert!(leases.contains(&format!("{lease:x}")), "{leases}");
    assert!(leases.contains("svc/a"), "{leases}");
    // The TTL counts down between two looks.
    let ttl = "return Number(document.querySelector('.ttl').textContent.replace('s', ''))";
    let before = b.until("a ttl", ttl).await.as_i64().unwrap();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let after = b.until("a ttl", ttl).await.as_i64().unwrap();
    assert!(after < before && before <= 300, "{before} then {after}");
    // Sampled every 2 s: by now each plot has a line of two points or more.
    b.until(
        "plotted lines",
        "const lines = [...document.querySelectorAll('.plot polyline')]; \
         return lines.length === 4 && lines.every(l => l.getAttribute('points').split(' ').length >= 2)",
    )
    .await;
    b.screenshot("health").await;
    drop(watches);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auth_on_the_console_asks_to_log_in() {
    let Some(tools) = browser::tools() else {
        return;
    };
    let _one = ONE_BROWSER.lock().await;
    let srv = start(&["--unsafe-no-fsync"]).await;
    let mut c = srv.client().await;
    c.put("secret/a", "1", None).await.unwrap();
    c.user_add("root", "rootpw", None).await.unwrap();
    c.user_grant_role("root", "root").await.unwrap();
    c.auth_enable().await.unwrap();
    let b = Browser::start(&tools).await;
    b.client
        .goto(&format!("{}#/keys", base(&srv)))
        .await
        .unwrap();
    b.until(
        "the login form",
        "return document.getElementById('page').dataset.state === 'login'",
    )
    .await;
    b.screenshot("login").await;
    b.type_into("form.login input[name=user]", "root").await;
    b.type_into("form.login input[name=password]", "wrong")
        .await;
    b.click("form.login button").await;
    b.until(
        "a refused login",
        "return document.querySelector('form.login .conflict').textContent.includes('authentication failed')",
    )
    .await;
    b.type_into("form.login input[name=password]", "rootpw")
        .await;
    b.click("form.login button").await;
    b.settled().await;
    assert!(b.text(".tree").await.contains("secret/"));
    // Only the token is kept, for this tab's session; never the password.
    let kept = b
        .client
        .execute(
            "return JSON.stringify([sessionStorage, localStorage, document.cookie])",
            vec![],
        )
        .await
        .unwrap();
    let kept = kept.as_str().unwrap();
    assert!(!kept.contains("rootpw"), "{kept}");
    assert!(kept.contains("hark-console-token"), "{kept}");
    // The Health page works for root; the stream report it reads answers
    // no one without a token (it names clients' addresses).
    b.open(&format!("{}#/health", base(&srv))).await;
    assert!(
        b.text(".engine h3").await.starts_with("Deepest queues"),
        "{}",
        b.dom().await
    );
    let addr = srv.server.client_addrs[0];
    let (code, body) =
        tokio::task::spawn_blocking(move || common::http_get(addr, "/debug/watch/streams"))
            .await
            .unwrap();
    assert_eq!(
        (code, body.as_str()),
        (401, "etcdserver: user name is empty\n")
    );
    // Logging out forgets the token and asks again.
    b.click("#logout").await;
    b.until(
        "the login form again",
        "return document.getElementById('page').dataset.state === 'login' && !sessionStorage.length",
    )
    .await;
    let mut c = Client::connect(
        [srv.endpoint()],
        Some(ConnectOptions::new().with_user("root", "rootpw")),
    )
    .await
    .unwrap();
    assert_eq!(value(&mut c, "secret/a").await.unwrap().0, "1");
}
