//! An S3 proxy that makes the credentials behind it append-only, as a bucket policy and object
//! lock do for a backup user: requests go on to a test server (s3s-fs), except a DELETE, a batch
//! deletion (`POST ?delete`), and a PUT or multipart completion to a key that exists already,
//! which are answered `403 AccessDenied` without reaching it. Each request is forwarded on a
//! connection of its own, and the client's connection is closed after the answer.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The answer to a refused request, as S3 gives it when a policy denies the action.
const ACCESS_DENIED: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied\
    </Code><Message>Access Denied</Message></Error>";

/// A running proxy; serves until the test process ends.
pub struct AppendOnlyProxy {
    /// Its port on 127.0.0.1.
    pub port: u16,
    refused: Arc<Mutex<Vec<String>>>,
}

/// What the proxy serves by: the server behind it and where that server keeps the bucket.
#[derive(Clone)]
struct Upstream {
    port: u16,
    bucket_dir: PathBuf,
    refused: Arc<Mutex<Vec<String>>>,
    /// Set until the first PUT under `data/` has been forwarded with its answer withheld.
    lose_first_pack_answer: Arc<AtomicBool>,
}

impl AppendOnlyProxy {
    /// A proxy in front of the S3 server on `upstream`, which keeps the objects of the bucket
    /// in `bucket_dir` (so that the proxy can tell a PUT to an existing key).
    pub fn start(upstream: u16, bucket_dir: &Path) -> AppendOnlyProxy {
        Self::start_with(upstream, bucket_dir, false)
    }

    /// The same, but the first pack PUT reaches the server and its answer is lost (the
    /// connection closes): the client sends it again, to a key that now exists.
    pub fn losing_the_first_pack_answer(upstream: u16, bucket_dir: &Path) -> AppendOnlyProxy {
        Self::start_with(upstream, bucket_dir, true)
    }

    fn start_with(upstream: u16, bucket_dir: &Path, lose: bool) -> AppendOnlyProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let refused = Arc::new(Mutex::new(Vec::new()));
        let shared = Upstream {
            port: upstream,
            bucket_dir: bucket_dir.to_path_buf(),
            refused: Arc::clone(&refused),
            lose_first_pack_answer: Arc::new(AtomicBool::new(lose)),
        };
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let upstream = shared.clone();
                std::thread::spawn(move || {
                    let _ = serve(client, &upstream);
                });
            }
        });
        AppendOnlyProxy { port, refused }
    }

    /// The request lines refused so far (`DELETE /bkt/repo/writers/…`).
    pub fn refused(&self) -> Vec<String> {
        self.refused.lock().unwrap().clone()
    }
}

/// Reads one request (head and Content-Length body) from `client`.
fn read_request(client: &mut TcpStream) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 << 10];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length").then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Some((head, body)))
}

/// Whether the request would delete or replace an object: what append-only rights forbid.
fn forbidden(request_line: &str, bucket_dir: &Path) -> bool {
    let mut words = request_line.split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let writes_key = method == "PUT" || (method == "POST" && query.contains("uploadId="));
    match method {
        "DELETE" => true,
        "POST" if query.split('&').any(|q| q == "delete" || q.starts_with("delete=")) => true,
        _ if writes_key => {
            // `/BUCKET/KEY`: the bucket's directory holds KEY as a file.
            let key = path.trim_start_matches('/').split_once('/').map_or("", |(_, key)| key);
            !key.is_empty() && bucket_dir.join(key).is_file()
        }
        _ => false,
    }
}

/// Serves one request of `client`: refused, or forwarded and answered.
fn serve(mut client: TcpStream, upstream: &Upstream) -> std::io::Result<()> {
    let Some((head, body)) = read_request(&mut client)? else { return Ok(()) };
    let request_line = head.lines().next().unwrap_or("").to_string();
    if forbidden(&request_line, &upstream.bucket_dir) {
        upstream.refused.lock().unwrap().push(request_line);
        let answer = format!(
            "HTTP/1.1 403 Forbidden\r\ncontent-type: application/xml\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{ACCESS_DENIED}",
            ACCESS_DENIED.len()
        );
        client.write_all(answer.as_bytes())?;
        let _ = client.shutdown(Shutdown::Both);
        return Ok(());
    }
    let head: String = head
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\r\n"))
        .collect();
    let mut server = TcpStream::connect(("127.0.0.1", upstream.port))?;
    server.write_all(head.as_bytes())?;
    server.write_all(b"connection: close\r\n\r\n")?;
    server.write_all(&body)?;
    let mut answer = Vec::new();
    server.read_to_end(&mut answer)?;
    let pack_put = request_line.starts_with("PUT ") && request_line.contains("/data/");
    if pack_put && upstream.lose_first_pack_answer.swap(false, Ordering::Relaxed) {
        let _ = client.shutdown(Shutdown::Both);
        return Ok(());
    }
    client.write_all(&answer)?;
    let _ = client.shutdown(Shutdown::Both);
    Ok(())
}
