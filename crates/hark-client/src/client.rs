use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use hark_proto::etcdserverpb::{
    self as pb, cluster_client::ClusterClient, kv_client::KvClient, lease_client::LeaseClient,
    maintenance_client::MaintenanceClient,
};
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Endpoint;

use crate::secure::{ConnectOptions, Credentials};

use crate::endpoints::{Conn, Endpoints};
use crate::txn::Txn;
use crate::watch::{Mux, Watch, WatchOptions};

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An endpoint URL that does not parse: the URL and why.
    #[error("invalid endpoint {0:?}: {1}")]
    Endpoint(String, String),
    /// [`Client::connect`] got an empty list.
    #[error("no endpoints given")]
    NoEndpoints,
    /// The server's answer; the message is etcd's (e.g. `etcdserver: key not
    /// found`, or `etcdserver: mvcc: required revision has been compacted`
    /// for a read below the compacted revision). `Unavailable` when no
    /// endpoint could be reached.
    #[error("{}", .0.message())]
    Status(#[from] tonic::Status),
    /// A watch ended (see [`crate::WatchError`]); from the calls built on
    /// watches, such as [`Client::wait_for_change`].
    #[error(transparent)]
    Watch(#[from] crate::watch::WatchError),
    /// A wait with a timeout ran out (e.g. [`crate::Cache::wait_for_revision`]).
    #[error("timed out")]
    Timeout,
    /// The TLS settings are unusable (a bad certificate or key, no CA).
    #[error("TLS: {0}")]
    Tls(String),
}

/// A connection to one or more endpoints. Calls go to one endpoint at a time
/// and move on to the next when it is unavailable. Cheap to clone; clones share
/// the connections and the watch stream.
///
/// Retries, as clientv3's retry interceptor makes them: a call that fails
/// with `Unavailable` (no leader, leader changed, a member down) is sent
/// again, to the next endpoint, 25 ms ± 10% after each round over the
/// endpoints, for up to [`ConnectOptions::retry_for`] — if it is safe to.
/// Reads, lease calls and the other calls clientv3 marks repeatable are;
/// writes that could apply twice (put, delete, txn, compact, membership
/// and auth changes, defragment) are sent again only when the connection
/// could not be made, so the first attempt certainly reached no server.
///
/// Every call is one etcd v3 RPC and returns etcd's response message (from
/// [`crate::pb`]): its `header.revision` is the store's current revision
/// when the call was served (after a write that changed something, the
/// write's own revision).
#[derive(Clone)]
pub struct Client {
    endpoints: Endpoints,
    mux: Mux,
    retry_for: Duration,
}

/// Whether a call that failed `Unavailable` may be sent again (clientv3's
/// retry policies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Reads and calls that clientv3 repeats: again after any `Unavailable`.
    Repeatable,
    /// Writes that could apply twice: again only if never sent.
    IfNotSent,
}

/// The pause after a round over every endpoint failed: clientv3's 25 ms,
/// jittered by ±10% so that clients do not retry in step.
fn backoff() -> Duration {
    use rand::Rng;
    Duration::from_micros(rand::rng().random_range(22_500..=27_500))
}

/// Whether `status` says the request never reached a server: the
/// connection itself could not be made (refused, unreachable, timed out
/// while dialling), as clientv3's "there is no address available".
pub(crate) fn never_sent(status: &tonic::Status) -> bool {
    let mut text = status.message().to_ascii_lowercase();
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        text.push(' ');
        text.push_str(&e.to_string().to_ascii_lowercase());
        source = e.source();
    }
    [
        "error trying to connect",
        "tcp connect error",
        "dial timed out",
    ]
    .iter()
    .any(|sign| text.contains(sign))
}

/// The endpoint of `url`, and whether it asks for TLS (`https://`). The
/// endpoint itself is always `http://`: TLS is the connector's.
fn endpoint(url: &str, dial_timeout: Duration) -> Result<(Endpoint, bool), Error> {
    let url = url.trim();
    // etcd clients accept bare host:port.
    let (full, tls) = match url.split_once("://") {
        Some(("https", rest)) => (format!("http://{rest}"), true),
        Some(_) => (url.to_string(), false),
        None => (format!("http://{url}"), false),
    };
    Endpoint::from_shared(full)
        .map(|e| {
            e.connect_timeout(dial_timeout)
                .tcp_nodelay(true)
                .http2_keep_alive_interval(Duration::from_secs(10))
                .keep_alive_timeout(Duration::from_secs(20))
        })
        .map(|e| (e, tls))
        .map_err(|e| Error::Endpoint(url.to_string(), e.to_string()))
}

