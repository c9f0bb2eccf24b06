//! The ports against their originals: the Rhai functions of `parity_originals.rhai` run in a Rhai
//! engine on every text of the Cortex fixture (messages, prompts, answers, key facts) and on the
//! edge cases of the unit tests, and must give what the Rust functions give, value for value.

use std::path::PathBuf;

use ::rhai::{AST, Array, Dynamic, Engine, FuncArgs, Module, Scope};
use serde_json::{Value as Json, json};

use algorithms::search::tokenize::benchmark_tokens;
use algorithms::text::*;

struct Originals {
    engine: Engine,
    ast: AST,
}

impl Originals {
    fn new() -> Self {
        let mut engine = Engine::new();
        // As the host's script engine: Rhai's default depths reject the originals.
        engine.set_max_expr_depths(256, 256);
        let mut search = Module::new();
        search.set_native_fn("tokens", |text: &str, _tokenizer: &str| {
            Ok(benchmark_tokens(text).into_iter().map(Dynamic::from).collect::<Array>())
        });
        engine.register_static_module("search", search.into());
        let ast = engine.compile(include_str!("parity_originals.rhai")).unwrap();
        Originals { engine, ast }
    }

    /// The original `function` on `args`, as JSON (`()` is null).
    fn call(&self, function: &str, args: impl FuncArgs) -> Json {
        let result: Dynamic = self
            .engine
            .call_fn(&mut Scope::new(), &self.ast, function, args)
            .unwrap_or_else(|error| panic!("{function}: {error}"));
        ::rhai::serde::from_dynamic(&result).unwrap()
    }
}

fn fixture(name: &str) -> Json {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cortex/v1.1").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn strings_at<'a>(value: &'a Json, key: &str) -> impl Iterator<Item = String> + 'a {
    let key = key.to_owned();
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(move |item| match &item[&key] {
            Json::String(text) => Some(vec![text.clone()]),
            Json::Array(items) => Some(items.iter().filter_map(|item| item.as_str().map(str::to_owned)).collect()),
            _ => None,
        })
        .flatten()
}

const EDGE_CASES: &[&str] = &[
    "",
    " ",
    "\n\n",
    "#",
    "- * # Heading text here",
    "  *   starred point made here  ",
    "Got it. Do it now. Twelve chars",
    "It ends right here. A",
    "The last one ends here. ",
    "ééééééééééé. Éé ééé ééééé.",
    "Set `FOO to 1. Done",
    "See `a\nb` here.\nNext",
    "Try this:\n```py\nprint(1)\n",
    "```sh\n```",
    "``````",
    "Run ```make``` now.",
    "\r a\r\nb \r",
    "a concurrency of 5, TTL 600 seconds; `max: 25`; 30-day; 80%; week 2; 20.11.1; 10,000 requests",
    "port 4000 not 3000. In week 2 we moved. on day 12. see apps/api 3. v2.0 20. k6 s3 4x 3. 5-% 10--day",
    "(ttl=300) Timeout is 30?! retries 3, 5 seconds ttl\n300",
    "İ 300 ΣΟΦΙΑ xa-a-a caféine 3000 or 300 ttl_300",
    "It's 9 o'clock, isn't it? They're 12 and it's 7 seconds.",
];

struct Corpus {
    texts: Vec<String>,
    facts: Vec<String>,
}

fn corpus() -> Corpus {
    let sessions = fixture("seed-data.json");
    let prompts = fixture("prompts.json");
    let mut texts: Vec<String> = EDGE_CASES.iter().map(|text| (*text).to_owned()).collect();
    texts.extend(strings_at(&sessions, "description"));
    for session in sessions.as_array().unwrap() {
        texts.extend(strings_at(&session["messages"], "content"));
    }
    texts.extend(strings_at(&prompts, "prompt"));
    texts.extend(strings_at(&prompts, "groundTruth"));
    let mut facts: Vec<String> = strings_at(&prompts, "keyFacts").chain(strings_at(&prompts, "staleFacts")).collect();
    facts.extend(["300", "a-a", "caf", "σοφια", "", "Fastify", "4000", "week 2"].map(str::to_owned));
    assert!(texts.len() > 300 && facts.len() > 80, "{} texts, {} facts", texts.len(), facts.len());
    Corpus { texts, facts }
}

/// Every token a function may see: the texts split at whitespace, as they are, lowercased and
/// with their trailing stops, and the benchmark tokens.
fn tokens(texts: &[String]) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    for text in texts {
        for raw in text.split_whitespace() {
            tokens.push(raw.to_owned());
            tokens.push(raw.to_lowercase().trim_end_matches(['.', ',', '?', '!', ';', ':', ')']).to_owned());
        }
        tokens.extend(words(text));
    }
    tokens.sort();
    tokens.dedup();
    tokens
}

