//! Specification of the one fault vocabulary as the server carries it out, whoever chose the
//! fault: a script by the request's number, or a play by what a request asks ([`Play::fault`]),
//! as the end-to-end tests' fakes queue them by prompt or by endpoint. Also how many requests a
//! server handles at one time.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::tests::{client, json_of};
use super::{Answer, AnthropicScript, Fault, Faults, Incoming, Play, Server};

/// A play answering `{"said": <the body's "say">}`, with faults queued for what a request says.
#[derive(Default)]
struct Queued {
    faults: Mutex<Vec<(String, VecDeque<Fault>)>>,
}

impl Queued {
    fn queue(&self, said: &str, faults: Vec<Fault>) {
        self.faults.lock().expect("faults").push((said.to_string(), faults.into()));
    }
}

fn said(request: &Incoming) -> String {
    request.json.as_ref().and_then(|body| body["say"].as_str()).unwrap_or_default().to_string()
}

impl Play for Queued {
    fn numbered(&self, _method: &Method, _path: &str) -> bool {
        false
    }

    fn answer(&self, request: &Incoming) -> Answer {
        Answer::json(StatusCode::OK, &json!({"said": said(request)}))
    }

    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer {
        Answer::json(status, &json!({"message": message, "code": code}))
    }

    fn fault(&self, request: &Incoming) -> Option<Fault> {
        let mut faults = self.faults.lock().expect("faults");
        let said = said(request);
        faults.iter_mut().find(|(key, _)| *key == said).and_then(|(_, queue)| queue.pop_front())
    }
}

async fn say(server: &Server, what: &str) -> Result<reqwest::Response, reqwest::Error> {
    client().post(format!("{}/say", server.url())).json(&json!({"say": what})).send().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_play_picks_faults_by_what_a_request_says_and_the_server_carries_out_each_kind() {
    let play = Arc::new(Queued::default());
    play.queue(
        "flaky",
        vec![
            Fault::status(StatusCode::TOO_MANY_REQUESTS).retry_after(3).code("slow_down"),
            Fault::Malformed,
            Fault::Cut,
            Fault::Delay(Duration::from_millis(10)),
        ],
    );
    play.queue("lost", vec![Fault::Reset]);
    let server = Server::start(play.clone(), Faults::default()).await.expect("the server starts");

    let lost = say(&server, "lost").await.expect_err("a reset connection answers nothing");
    assert!(!lost.is_timeout(), "{lost}");
    let limited = say(&server, "flaky").await.expect("an answer");
    assert_eq!((limited.status().as_u16(), &limited.headers()["retry-after"]), (429, &"3".parse().expect("a header")));
    assert_eq!(json_of(limited).await["code"], "slow_down");
    let garbled = say(&server, "flaky").await.expect("an answer");
    assert_eq!(garbled.status(), 200);
    let text = garbled.text().await.expect("a whole body");
    assert!(serde_json::from_str::<Value>(&text).is_err() && r#"{"said":"flaky"}"#.starts_with(&text), "{text}");
    let mut cut = say(&server, "flaky").await.expect("the answer starts");
    let mut broken = false;
    while !broken {
        match cut.chunk().await {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => broken = true,
        }
    }
    assert!(broken, "the client sees a broken body, not an ended one");
    assert_eq!(json_of(say(&server, "flaky").await.expect("an answer")).await, json!({"said": "flaky"}));
    assert_eq!(json_of(say(&server, "flaky").await.expect("an answer")).await["said"], "flaky", "the queue ran out");
    assert_eq!(json_of(say(&server, "steady").await.expect("an answer")).await["said"], "steady");

    let log: Vec<_> = server.requests().into_iter().map(|record| (record.fault, record.status)).collect();
    assert_eq!(
        log,
        [
            (Some("reset"), None),
            (Some("status"), Some(429)),
            (Some("malformed"), Some(200)),
            (Some("cut"), Some(200)),
            (Some("delay"), Some(200)),
            (None, Some(200)),
            (None, Some(200)),
        ]
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_numbered_fault_comes_before_the_one_a_play_would_pick() {
    let play = Arc::new(Queued::default());
    play.queue("x", vec![Fault::status(StatusCode::INTERNAL_SERVER_ERROR)]);
    let script: AnthropicScript =
        serde_json::from_value(json!({"replies": [], "faults": [{"request": 1, "kind": "malformed"}]}))
            .expect("a script");
    let (_, numbered) = super::anthropic::AnthropicPlay::new(script).expect("a valid script");
    let numbering = Arc::new(Numbering(play));
    let server = Server::start(numbering, numbered).await.expect("the server starts");
    assert_eq!(say(&server, "x").await.expect("an answer").status(), 200, "malformed, not the play's 500");
    assert_eq!(say(&server, "x").await.expect("an answer").status(), 500, "then the play's own");
    let faults: Vec<_> = server.requests().into_iter().map(|record| record.fault).collect();
    assert_eq!(faults, [Some("malformed"), Some("status")]);
    server.stop().await;
}

/// [`Queued`], numbering every request.
struct Numbering(Arc<Queued>);

impl Play for Numbering {
    fn numbered(&self, _method: &Method, _path: &str) -> bool {
        true
    }
    fn answer(&self, request: &Incoming) -> Answer {
        self.0.answer(request)
    }
    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer {
        self.0.error(status, message, code)
    }
    fn fault(&self, request: &Incoming) -> Option<Fault> {
        self.0.fault(request)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_counts_the_most_requests_it_handled_at_one_time() {
    let play = Arc::new(Queued::default());
    play.queue("slow", vec![Fault::Delay(Duration::from_millis(300)); 3]);
    let server = Server::start(play, Faults::default()).await.expect("the server starts");
    let slow = (0..3).map(|_| say(&server, "slow"));
    let answers = futures::future::join_all(slow).await;
    assert!(answers.iter().all(|answer| answer.as_ref().is_ok_and(|answer| answer.status() == 200)));
    say(&server, "quick").await.expect("an answer");
    assert_eq!(server.most_in_flight(), 3);
    server.stop().await;
}

#[test]
fn script_faults_name_what_is_wrong_with_a_status_faults_code() {
    let script: AnthropicScript = serde_json::from_value(
        json!({"replies": [], "faults": [{"request": 1, "kind": "status", "status": 429, "code": ""}]}),
    )
    .expect("decodes");
    let refused = super::anthropic::AnthropicPlay::new(script).err().map(|error| error.to_string());
    assert_eq!(
        refused.as_deref(),
        Some(
            "invalid script for `loopback::anthropic`: `faults[0]`: `code` is empty: leave it out for the API's usual error code"
        )
    );
    let unknown: Result<AnthropicScript, _> =
        serde_json::from_value(json!({"replies": [], "faults": [{"request": 1, "kind": "malformed", "status": 500}]}));
    assert!(unknown.expect_err("no status for malformed").to_string().contains("unknown field `status`"));
}
