//! One loopback server: bound to a free port on 127.0.0.1, every request logged and then
//! answered by its [`Play`] unless the server's mode, a numbered fault or a fault the play picks
//! intervenes, stopped by [`Server::stop`], by the end of the run or by the runtime going away.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::task::JoinHandle;

use super::LoopbackError;
use super::door::{Door, DoorListener};
use super::faults::{Fault, Faults, cut_body, malformed_body};
use super::modes::{Mode, Treatment};
use super::record::{Arrival, RequestLog, RequestRecord};
use super::shutdown::{Connection, Shutdown};
use super::wire::{JSON, halves};

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
    /// The query string, `""` when there is none.
    pub query: String,
    /// Every header, the key's too: a play may check it, the log never keeps it.
    pub headers: HeaderMap,
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

impl Answer {
    /// A JSON body with `status`, sent in two pieces so that a `cut` breaks it in the middle.
    pub fn json(status: StatusCode, body: &Value) -> Self {
        Self { status, content_type: JSON, headers: Vec::new(), pieces: halves(body), reply: None }
    }
}

/// The remote API a server plays.
pub trait Play: Send + Sync + 'static {
    /// Whether `faults` number this request: the API's main endpoint.
    fn numbered(&self, method: &Method, path: &str) -> bool;
    /// The answer when no fault intervenes.
    fn answer(&self, request: &Incoming) -> Answer;
    /// The answer of a `status` fault (and of a request too large to read): the API's error,
    /// naming `code` when the fault gives one.
    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer;
    /// What the request is, for the log's `kind`, as the play tells its requests apart (a chat
    /// play: `agent` or `side`, and OpenAI's `compaction` and `flush`): none unless a play says.
    fn kind(&self, _request: &Incoming) -> Option<&'static str> {
        None
    }
    /// A fault the play picks for `request` by what it asks, consulted for the requests that
    /// neither the mode nor a numbered fault took: none unless a play says otherwise.
    fn fault(&self, _request: &Incoming) -> Option<Fault> {
        None
    }
}

struct Shared {
    play: Arc<dyn Play>,
    faults: Faults,
    mode: Mutex<Mode>,
    log: RequestLog,
    shutdown: Shutdown,
    in_flight: InFlight,
}

