//! HTTP/1.1 by hand, for the attacks on the HTTP routes (the JSON gateway,
//! Consul's KV API, /metrics): requests written as bytes, answers read
//! only as far as the status line and headers, bodies kept short.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// A request's bytes; `Connection: close`, so the answer ends with the
/// connection.
pub fn request(
    method: &str,
    path: &str,
    host: SocketAddr,
    headers: &[(&str, &str)],
    body: &str,
) -> String {
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        text += &format!("{name}: {value}\r\n");
    }
    text += "\r\n";
    text += body;
    text
}

/// An answer's status code and the start of its body.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

/// The status code of a status line (`HTTP/1.1 413 Payload Too Large`).
pub fn status_of(head: &[u8]) -> Option<u16> {
    let line = head.split(|&b| b == b'\n').next()?;
    let text = std::str::from_utf8(line).ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// Sends one request and reads its whole answer (until the server closes,
/// at most `timeout`).
pub async fn exchange(
    addr: SocketAddr,
    request: &str,
    timeout: Duration,
) -> Result<(String, Answer), String> {
    let work = async {
        let mut stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw).await;
        Ok::<_, String>(raw)
    };
    let raw = tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| format!("no answer within {timeout:?}"))??;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = status_of(head.as_bytes()).ok_or_else(|| {
        if raw.is_empty() {
            "closed without an answer".to_string()
        } else {
            format!("not HTTP: {:?}", &text[..text.len().min(80)])
        }
    })?;
    let body = body.trim().chars().take(160).collect();
    Ok((head.to_string(), Answer { status, body }))
}

/// A connection from local address `from` (loopback has all of 127/8, so
/// connections can come from many client addresses).
pub async fn connect_from(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    socket.connect(to).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_is_read_from_a_status_line() {
        let head = "HTTP/1.1 429 Too Many Requests\r\nX-Consul-Index: 42\r\n";
        assert_eq!(status_of(head.as_bytes()), Some(429));
        assert_eq!(status_of(b"garbage"), None);
    }
}
