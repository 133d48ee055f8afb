//! 1,000 watches on one client share one gRPC watch stream, and each gets
//! exactly its own events. Its own test binary: it reads the process-wide
//! gRPC counters of the one server it starts.

use std::time::Duration;

use hark_client::{Client, WatchOptions};

mod common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_watches_on_one_stream() {
    let (srv, _dir) = common::server(&[]).await;
    let c = Client::connect(srv.endpoints()).await.unwrap();
    let mut watches = Vec::new();
    for i in 0..1000 {
        let options = WatchOptions {
            created_notify: true,
            ..Default::default()
        };
        watches.push(c.watch(format!("key/{i}"), options).await.unwrap());
    }
    // Every create answered (in order, one at a time), then each key written once.
    for w in &mut watches {
        let u = tokio::time::timeout(Duration::from_secs(60), w.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(u.created);
    }
    let mut revisions = Vec::new();
    for i in 0..1000 {
        revisions.push(
            c.put(format!("key/{i}"), format!("v{i}"))
                .await
                .unwrap()
                .header
                .unwrap()
                .revision,
        );
    }
    for (i, w) in watches.iter_mut().enumerate() {
        let u = tokio::time::timeout(Duration::from_secs(60), w.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(u.events.len(), 1);
        let kv = u.events[0].kv.as_ref().unwrap();
        assert_eq!(
            (kv.key.as_ref(), kv.mod_revision),
            (format!("key/{i}").as_bytes(), revisions[i])
        );
    }
    let addr = srv.client_addrs[0];
    let metrics = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut body = Vec::new();
        s.read_to_end(&mut body).unwrap();
        String::from_utf8_lossy(&body).to_string()
    })
    .await
    .unwrap();
    let line = metrics
        .lines()
        .find(|l| l.starts_with("grpc_server_started_total") && l.contains("grpc_method=\"Watch\""))
        .unwrap_or_else(|| panic!("no Watch counter in\n{metrics}"));
    assert!(line.ends_with(" 1"), "one watch stream expected: {line}");
    srv.shutdown().await;
}