#[test]
fn the_cutting_functions_equal_their_originals_on_the_fixture() {
    let originals = Originals::new();
    for text in corpus().texts {
        assert_eq!(json!(sentences(&text)), originals.call("sentences", (text.clone(),)), "sentences of {text:?}");
        assert_eq!(json!(pieces(&text)), originals.call("pieces", (text.clone(),)), "pieces of {text:?}");
        assert_eq!(json!(squash(&text)), originals.call("collapse", (text.clone(),)), "squash of {text:?}");
    }
}

#[test]
fn quantities_and_terms_equal_their_originals_on_every_text_and_piece() {
    let originals = Originals::new();
    let texts = corpus().texts;
    let mut checked = 0;
    for text in texts.iter().cloned().chain(texts.iter().flat_map(|text| pieces(text))) {
        assert_eq!(json!(quantities(&text)), originals.call("values_of", (text.clone(),)), "quantities of {text:?}");
        assert_eq!(json!(terms(&text).join(" ")), originals.call("stemmed_of", (text.clone(),)), "terms of {text:?}");
        checked += usize::from(!quantities(&text).is_empty());
    }
    assert!(checked > 50, "only {checked} texts with values");
}

#[test]
fn the_token_functions_equal_their_originals_on_every_token() {
    let originals = Originals::new();
    for token in tokens(&corpus().texts) {
        let quantity = quantity(&token).map(|quantity| json!({ "number": quantity.number, "unit": quantity.unit }));
        assert_eq!(quantity.unwrap_or(Json::Null), originals.call("parse_quantity", (token.clone(),)), "{token:?}");
        assert_eq!(json!(whole_number(&token)), originals.call("whole_number", (token.clone(),)), "{token:?}");
        assert_eq!(json!(unit(&token)), originals.call("unit_of", (token.clone(),)), "{token:?}");
        assert_eq!(json!(has_digit(&token)), originals.call("has_digit", (token.clone(),)), "{token:?}");
    }
}

#[test]
fn fact_matching_equals_the_original_on_every_text_and_key_fact() {
    let originals = Originals::new();
    let Corpus { texts, facts } = corpus();
    // The original finds an empty fact where a boundary stands alone; the port never does.
    let facts: Vec<String> = facts.into_iter().filter(|fact| !fact.is_empty()).collect();
    let facts_array: Array = facts.iter().cloned().map(Dynamic::from).collect();
    let mut found = 0;
    for text in &texts {
        let count = count_facts(text, &facts);
        assert_eq!(json!(count), originals.call("count_facts", (text.clone(), facts_array.clone())), "{text:?}");
        assert_eq!(facts_in(text, &facts).len(), count);
        found += count;
    }
    assert!(found > 100, "only {found} facts found");
    for fact in &facts {
        for text in EDGE_CASES {
            let original = originals.call("contains_fact", (text.to_string(), fact.clone()));
            assert_eq!(json!(contains_fact(text, fact)), original, "{fact:?} in {text:?}");
        }
    }
}

#[test]
fn fixed_equals_the_original_at_the_places_it_scaled_right() {
    let originals = Originals::new();
    let mut values: Vec<f64> =
        (0..=150).flat_map(|k| [f64::from(k) / 50.0, f64::from(k) / 7.0, -f64::from(k) / 7.0]).collect();
    values.extend((0..=1000).map(|k| f64::from(k) / 1024.0));
    values.extend([0.0004, 0.0005, 0.0015, 1.005, 2.675, 12.5, -0.001, 1234.5678, 0.95]);
    for value in values {
        for places in [0_i64, 2, 3] {
            let original = originals.call("fixed", (value, places));
            assert_eq!(json!(fixed(Some(value), places).unwrap()), original, "{value} at {places}");
        }
        if value >= 0.0 {
            assert_eq!(json!(fixed(Some(value), 2).unwrap()), originals.call("format_score", (value,)), "{value}");
        }
    }
}

#[test]
fn dates_equal_the_original_on_well_formed_dates() {
    let originals = Originals::new();
    for offset in (-800..=800_i64).step_by(7) {
        let original = originals.call("add_days", ("2024-01-15".to_owned(), offset));
        let date = add_days("2024-01-15", offset).unwrap();
        assert_eq!(json!(date), original, "{offset}");
        let (year, month, day): (i64, i64, i64) =
            (date[0..4].parse().unwrap(), date[5..7].parse().unwrap(), date[8..10].parse().unwrap());
        assert_eq!(json!(day_number(&date).unwrap()), originals.call("days_from_civil", (year, month, day)), "{date}");
    }
}
