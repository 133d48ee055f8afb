use std::time::Duration;

use bytes::Bytes;
use hark_proto::etcdserverpb::{
    self as pb, kv_client::KvClient, lease_client::LeaseClient,
    maintenance_client::MaintenanceClient,
};
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};

use crate::txn::Txn;
use crate::watch::{Mux, Watch, WatchOptions};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid endpoint {0:?}: {1}")]
    Endpoint(String, String),
    #[error("no endpoints given")]
    NoEndpoints,
    /// The server's answer; the message is etcd's (e.g. `etcdserver: key not found`).
    #[error("{}", .0.message())]
    Status(#[from] tonic::Status),
    #[error(transparent)]
    Watch(#[from] crate::watch::WatchError),
    #[error("timed out")]
    Timeout,
}

/// A connection to one or more endpoints (calls are balanced across them and
/// fail over when one is down). Cheap to clone; clones share the connection
/// and the watch stream.
#[derive(Clone)]
pub struct Client {
    channel: Channel,
    mux: Mux,
}

fn endpoint(url: &str) -> Result<Endpoint, Error> {
    let url = url.trim();
    // etcd clients accept bare host:port.
    let full = if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    };
    Endpoint::from_shared(full)
        .map(|e| {
            e.connect_timeout(Duration::from_secs(2))
                .tcp_nodelay(true)
                .http2_keep_alive_interval(Duration::from_secs(10))
                .keep_alive_timeout(Duration::from_secs(20))
        })
        .map_err(|e| Error::Endpoint(url.to_string(), e.to_string()))
}

impl Client {
    /// Connects lazily: the first call establishes the connection, and later
    /// calls reconnect by themselves after a failure.
    pub async fn connect(
        endpoints: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<Client, Error> {
        let endpoints: Vec<Endpoint> = endpoints
            .into_iter()
            .map(|e| endpoint(e.as_ref()))
            .collect::<Result<_, _>>()?;
        let channel = match endpoints.len() {
            0 => return Err(Error::NoEndpoints),
            1 => endpoints[0].connect_lazy(),
            _ => Channel::balance_list(endpoints.into_iter()),
        };
        let mux = Mux::start(channel.clone());
        Ok(Client { channel, mux })
    }

    fn kv(&self) -> KvClient<Channel> {
        KvClient::new(self.channel.clone()).max_decoding_message_size(usize::MAX)
    }

    fn lease(&self) -> LeaseClient<Channel> {
        LeaseClient::new(self.channel.clone())
    }

    /// One key at the current revision.
    pub async fn get(&self, key: impl Into<Bytes>) -> Result<pb::RangeResponse, Error> {
        self.range(pb::RangeRequest {
            key: key.into(),
            ..Default::default()
        })
        .await
    }

    /// Every key starting with `prefix`.
    pub async fn get_prefix(&self, prefix: impl Into<Bytes>) -> Result<pb::RangeResponse, Error> {
        let key: Bytes = prefix.into();
        self.range(pb::RangeRequest {
            range_end: crate::prefix_end(&key).into(),
            key,
            ..Default::default()
        })
        .await
    }

    /// Any range read (every `RangeRequest` option).
    pub async fn range(&self, req: pb::RangeRequest) -> Result<pb::RangeResponse, Error> {
        Ok(self.kv().range(req).await?.into_inner())
    }

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
        Ok(self.kv().put(req).await?.into_inner())
    }

    pub async fn delete(&self, key: impl Into<Bytes>) -> Result<pb::DeleteRangeResponse, Error> {
        self.delete_range(pb::DeleteRangeRequest {
            key: key.into(),
            ..Default::default()
        })
        .await
    }

    pub async fn delete_range(
        &self,
        req: pb::DeleteRangeRequest,
    ) -> Result<pb::DeleteRangeResponse, Error> {
        Ok(self.kv().delete_range(req).await?.into_inner())
    }

    pub async fn txn(&self, txn: Txn) -> Result<pb::TxnResponse, Error> {
        Ok(self.kv().txn(txn.into_request()).await?.into_inner())
    }

    pub async fn compact(
        &self,
        revision: i64,
        physical: bool,
    ) -> Result<pb::CompactionResponse, Error> {
        let req = pb::CompactionRequest { revision, physical };
        Ok(self.kv().compact(req).await?.into_inner())
    }

    /// Grants a lease of `ttl` seconds; `id` 0 lets the server choose.
    pub async fn lease_grant(&self, ttl: i64, id: i64) -> Result<pb::LeaseGrantResponse, Error> {
        let req = pb::LeaseGrantRequest { ttl, id };
        Ok(self.lease().lease_grant(req).await?.into_inner())
    }

    pub async fn lease_revoke(&self, id: i64) -> Result<pb::LeaseRevokeResponse, Error> {
        let req = pb::LeaseRevokeRequest { id };
        Ok(self.lease().lease_revoke(req).await?.into_inner())
    }

    /// TTL left (-1 for an unknown or expired lease), granted TTL, and the keys
    /// when asked.
    pub async fn lease_time_to_live(
        &self,
        id: i64,
        keys: bool,
    ) -> Result<pb::LeaseTimeToLiveResponse, Error> {
        let req = pb::LeaseTimeToLiveRequest { id, keys };
        Ok(self.lease().lease_time_to_live(req).await?.into_inner())
    }

    pub async fn leases(&self) -> Result<pb::LeaseLeasesResponse, Error> {
        Ok(self
            .lease()
            .lease_leases(pb::LeaseLeasesRequest {})
            .await?
            .into_inner())
    }

    /// One keep-alive round trip; the reply's `ttl` is the lease's TTL after
    /// renewal (0: it is gone).
    pub async fn lease_keep_alive_once(
        &self,
        id: i64,
    ) -> Result<pb::LeaseKeepAliveResponse, Error> {
        let (tx, rx) = mpsc::channel(1);
        let _ = tx.send(pb::LeaseKeepAliveRequest { id }).await;
        let mut replies = self
            .lease()
            .lease_keep_alive(ReceiverStream::new(rx))
            .await?
            .into_inner();
        let reply = replies
            .message()
            .await?
            .ok_or_else(|| tonic::Status::unavailable("keep-alive stream ended"))?;
        Ok(reply)
    }

    /// Keeps a lease alive in the background (a renewal every third of its TTL)
    /// until the returned handle is dropped or the lease is gone.
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

    pub async fn status(&self) -> Result<pb::StatusResponse, Error> {
        let mut m = MaintenanceClient::new(self.channel.clone());
        Ok(m.status(pb::StatusRequest {}).await?.into_inner())
    }

    /// Watches `key` (or a range, per `options`). The watch is created on the
    /// shared stream; its first update follows the server's `created` reply.
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