impl Shared {
    fn mode(&self) -> MutexGuard<'_, Mode> {
        self.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running server.
pub struct Server {
    door: Arc<Door>,
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Server {
    /// Binds a free port on 127.0.0.1 and serves `play` on the current runtime, in mode `ok`; it
    /// listens when this returns.
    pub async fn start(play: Arc<dyn Play>, faults: Faults) -> Result<Arc<Self>, LoopbackError> {
        let door = Arc::new(Door::bind().map_err(LoopbackError::Bind)?);
        let shutdown = Shutdown::new();
        let shared = Arc::new(Shared {
            play,
            faults,
            mode: Mutex::new(Mode::default()),
            log: RequestLog::new(),
            shutdown: shutdown.clone(),
            in_flight: InFlight::default(),
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(shared.clone())
            .into_make_service_with_connect_info::<Connection>();
        let listener = DoorListener::new(door.clone(), shutdown.clone());
        let task = tokio::spawn(async move {
            let signal = async move { shutdown.stopped().await };
            // Serving a listener that was bound cannot fail; axum's result is always `Ok`.
            let _ = axum::serve(listener, app).with_graceful_shutdown(signal).await;
        });
        Ok(Arc::new(Self { door, shared, task: Mutex::new(Some(task)) }))
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash: what a client's base URL is set to.
    /// The port stays the same through `refuse` modes.
    pub fn url(&self) -> String {
        format!("http://{}", self.door.address())
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.records_after(0)
    }

    /// The requests whose `seq` is above `seq`, in arrival order: what came after a mark.
    pub fn requests_after(&self, seq: u64) -> Vec<RequestRecord> {
        self.shared.log.records_after(seq)
    }

    /// How many requests arrived so far: the `seq` of the last one.
    pub fn request_count(&self) -> u64 {
        self.shared.log.count()
    }

    /// The most requests it was handling at one time, from arrival until the answer was ready
    /// or the request was given up (a stall or a hang counts until its connection breaks).
    pub fn most_in_flight(&self) -> usize {
        self.shared.in_flight.most.load(Ordering::SeqCst)
    }

    /// Puts the server in `mode` for the requests that arrive from now on. `refuse` closes the
    /// port and breaks every connection; any other mode listens again, on the same port. A
    /// stopped server stays stopped.
    pub async fn set_mode(&self, mode: Mode) -> Result<(), LoopbackError> {
        if mode.refuses() {
            // The mode first, so that a request racing the close is reset rather than answered.
            *self.shared.mode() = mode;
            self.door.close();
        } else {
            let port = self.door.address().port();
            self.door.open().map_err(|source| LoopbackError::Reopen { port, source })?;
            *self.shared.mode() = mode;
        }
        Ok(())
    }

    /// Tells the server to stop, without waiting: it accepts nothing more, and every connection,
    /// a stalled one included, breaks.
    pub fn signal_stop(&self) {
        self.shared.shutdown.stop();
        self.door.seal();
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

/// Every request, whatever its path: logged, then answered as the mode, a fault or the play says.
async fn handle(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(connection): ConnectInfo<Connection>,
    request: Request,
) -> Response {
    let _handling = shared.in_flight.enter();
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        let answer = shared.play.error(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large", None);
        return send(answer, 0, Sending::Whole);
    };
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    let mut incoming =
        Incoming { seq: 0, method: parts.method, path, query, headers: parts.headers, size: body.len(), json };
    let numbers = shared.log.arrive(Arrival {
        method: incoming.method.as_str(),
        path: &incoming.path,
        query: &incoming.query,
        headers: &incoming.headers,
        body: incoming.json.clone().unwrap_or_else(|| Value::String(String::from_utf8_lossy(&body).into_owned())),
        stream: incoming.stream(),
        agent: incoming.agent(),
        kind: shared.play.kind(&incoming),
        numbered: shared.play.numbered(&incoming.method, &incoming.path),
    });
    incoming.seq = numbers.seq;
    let treatment = shared.mode().treatment(&incoming.path);
    if treatment != Treatment::Ok {
        shared.log.update(incoming.seq, |record| record.mode = treatment.kind());
    }
    match treatment {
        Treatment::Ok => faulted(&shared, &incoming, numbers.numbered, &connection).await,
        Treatment::Latency(wait) => delayed(&shared, &incoming, wait).await,
        Treatment::Status(status) => failed(&shared, incoming.seq, status, None, None),
        // Under `refuse`, a request can only come on a connection accepted just before the
        // close; it is reset as the close broke the others.
        Treatment::Reset | Treatment::Refuse => reset(&shared, incoming.seq, &connection).await,
        Treatment::Hang => held(&shared).await,
    }
}

/// A request the mode leaves alone: answered, unless a numbered fault or one the play picks
/// intervenes.
async fn faulted(shared: &Shared, incoming: &Incoming, number: Option<u64>, connection: &Connection) -> Response {
    let numbered = number.and_then(|number| shared.faults.get(number));
    let Some(fault) = numbered.or_else(|| shared.play.fault(incoming)) else {
        return answer(shared, incoming, Sending::Whole);
    };
    shared.log.update(incoming.seq, |record| record.fault = Some(fault.kind()));
    match fault {
        Fault::Cut => answer(shared, incoming, Sending::Cut),
        Fault::Malformed => answer(shared, incoming, Sending::Malformed),
        Fault::Status { status, retry_after, code } => {
            failed(shared, incoming.seq, status, retry_after, code.as_deref())
        }
        Fault::Reset => reset(shared, incoming.seq, connection).await,
        Fault::Stall => held(shared).await,
        Fault::Delay(wait) => delayed(shared, incoming, wait).await,
    }
}

/// Resets the connection without an answer.
async fn reset(shared: &Shared, seq: u64, connection: &Connection) -> Response {
    shared.log.end(seq, |_| ());
    connection.reset();
    held(shared).await
}

/// Never answers: the connection breaks at the stop (or a `refuse`, or its reset), so the
/// response returned then is never sent.
async fn held(shared: &Shared) -> Response {
    shared.shutdown.stopped().await;
    StatusCode::SERVICE_UNAVAILABLE.into_response()
}

/// Answers after `wait`, unless the server stops first.
async fn delayed(shared: &Shared, incoming: &Incoming, wait: Duration) -> Response {
    tokio::select! {
        () = tokio::time::sleep(wait) => answer(shared, incoming, Sending::Whole),
        () = shared.shutdown.stopped() => StatusCode::SERVICE_UNAVAILABLE.into_response(),
    }
}

/// The play's error for `status`, as a fault or a mode asks for it: a 429 says when to retry,
/// 1 second unless the fault says otherwise.
fn failed(shared: &Shared, seq: u64, status: StatusCode, retry_after: Option<u64>, code: Option<&str>) -> Response {
    let message = format!("{} (a loopback fault)", status.canonical_reason().unwrap_or("error"));
    let mut answer = shared.play.error(status, &message, code);
    let retry_after = retry_after.or((status == StatusCode::TOO_MANY_REQUESTS).then_some(1));
    if let Some(seconds) = retry_after {
        answer.headers.push(("retry-after", seconds.to_string()));
    }
    logged(shared, seq, answer, Sending::Whole)
}

/// How an answer's body is sent.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sending {
    Whole,
    /// Its first piece, then a broken connection.
    Cut,
    /// The first half of the whole body, as if it were all of it.
    Malformed,
}

fn answer(shared: &Shared, incoming: &Incoming, sending: Sending) -> Response {
    logged(shared, incoming.seq, shared.play.answer(incoming), sending)
}

/// Sends `answer` as `sending` says, after noting it in the log.
fn logged(shared: &Shared, seq: u64, answer: Answer, sending: Sending) -> Response {
    shared.log.end(seq, |record| {
        record.status = Some(answer.status.as_u16());
        // A cut or malformed answer reaches the client broken; it answered no turn.
        record.reply = if sending == Sending::Whole { answer.reply } else { None };
    });
    send(answer, seq, sending)
}

fn send(answer: Answer, seq: u64, sending: Sending) -> Response {
    let body = match sending {
        Sending::Whole => Body::from(answer.pieces.concat()),
        Sending::Cut => cut_body(answer.pieces.into_iter().next().unwrap_or_default()),
        Sending::Malformed => malformed_body(Bytes::from(answer.pieces.concat())),
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

/// How many requests are being handled now, and the most at one time.
#[derive(Default)]
struct InFlight {
    now: Arc<AtomicUsize>,
    most: AtomicUsize,
}

impl InFlight {
    /// Counts a request in until the guard is dropped: when its handler returns, or is dropped
    /// with its broken connection.
    fn enter(&self) -> Handling {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        Handling(self.now.clone())
    }
}

struct Handling(Arc<AtomicUsize>);

impl Drop for Handling {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
