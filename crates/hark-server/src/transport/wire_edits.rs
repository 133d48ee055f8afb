//! The two edits every gRPC call gets on its way in and out, as one plain
//! tower layer: the request's client-certificate name is set from the
//! connection only ([`crate::grpc::access::set_client_identity`]), and tonic's
//! oversized-message status is rewritten into grpc-go's
//! ([`crate::grpc::oversize::as_grpc_go`]).
//!
//! A layer of its own rather than axum's `map_request`/`map_response`:
//! those box and later drop a future per call, which showed in the
//! single-member put profile; this one edits in place and adds no
//! allocation.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tower::{Layer, Service};

/// Wraps the gRPC routes in [`WireEdits`].
#[derive(Clone, Copy, Debug, Default)]
pub struct WireEditsLayer;

impl<S> Layer<S> for WireEditsLayer {
    type Service = WireEdits<S>;

    fn layer(&self, inner: S) -> WireEdits<S> {
        WireEdits { inner }
    }
}

#[derive(Clone, Debug)]
pub struct WireEdits<S> {
    inner: S,
}

impl<S, B, R> Service<http::Request<B>> for WireEdits<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
{
    type Response = http::Response<R>;
    type Error = S::Error;
    type Future = EditedResponse<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        crate::grpc::access::set_client_identity(&mut request);
        EditedResponse {
            inner: self.inner.call(request),
        }
    }
}

pin_project! {
    /// The inner call's response, with its headers edited once it answers.
    pub struct EditedResponse<F> {
        #[pin]
        inner: F,
    }
}

impl<F, R, E> Future for EditedResponse<F>
where
    F: Future<Output = Result<http::Response<R>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut response = ready!(self.project().inner.poll(cx))?;
        crate::grpc::oversize::as_grpc_go(response.headers_mut());
        Poll::Ready(Ok(response))
    }
}
