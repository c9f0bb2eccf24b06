//! [`SharedClient`]: the one HTTP client a run's capabilities share (`http::`, `llm::`, remote
//! `embed::`), built on first use.
//!
//! Building a client reads and parses the system's certificate store, about 25 ms; a run that
//! never reaches the network (most offline runs, and every memory-hook call) should not pay for
//! it, and a run that does pays once, not once per capability.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long to wait for a connection, unless the request's own timeout is shorter.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A cheap handle to the client; clones share it.
#[derive(Clone, Default)]
pub struct SharedClient(Arc<OnceLock<Result<reqwest::Client, String>>>);

impl std::fmt::Debug for SharedClient {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("SharedClient").field("built", &self.0.get().is_some()).finish()
    }
}

impl SharedClient {
    /// The client, building it on the first call; why it could not be built otherwise.
    pub fn get(&self) -> Result<reqwest::Client, String> {
        self.0
            .get_or_init(|| {
                build(|name| std::env::var(name).ok()).map_err(|error| {
                    format!("cannot set up the HTTP client: {}", crate::capabilities::error_chain(&error))
                })
            })
            .clone()
    }

    /// Whether a request has needed the client yet.
    pub fn is_built(&self) -> bool {
        self.0.get().is_some()
    }
}

/// Addresses that never go through a proxy: the servers a run starts on this machine (its
/// loopback plays, an external provider, a model server) are not behind the user's proxy.
const LOOPBACK: &str = "127.0.0.0/8,::1,localhost";

/// The client, with the proxies the environment names (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`,
/// or their lowercase forms) for every address but loopback and `NO_PROXY`'s. reqwest's own
/// reading of the environment would send a request to 127.0.0.1 to the proxy.
fn build(env: impl Fn(&str) -> Option<String>) -> reqwest::Result<reqwest::Client> {
    let var = |name: &str| env(name).or_else(|| env(&name.to_lowercase())).filter(|value| !value.trim().is_empty());
    let exempt = match var("NO_PROXY") {
        Some(listed) => format!("{LOOPBACK},{listed}"),
        None => LOOPBACK.to_string(),
    };
    let no_proxy = reqwest::NoProxy::from_string(&exempt);
    // Explicit proxies turn reqwest's own reading of the environment off, even when there are none.
    let mut builder = reqwest::Client::builder().connect_timeout(CONNECT_TIMEOUT).no_proxy();
    for name in ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"] {
        let Some(url) = var(name) else { continue };
        let proxy = match name {
            "HTTPS_PROXY" => reqwest::Proxy::https(url)?,
            "HTTP_PROXY" => reqwest::Proxy::http(url)?,
            _ => reqwest::Proxy::all(url)?,
        };
        builder = builder.proxy(proxy.no_proxy(no_proxy.clone()));
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_built_on_first_use_and_shared_by_clones() {
        let shared = SharedClient::default();
        let clone = shared.clone();
        assert!(!shared.is_built(), "building waits for a request");
        assert!(clone.get().is_ok());
        assert!(shared.is_built(), "a clone built it for both");
    }

    /// A listener answering every connection with `status`, counting them.
    fn listener(status: u16) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{Read, Write};
        let socket = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = format!("http://{}", socket.local_addr().expect("address"));
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = count.clone();
        std::thread::spawn(move || {
            for mut stream in socket.incoming().flatten() {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = stream.read(&mut [0; 4096]);
                let _ = write!(stream, "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            }
        });
        (address, count)
    }

    #[tokio::test]
    async fn a_proxy_in_the_environment_carries_remote_requests_but_never_loopback_ones() {
        use std::sync::atomic::Ordering;
        let (proxy, through_proxy) = listener(502);
        let (server, direct) = listener(200);
        let env = |name: &str| match name {
            "HTTP_PROXY" | "https_proxy" | "ALL_PROXY" => Some(proxy.clone()),
            "NO_PROXY" => Some("internal.example".to_string()),
            _ => None,
        };
        let client = build(env).expect("client");
        let local = client.get(format!("{server}/health")).send().await.expect("loopback answered");
        assert_eq!(local.status(), 200);
        assert_eq!((direct.load(Ordering::SeqCst), through_proxy.load(Ordering::SeqCst)), (1, 0));
        let remote = client.get("http://models.example/v1/models").send().await.expect("the proxy answered");
        assert_eq!(remote.status(), 502, "the proxy answered for the remote host");
        assert_eq!(through_proxy.load(Ordering::SeqCst), 1);
        assert!(client.get("http://internal.example/").send().await.is_err(), "NO_PROXY's host is reached directly");
        assert_eq!(through_proxy.load(Ordering::SeqCst), 1);
    }
}
