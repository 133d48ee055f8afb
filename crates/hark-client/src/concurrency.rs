//! Locks and elections through etcd's lock and election services
//! (`v3lockpb.Lock`, `v3electionpb.Election`), which Hark and etcd both
//! serve. The server does the waiting; the caller's lease is what keeps a
//! hold or a leadership alive, so keep it alive ([`Client::keep_alive`])
//! for as long as it should last.

use bytes::Bytes;
use hark_proto::v3electionpb::{self as election, election_client::ElectionClient};
use hark_proto::v3lockpb::{self as lock, lock_client::LockClient};

use crate::client::{Client, Error};

pub use election::LeaderKey;

impl Client {
    /// Waits until lock `name` is held under `lease` (0: the server grants
    /// one of 60 s that nothing keeps alive), then returns the response
    /// whose `key` stands for the hold; [`Client::unlock`] that key, or end
    /// the lease, to release it. Locking again under the same lease holds
    /// the same lock.
    ///
    /// ```no_run
    /// # async fn demo(client: hark_client::Client) -> Result<(), hark_client::Error> {
    /// let lease = client.lease_grant(10, 0).await?.id;
    /// let _alive = client.keep_alive(lease).await?;
    /// let held = client.lock("jobs/nightly", lease).await?;
    /// // ... the work only one process may do ...
    /// client.unlock(held.key).await?;
    /// # Ok(()) }
    /// ```
    pub async fn lock(
        &self,
        name: impl Into<Bytes>,
        lease: i64,
    ) -> Result<lock::LockResponse, Error> {
        let req = lock::LockRequest {
            name: name.into(),
            lease,
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { LockClient::new(ch).lock(req).await }
        })
        .await
    }

    /// Releases the hold that `key` (from [`Client::lock`]) stands for.
    pub async fn unlock(&self, key: impl Into<Bytes>) -> Result<lock::UnlockResponse, Error> {
        let req = lock::UnlockRequest { key: key.into() };
        self.call_once(|ch| {
            let req = req.clone();
            async move { LockClient::new(ch).unlock(req).await }
        })
        .await
    }

    /// Waits until this candidate (`lease`; 0: the server grants one of
    /// 60 s that nothing keeps alive) leads election `name`, announcing
    /// `value`; the response's `leader` names the leadership for
    /// [`Client::proclaim`] and [`Client::resign`].
    pub async fn campaign(
        &self,
        name: impl Into<Bytes>,
        value: impl Into<Bytes>,
        lease: i64,
    ) -> Result<election::CampaignResponse, Error> {
        let req = election::CampaignRequest {
            name: name.into(),
            lease,
            value: value.into(),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { ElectionClient::new(ch).campaign(req).await }
        })
        .await
    }

    /// Announces a new value as the leader named by `leader`; fails with
    /// `election: not leader` once it no longer leads.
    pub async fn proclaim(
        &self,
        leader: LeaderKey,
        value: impl Into<Bytes>,
    ) -> Result<election::ProclaimResponse, Error> {
        let req = election::ProclaimRequest {
            leader: Some(leader),
            value: value.into(),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { ElectionClient::new(ch).proclaim(req).await }
        })
        .await
    }

    /// The leader of election `name`: its key and value (`kv`); fails with
    /// `election: no leader` when there is none.
    pub async fn leader(&self, name: impl Into<Bytes>) -> Result<election::LeaderResponse, Error> {
        let req = election::LeaderRequest { name: name.into() };
        self.call(|ch| {
            let req = req.clone();
            async move { ElectionClient::new(ch).leader(req).await }
        })
        .await
    }

    /// The leader of election `name` now (or once there is one), then its
    /// every new value and every next leader, until dropped.
    pub async fn observe(
        &self,
        name: impl Into<Bytes>,
    ) -> Result<tonic::Streaming<election::LeaderResponse>, Error> {
        let req = election::LeaderRequest { name: name.into() };
        self.call(|ch| {
            let req = req.clone();
            async move { ElectionClient::new(ch).observe(req).await }
        })
        .await
    }

    /// Gives up the leadership named by `leader` (nothing happens if it
    /// has ended already).
    pub async fn resign(&self, leader: LeaderKey) -> Result<election::ResignResponse, Error> {
        let req = election::ResignRequest {
            leader: Some(leader),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { ElectionClient::new(ch).resign(req).await }
        })
        .await
    }
}