impl Client {
    /// Connects lazily: the first call establishes the connection, and later
    /// calls reconnect by themselves after a failure: this never fails
    /// because a server is down. Endpoints are `http://host:port` or a bare
    /// `host:port`; an `https://` endpoint needs [`Client::connect_with`]
    /// with [`TlsOptions`](crate::TlsOptions) (a CA to trust), else this fails
    /// with [`Error::Tls`].
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hark_client::Error> {
    /// let client = hark_client::Client::connect([
    ///     "http://10.0.0.1:2379",
    ///     "http://10.0.0.2:2379",
    ///     "http://10.0.0.3:2379",
    /// ])
    /// .await?;
    /// let status = client.status().await?;
    /// println!("etcd {} at revision {}", status.version, status.header.unwrap().revision);
    /// # Ok(()) }
    /// ```
    pub async fn connect(
        endpoints: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<Client, Error> {
        Self::connect_with(endpoints, ConnectOptions::default()).await
    }

    /// [`Client::connect`] with TLS and / or a user. With a user it
    /// authenticates first (a wrong password fails here), and again
    /// whenever the server says the token is invalid or stale, for every
    /// call and every watch.
    pub async fn connect_with(
        endpoints: impl IntoIterator<Item = impl AsRef<str>>,
        options: ConnectOptions,
    ) -> Result<Client, Error> {
        let mut tls_config = None;
        let mut channels = Vec::new();
        let dial_timeout = options
            .dial_timeout
            .unwrap_or(crate::secure::DEFAULT_DIAL_TIMEOUT);
        for url in endpoints {
            let (endpoint, https) = endpoint(url.as_ref(), dial_timeout)?;
            let channel = match (&options.tls, https) {
                (None, false) => endpoint.connect_lazy(),
                (tls, _) => {
                    if tls_config.is_none() {
                        let tls = tls.clone().unwrap_or_default();
                        tls_config = Some(tls.client_config().map_err(Error::Tls)?);
                    }
                    let config = tls_config.clone().expect("built above");
                    crate::secure::tls_channel(endpoint, config, dial_timeout)
                }
            };
            channels.push(channel);
        }
        if channels.is_empty() {
            return Err(Error::NoEndpoints);
        }
        let endpoints = Endpoints::new(channels, Credentials::new(options.user.clone()));
        if options.user.is_some() {
            let mut last = None;
            for i in 0..endpoints.len() {
                match endpoints.credentials.renew(endpoints.channel(i)).await {
                    Ok(()) => {
                        last = None;
                        endpoints.use_endpoint(i);
                        break;
                    }
                    Err(s) if s.code() == tonic::Code::Unavailable => last = Some(s),
                    Err(s) => return Err(s.into()),
                }
            }
            if let Some(s) = last {
                return Err(s.into());
            }
        }
        let mux = Mux::start(endpoints.clone());
        Ok(Client {
            endpoints,
            mux,
            retry_for: options
                .retry_for
                .unwrap_or(crate::secure::DEFAULT_RETRY_FOR),
        })
    }

    /// Runs a repeatable call (see [`Client`]'s retries).
    pub(crate) async fn call<T, F, Fut>(&self, f: F) -> Result<T, Error>
    where
        F: Fn(Conn) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        self.call_with(Retry::Repeatable, f).await
    }

    /// Runs a call that could apply twice (see [`Client`]'s retries).
    pub(crate) async fn call_once<T, F, Fut>(&self, f: F) -> Result<T, Error>
    where
        F: Fn(Conn) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        self.call_with(Retry::IfNotSent, f).await
    }

