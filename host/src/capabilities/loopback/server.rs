//! One loopback server: bound to a free port on 127.0.0.1, every request logged and then
//! answered by its [`Play`] unless a scripted fault intervenes, stopped by [`Server::stop`], by
//! the end of the run or by the runtime going away.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::LoopbackError;
use super::faults::{Fault, Faults, cut_body};
use super::record::{Arrival, RequestLog, RequestRecord};
use super::shutdown::{Shutdown, StoppableListener};

/// The largest request body read; an agent's whole conversation fits many times over.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How long `stop` waits for the server's task after the signal. Connections break at the
/// signal, so this is a bound against a bug, not a wait anyone should see.
const STOP_BOUND: Duration = Duration::from_secs(5);

/// One request as a play sees it.
#[derive(Debug)]
pub struct Incoming {
    pub seq: u64,
    pub method: Method,
    pub path: String,
    /// The body's size in bytes (token counts are derived from it).
    pub size: usize,
    /// The body, when it is JSON.
    pub json: Option<Value>,
}

impl Incoming {
    /// Whether the body asks for a streamed answer.
    pub fn stream(&self) -> bool {
        self.json.as_ref().is_some_and(|body| body["stream"] == true)
    }

    /// Whether the body offers tools, as an agent's requests do (a chat API's `tools`).
    pub fn agent(&self) -> bool {
        self.json.as_ref().is_some_and(|body| body["tools"].as_array().is_some_and(|tools| !tools.is_empty()))
    }
}

/// A play's answer, before it is sent.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    /// The body in the pieces it is sent in (a stream's events); a `cut` sends only the first.
    pub pieces: Vec<Bytes>,
    /// The scripted turn it answers, for the log.
    pub reply: Option<u64>,
}

/// The remote API a server plays.
pub trait Play: Send + Sync + 'static {
    /// Whether `faults` number this request: the API's main endpoint.
    fn numbered(&self, method: &Method, path: &str) -> bool;
    /// The answer when no fault intervenes.
    fn answer(&self, request: &Incoming) -> Answer;
    /// The answer of a `status` fault (and of a request too large to read): the API's error.
    fn error(&self, status: StatusCode, message: &str) -> Answer;
}

struct Shared {
    play: Arc<dyn Play>,
    faults: Faults,
    log: RequestLog,
    shutdown: Shutdown,
}

/// A running server.
pub struct Server {
    address: SocketAddr,
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Server {
    /// Binds a free port on 127.0.0.1 and serves `play` on the current runtime; it listens when
    /// this returns.
    pub async fn start(play: Arc<dyn Play>, faults: Faults) -> Result<Arc<Self>, LoopbackError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.map_err(LoopbackError::Bind)?;
        let address = listener.local_addr().map_err(LoopbackError::Bind)?;
        let shutdown = Shutdown::new();
        let shared = Arc::new(Shared { play, faults, log: RequestLog::new(), shutdown: shutdown.clone() });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let listener = StoppableListener::new(listener, shutdown.clone());
        let task = tokio::spawn(async move {
            let signal = async move { shutdown.stopped().await };
            // Serving a listener that was bound cannot fail; axum's result is always `Ok`.
            let _ = axum::serve(listener, app).with_graceful_shutdown(signal).await;
        });
        Ok(Arc::new(Self { address, shared, task: Mutex::new(Some(task)) }))
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash: what a client's base URL is set to.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.records()
    }

    /// Tells the server to stop, without waiting: it accepts nothing more, and every connection,
    /// a stalled one included, breaks.
    pub fn signal_stop(&self) {
        self.shared.shutdown.stop();
    }

    /// Stops the server and waits until it no longer listens. Calling it again does nothing.
    pub async fn stop(&self) {
        self.signal_stop();
        let task = self.task.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(mut task) = task
            && tokio::time::timeout(STOP_BOUND, &mut task).await.is_err()
        {
            task.abort();
        }
    }
}

/// Every request, whatever its path: logged, then answered.
async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        let answer = shared.play.error(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large");
        return send(answer, 0, false);
    };
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    let path = parts.uri.path().to_string();
    let mut incoming = Incoming { seq: 0, method: parts.method, path, size: body.len(), json };
    let numbers = shared.log.arrive(Arrival {
        method: incoming.method.as_str(),
        path: &incoming.path,
        query: parts.uri.query().unwrap_or(""),
        headers: &parts.headers,
        body: incoming.json.clone().unwrap_or_else(|| Value::String(String::from_utf8_lossy(&body).into_owned())),
        stream: incoming.stream(),
        agent: incoming.agent(),
        numbered: shared.play.numbered(&incoming.method, &incoming.path),
    });
    incoming.seq = numbers.seq;
    let fault = numbers.numbered.and_then(|number| shared.faults.get(number));
    if let Some(fault) = fault {
        shared.log.update(incoming.seq, |record| record.fault = Some(fault.kind()));
    }
    match fault {
        None => answer(&shared, &incoming, false),
        Some(Fault::Cut) => answer(&shared, &incoming, true),
        Some(Fault::Status(status)) => {
            let message = format!("{} (a loopback fault)", status.canonical_reason().unwrap_or("error"));
            let mut answer = shared.play.error(status, &message);
            if status == StatusCode::TOO_MANY_REQUESTS {
                answer.headers.push(("retry-after", "1".into()));
            }
            logged(&shared, incoming.seq, answer, false)
        }
        Some(Fault::Stall) => {
            // The connection breaks at the stop too, so this answer is never sent.
            shared.shutdown.stopped().await;
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
        Some(Fault::Delay(wait)) => {
            tokio::select! {
                () = tokio::time::sleep(wait) => answer(&shared, &incoming, false),
                () = shared.shutdown.stopped() => StatusCode::SERVICE_UNAVAILABLE.into_response(),
            }
        }
    }
}

fn answer(shared: &Shared, incoming: &Incoming, cut: bool) -> Response {
    logged(shared, incoming.seq, shared.play.answer(incoming), cut)
}

/// Sends `answer` (only its first piece when `cut`), after noting it in the log.
fn logged(shared: &Shared, seq: u64, answer: Answer, cut: bool) -> Response {
    shared.log.update(seq, |record| {
        record.status = Some(answer.status.as_u16());
        // A cut answer reaches the client broken; it answered no turn.
        record.reply = if cut { None } else { answer.reply };
    });
    send(answer, seq, cut)
}

fn send(answer: Answer, seq: u64, cut: bool) -> Response {
    let body = if cut {
        cut_body(answer.pieces.into_iter().next().unwrap_or_default())
    } else {
        Body::from(answer.pieces.concat())
    };
    let mut response = Response::builder()
        .status(answer.status)
        .header(header::CONTENT_TYPE, answer.content_type)
        .header("request-id", format!("req_{seq}"));
    for (name, value) in answer.headers {
        response = response.header(name, value);
    }
    response.body(body).unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
