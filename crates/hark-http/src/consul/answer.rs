//! Answers in Consul's form: its index headers, JSON bodies and plain-text
//! errors.

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::Serialize;
use tonic::Status;

pub(super) fn index_headers(headers: &mut HeaderMap, index: i64) {
    let index = HeaderValue::from(index.max(0));
    headers.insert("x-consul-index", index.clone());
    headers.insert("x-hark-index", index);
    headers.insert("x-consul-knownleader", HeaderValue::from_static("true"));
    headers.insert("x-consul-lastcontact", HeaderValue::from_static("0"));
}

/// A whole answer, kept to be given to every query that shares its read.
#[derive(Clone)]
pub(super) struct Answer {
    status: StatusCode,
    pub(super) headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    pub(super) fn new(status: StatusCode, body: impl Into<Bytes>) -> Answer {
        Answer {
            status,
            headers: HeaderMap::new(),
            body: body.into(),
        }
    }

    pub(super) fn json<T: Serialize + ?Sized>(status: StatusCode, index: i64, body: &T) -> Answer {
        let mut answer = Answer::new(status, serde_json::to_vec(body).expect("serializable"));
        answer.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        index_headers(&mut answer.headers, index);
        answer
    }

    pub(super) fn not_found(index: i64) -> Answer {
        let mut answer = Answer::new(StatusCode::NOT_FOUND, Bytes::new());
        index_headers(&mut answer.headers, index);
        answer
    }

    /// Consul's errors are plain text.
    fn error(status: StatusCode, message: &str) -> Answer {
        let mut answer = Answer::new(status, message.to_string());
        answer.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        answer
    }

    /// A gRPC failure in Consul's form: its status as HTTP, its message as
    /// text.
    pub(super) fn status_error(status: Status) -> Answer {
        Answer::error(crate::status::http_status(status.code()), status.message())
    }
}

impl From<Answer> for Response {
    fn from(answer: Answer) -> Response {
        let mut response = Response::new(Body::from(answer.body));
        *response.status_mut() = answer.status;
        *response.headers_mut() = answer.headers;
        response
    }
}

pub(super) fn json<T: Serialize + ?Sized>(status: StatusCode, index: i64, body: &T) -> Response {
    Answer::json(status, index, body).into()
}

pub(super) fn consul_error(status: StatusCode, message: &str) -> Response {
    Answer::error(status, message).into()
}

pub(super) fn bad_request(message: String) -> Response {
    consul_error(StatusCode::BAD_REQUEST, &message)
}

pub(super) fn status_error(status: Status) -> Response {
    Answer::status_error(status).into()
}