    /// Runs a call on the current endpoint; when that endpoint is
    /// unavailable, on the next ones, pausing after each full round, while
    /// `retry` allows and [`ConnectOptions::retry_for`] has not run out.
    async fn call_with<T, F, Fut>(&self, retry: Retry, f: F) -> Result<T, Error>
    where
        F: Fn(Conn) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let give_up = tokio::time::Instant::now() + self.retry_for;
        let mut attempts = 0usize;
        loop {
            let (i, channel) = self.endpoints.current();
            match f(channel).await {
                Ok(r) => return Ok(r.into_inner()),
                Err(s) if s.code() == tonic::Code::Unavailable => {
                    self.endpoints.failed(i);
                    attempts += 1;
                    let again = retry == Retry::Repeatable || never_sent(&s);
                    if !again || tokio::time::Instant::now() >= give_up {
                        return Err(s.into());
                    }
                    if attempts.is_multiple_of(self.endpoints.len()) {
                        tokio::time::sleep(backoff()).await;
                    }
                }
                // The token died (expired, or auth changed): renew, then once more.
                Err(s) if self.endpoints.credentials.renewable(&s) => {
                    self.endpoints
                        .credentials
                        .renew(self.endpoints.channel(i))
                        .await?;
                    return Ok(f(self.endpoints.conn(i)).await?.into_inner());
                }
                Err(s) => return Err(s.into()),
            }
        }
    }

    /// One key at the current revision (etcd's Range RPC); `kvs` is empty
    /// when the key does not exist.
    ///
    /// ```no_run
    /// # async fn demo(client: hark_client::Client) -> Result<(), hark_client::Error> {
    /// client.put("config/mode", "fast").await?;
    /// let resp = client.get("config/mode").await?;
    /// let kv = &resp.kvs[0];
    /// assert_eq!(kv.value, "fast");
    /// // Revisions: when the key was created and last changed, and how often.
    /// println!("{} {} {}", kv.create_revision, kv.mod_revision, kv.version);
    ///
    /// let all = client.get_prefix("config/").await?;
    /// println!("{} keys under config/", all.count);
    /// client.delete("config/mode").await?;
    /// assert!(client.get("config/mode").await?.kvs.is_empty());
    /// # Ok(()) }
    /// ```
    pub async fn get(&self, key: impl Into<Bytes>) -> Result<pb::RangeResponse, Error> {
        self.range(pb::RangeRequest {
            key: key.into(),
            ..Default::default()
        })
        .await
    }

    /// Every key starting with `prefix`, by key, at the current revision
    /// (`[prefix, prefix_end(prefix))`, see [`crate::prefix_end`]).
    pub async fn get_prefix(&self, prefix: impl Into<Bytes>) -> Result<pb::RangeResponse, Error> {
        let key: Bytes = prefix.into();
        self.range(pb::RangeRequest {
            range_end: crate::prefix_end(&key).into(),
            key,
            ..Default::default()
        })
        .await
    }

    /// Any range read (every `RangeRequest` option: a past `revision`,
    /// `limit`, sorting, `keys_only`, `count_only`, revision filters). A
    /// revision below the compacted one fails with etcd's `etcdserver: mvcc:
    /// required revision has been compacted`, one above the current with
    /// `etcdserver: mvcc: required revision is a future revision`.
    pub async fn range(&self, req: pb::RangeRequest) -> Result<pb::RangeResponse, Error> {
        self.call(|ch| {
            let req = req.clone();
            async move { kv(ch).range(req).await }
        })
        .await
    }

    /// etcd 3.7's RangeStream: the range as a stream of chunks, all read
    /// at one revision, so a range of any size costs the server (and this
    /// client, if it handles each chunk as it comes) about one chunk of
    /// memory. Each chunk's `range_response.kvs` are the next keys; the
    /// last chunk alone carries the header, `count` and `more`. Sort
    /// orders and revision filters are refused (`Unimplemented`), as is
    /// the whole call by servers older than 3.7. Opening the stream is
    /// retried as a read is; a stream cut short is not resumed.
    pub async fn range_stream(
        &self,
        req: pb::RangeRequest,
    ) -> Result<tonic::Streaming<pb::RangeStreamResponse>, Error> {
        self.call(|ch| {
            let req = req.clone();
            async move { kv(ch).range_stream(req).await }
        })
        .await
    }

    /// [`Client::range_stream`] merged into the one answer Range would give
    /// (what etcdctl 3.7's `get --stream` prints).
    pub async fn range_streamed(&self, req: pb::RangeRequest) -> Result<pb::RangeResponse, Error> {
        let mut stream = self.range_stream(req).await?;
        let mut merged = pb::RangeResponse::default();
        while let Some(chunk) = stream.message().await? {
            let Some(part) = chunk.range_response else {
                continue;
            };
            merged.kvs.extend(part.kvs);
            if part.header.is_some() {
                merged.header = part.header;
                merged.count = part.count;
                merged.more = part.more;
            }
        }
        Ok(merged)
    }

    /// Sets `key` to `value` (etcd's Put RPC), detaching it from any lease.
    /// The reply's `header.revision` is the put's revision (the key's new
    /// `mod_revision`).
    pub async fn put(
        &self,
        key: impl Into<Bytes>,
        value: impl Into<Bytes>,
    ) -> Result<pb::PutResponse, Error> {
        self.put_request(pb::PutRequest {
            key: key.into(),
            value: value.into(),
            ..Default::default()
        })
        .await
    }

    /// A put with every option (lease, prev_kv, ignore_value, ignore_lease).
    pub async fn put_request(&self, req: pb::PutRequest) -> Result<pb::PutResponse, Error> {
        self.call_once(|ch| {
            let req = req.clone();
            async move { kv(ch).put(req).await }
        })
        .await
    }

    /// Deletes `key` (etcd's DeleteRange RPC); `deleted` is 0 or 1.
    /// Deleting a missing key makes no revision.
    pub async fn delete(&self, key: impl Into<Bytes>) -> Result<pb::DeleteRangeResponse, Error> {
        self.delete_range(pb::DeleteRangeRequest {
            key: key.into(),
            ..Default::default()
        })
        .await
    }

    /// Deletes every key starting with `prefix`, at one revision
    /// (`[prefix, prefix_end(prefix))`, see [`crate::prefix_end`]).
    pub async fn delete_prefix(
        &self,
        prefix: impl Into<Bytes>,
    ) -> Result<pb::DeleteRangeResponse, Error> {
        let key: Bytes = prefix.into();
        self.delete_range(pb::DeleteRangeRequest {
            range_end: crate::prefix_end(&key).into(),
            key,
            ..Default::default()
        })
        .await
    }

    /// A delete with every option (`range_end` for a range or prefix,
    /// `prev_kv` for the deleted values); all keys go at one revision.
    pub async fn delete_range(
        &self,
        req: pb::DeleteRangeRequest,
    ) -> Result<pb::DeleteRangeResponse, Error> {
        self.call_once(|ch| {
            let req = req.clone();
            async move { kv(ch).delete_range(req).await }
        })
        .await
    }

    /// Runs a transaction (etcd's Txn RPC): atomically, at one revision;
    /// `succeeded` tells which branch ran. See [`Txn`].
    pub async fn txn(&self, txn: Txn) -> Result<pb::TxnResponse, Error> {
        let req = txn.into_request();
        self.call_once(|ch| {
            let req = req.clone();
            async move { kv(ch).txn(req).await }
        })
        .await
    }

    /// Compacts the history before `revision` (etcd's Compact RPC): reads
    /// from earlier revisions then fail with `etcdserver: mvcc: required
    /// revision has been compacted` (watches with
    /// [`WatchError::Compacted`](crate::WatchError::Compacted)), as does
    /// compacting at or below the compacted revision again; a revision above
    /// the current one fails with `etcdserver: mvcc: required revision is a
    /// future revision`. With `physical` the call returns once the old
    /// versions are removed from the backend.
    pub async fn compact(
        &self,
        revision: i64,
        physical: bool,
    ) -> Result<pb::CompactionResponse, Error> {
        let req = pb::CompactionRequest { revision, physical };
        self.call_once(|ch| async move { kv(ch).compact(req).await })
            .await
    }

    /// Grants a lease of `ttl` seconds (etcd's LeaseGrant RPC); `id` 0 lets
    /// the server choose. Keys put with the lease (see
    /// [`Client::put_request`]) are deleted when it expires or is revoked.
    ///
    /// ```no_run
    /// # async fn demo(client: hark_client::Client) -> Result<(), hark_client::Error> {
    /// use hark_client::pb;
    ///
    /// let lease = client.lease_grant(10, 0).await?;
    /// client
    ///     .put_request(pb::PutRequest {
    ///         key: "nodes/me".into(),
    ///         value: "10.0.0.7".into(),
    ///         lease: lease.id,
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// // Renewed every TTL/3 while `alive` lives; drop it and the key
    /// // expires with the lease (or revoke the lease to delete it now).
    /// let alive = client.keep_alive(lease.id).await?;
    /// assert_eq!(alive.ttl(), 10);
    /// client.lease_revoke(lease.id).await?;
    /// assert!(client.get("nodes/me").await?.kvs.is_empty());
    /// # Ok(()) }
    /// ```
    pub async fn lease_grant(&self, ttl: i64, id: i64) -> Result<pb::LeaseGrantResponse, Error> {
        let req = pb::LeaseGrantRequest { ttl, id };
        self.call(|ch| async move { LeaseClient::new(ch).lease_grant(req).await })
            .await
    }

    /// Revokes a lease (etcd's LeaseRevoke RPC), deleting its keys at one
    /// revision; an unknown lease fails with `etcdserver: requested lease
    /// not found`.
    pub async fn lease_revoke(&self, id: i64) -> Result<pb::LeaseRevokeResponse, Error> {
        let req = pb::LeaseRevokeRequest { id };
        self.call(|ch| async move { LeaseClient::new(ch).lease_revoke(req).await })
            .await
    }

    /// TTL left (-1 for an unknown or expired lease), granted TTL, and the keys
    /// when asked.
    pub async fn lease_time_to_live(
        &self,
        id: i64,
        keys: bool,
    ) -> Result<pb::LeaseTimeToLiveResponse, Error> {
        let req = pb::LeaseTimeToLiveRequest { id, keys };
        self.call(|ch| async move { LeaseClient::new(ch).lease_time_to_live(req).await })
            .await
    }

    /// The ids of every live lease (etcd's LeaseLeases RPC).
    pub async fn leases(&self) -> Result<pb::LeaseLeasesResponse, Error> {
        self.call(|ch| async move {
            LeaseClient::new(ch)
                .lease_leases(pb::LeaseLeasesRequest {})
                .await
        })
        .await
    }

    /// One keep-alive round trip; the reply's `ttl` is the lease's TTL after
    /// renewal (0: it is gone).
    pub async fn lease_keep_alive_once(
        &self,
        id: i64,
    ) -> Result<pb::LeaseKeepAliveResponse, Error> {
        self.call(|ch| async move {
            // Sent before the call: some servers answer headers only after a request.
            let (tx, rx) = mpsc::channel(1);
            let _ = tx.send(pb::LeaseKeepAliveRequest { id }).await;
            let mut replies = LeaseClient::new(ch)
                .lease_keep_alive(ReceiverStream::new(rx))
                .await?
                .into_inner();
            let reply = replies
                .message()
                .await?
                .ok_or_else(|| tonic::Status::unavailable("keep-alive stream ended"))?;
            Ok(tonic::Response::new(reply))
        })
        .await
    }

    /// Keeps a lease alive in the background (a renewal every third of its TTL)
    /// until the returned handle is dropped or the lease is gone. Fails with
    /// `etcdserver: requested lease not found` if it is gone already. A
    /// failed renewal is retried after about a second; the lease lives on
    /// meanwhile until its TTL runs out. See [`Client::lease_grant`].
    pub async fn keep_alive(&self, id: i64) -> Result<KeepAlive, Error> {
        let ttl = self.lease_keep_alive_once(id).await?.ttl;
        if ttl <= 0 {
            return Err(tonic::Status::not_found("etcdserver: requested lease not found").into());
        }
        let (ttl_tx, ttl_rx) = watch::channel(ttl);
        let client = self.clone();
        let task = tokio::spawn(async move {
            let mut ttl = ttl;
            loop {
                let period = Duration::from_millis((ttl.max(1) as u64 * 1000 / 3).max(100));
                tokio::time::sleep(period).await;
                match client.lease_keep_alive_once(id).await.map(|r| r.ttl) {
                    Ok(t) => {
                        let _ = ttl_tx.send(t);
                        if t <= 0 {
                            return;
                        }
                        ttl = t;
                    }
                    // Try again sooner; the lease lives on until its TTL runs out.
                    Err(e) => {
                        tracing::debug!(lease = id, error = %e, "keep-alive failed");
                        ttl = 3;
                    }
                }
            }
        });
        Ok(KeepAlive { ttl: ttl_rx, task })
    }

    /// The Alarm RPC: `action` on alarm `alarm` (0: any) of `member_id`.
    pub async fn alarm(
        &self,
        action: pb::alarm_request::AlarmAction,
        member_id: u64,
        alarm: pb::AlarmType,
    ) -> Result<pb::AlarmResponse, Error> {
        let req = pb::AlarmRequest {
            action: action as i32,
            member_id,
            alarm: alarm as i32,
        };
        self.call(|ch| async move { MaintenanceClient::new(ch).alarm(req).await })
            .await
    }

    /// Space per key prefix (Hark's `harkpb.Usage/Du`; etcd answers
    /// Unimplemented): `prefix` (empty or ending with `/`) and the tracked
    /// prefixes at most `depth` levels below it.
    pub async fn du(
        &self,
        prefix: impl Into<Bytes>,
        depth: u32,
    ) -> Result<hark_proto::harkpb::DuResponse, Error> {
        let req = hark_proto::harkpb::DuRequest {
            prefix: prefix.into(),
            depth,
        };
        self.call(|ch| {
            let req = req.clone();
            async move {
                hark_proto::harkpb::usage_client::UsageClient::new(ch)
                    .du(req)
                    .await
            }
        })
        .await
    }

    /// Reclaims the backend's unused space (etcd's defragmentation).
    pub async fn defragment(&self) -> Result<pb::DefragmentResponse, Error> {
        self.call_once(|ch| async move {
            MaintenanceClient::new(ch)
                .defragment(pb::DefragmentRequest {})
                .await
        })
        .await
    }

    /// The server's snapshot stream: the database in chunks, then a last
    /// message holding its sha256 (etcd's framing; see `harkctl snapshot save`).
    pub async fn snapshot(&self) -> Result<tonic::Streaming<pb::SnapshotResponse>, Error> {
        self.call(|ch| async move {
            MaintenanceClient::new(ch)
                .max_decoding_message_size(usize::MAX)
                .snapshot(pb::SnapshotRequest {})
                .await
        })
        .await
    }

    /// The endpoint's status (etcd's Status RPC): server version, database
    /// size, leader, raft index and term, and the current revision in
    /// `header.revision`.
    pub async fn status(&self) -> Result<pb::StatusResponse, Error> {
        self.call(|ch| async move {
            MaintenanceClient::new(ch)
                .status(pb::StatusRequest {})
                .await
        })
        .await
    }

    /// The hash of every key-value the endpoint's store holds up to
    /// `revision` (0: its latest), from its compaction revision on (etcd's
    /// HashKV): members agree on it at any revision both hold.
    pub async fn hash_kv(&self, revision: i64) -> Result<pb::HashKvResponse, Error> {
        self.call(|ch| async move {
            MaintenanceClient::new(ch)
                .hash_kv(pb::HashKvRequest { revision })
                .await
        })
        .await
    }

    /// Makes member `target` the leader (etcd's MoveLeader). Only the leader
    /// takes it: the client must be connected to the leader's endpoint.
    pub async fn move_leader(&self, target: u64) -> Result<pb::MoveLeaderResponse, Error> {
        self.call(|ch| async move {
            MaintenanceClient::new(ch)
                .move_leader(pb::MoveLeaderRequest { target_id: target })
                .await
        })
        .await
    }

    /// The cluster's members; `linearizable` asks for the list as of a read
    /// the leader confirmed (etcd 3.5's default for clientv3 is `false`).
    pub async fn member_list(&self, linearizable: bool) -> Result<pb::MemberListResponse, Error> {
        self.call(|ch| async move {
            ClusterClient::new(ch)
                .member_list(pb::MemberListRequest { linearizable })
                .await
        })
        .await
    }

    /// Adds a member (a voter, or a learner) that will serve peers on `peer_urls`.
    pub async fn member_add(
        &self,
        peer_urls: Vec<String>,
        is_learner: bool,
    ) -> Result<pb::MemberAddResponse, Error> {
        self.call_once(|ch| {
            let req = pb::MemberAddRequest {
                peer_ur_ls: peer_urls.clone(),
                is_learner,
            };
            async move { ClusterClient::new(ch).member_add(req).await }
        })
        .await
    }

    /// Removes member `id` from the cluster (etcd's MemberRemove RPC).
    pub async fn member_remove(&self, id: u64) -> Result<pb::MemberRemoveResponse, Error> {
        self.call_once(|ch| async move {
            ClusterClient::new(ch)
                .member_remove(pb::MemberRemoveRequest { id })
                .await
        })
        .await
    }

    /// Replaces member `id`'s peer URLs.
    pub async fn member_update(
        &self,
        id: u64,
        peer_urls: Vec<String>,
    ) -> Result<pb::MemberUpdateResponse, Error> {
        self.call_once(|ch| {
            let req = pb::MemberUpdateRequest {
                id,
                peer_ur_ls: peer_urls.clone(),
            };
            async move { ClusterClient::new(ch).member_update(req).await }
        })
        .await
    }

    /// Makes learner `id` a voter (once its log is close to the leader's).
    pub async fn member_promote(&self, id: u64) -> Result<pb::MemberPromoteResponse, Error> {
        self.call_once(|ch| async move {
            ClusterClient::new(ch)
                .member_promote(pb::MemberPromoteRequest { id })
                .await
        })
        .await
    }

    /// Watches `key` (or a range, per `options`). The watch is created on the
    /// shared stream; its first update follows the server's `created` reply.
    /// Never fails itself: errors come as the watch's last item.
    ///
    /// Give `start_revision` to see the changes since a revision you know
    /// (e.g. the revision of a read, plus one): the watch delivers every
    /// change from it on, and goes on where it stopped after a reconnect, so
    /// nothing is missed or repeated. If that revision is compacted, the
    /// watch ends with [`WatchError::Compacted`](crate::WatchError::Compacted)
    /// and the caller must read again.
    ///
    /// ```no_run
    /// # async fn demo(client: hark_client::Client) -> Result<(), hark_client::Error> {
    /// use hark_client::{WatchError, WatchOptions};
    ///
    /// let listing = client.get_prefix("jobs/").await?;
    /// let seen = listing.header.unwrap().revision;
    /// let mut watch = client
    ///     .watch("jobs/", WatchOptions::prefix().from_revision(seen + 1))
    ///     .await?;
    /// while let Some(update) = watch.next().await {
    ///     match update {
    ///         Ok(update) => {
    ///             for event in update.events {
    ///                 println!("{:?} at {}", event.r#type(), event.kv.unwrap().mod_revision);
    ///             }
    ///         }
    ///         // Too far behind: list again and watch from the new revision.
    ///         Err(WatchError::Compacted { .. }) => break,
    ///         Err(e) => return Err(e.into()),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn watch(
        &self,
        key: impl Into<Bytes>,
        options: WatchOptions,
    ) -> Result<Watch, Error> {
        Ok(self.mux.watch(key.into(), options))
    }

    /// Asks the server for a progress reply on the watch stream: every watch
    /// then gets an update with no events at the current revision.
    pub fn request_progress(&self) {
        self.mux.request_progress();
    }
}

fn kv(channel: Conn) -> KvClient<Conn> {
    KvClient::new(channel).max_decoding_message_size(usize::MAX)
}

/// A running keep-alive; dropping it stops the renewals.
pub struct KeepAlive {
    ttl: watch::Receiver<i64>,
    task: tokio::task::JoinHandle<()>,
}

impl KeepAlive {
    /// The TTL the last renewal returned (0 once the lease is gone).
    pub fn ttl(&self) -> i64 {
        *self.ttl.borrow()
    }
}

impl Drop for KeepAlive {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused connection is recognised as never sent (a write may go to
    /// the next endpoint); a server's own `Unavailable` is not (the write
    /// may have been proposed: sending it again could apply it twice).
    #[tokio::test]
    async fn only_a_connection_never_made_counts_as_never_sent() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let channel = Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
            .unwrap()
            .connect_lazy();
        let refused = KvClient::new(channel)
            .range(pb::RangeRequest::default())
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unavailable, "{refused:?}");
        assert!(never_sent(&refused), "{refused:?}");
        for said in [
            "etcdserver: no leader",
            "etcdserver: leader changed",
            "etcdserver: request timed out",
        ] {
            assert!(!never_sent(&tonic::Status::unavailable(said)), "{said}");
        }
    }

    #[test]
    fn the_backoff_is_clientv3s_25_ms_jittered() {
        let pauses: Vec<Duration> = (0..200).map(|_| backoff()).collect();
        assert!(
            pauses
                .iter()
                .all(|p| (22_500..=27_500).contains(&(p.as_micros() as u64)))
        );
        let first = pauses[0];
        assert!(pauses.iter().any(|p| *p != first), "jittered");
    }
}
