//! The Rhai namespace `qa::`.

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use algorithms::qa::{self, Category};

use crate::capabilities::{docs::function, script_error};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

fn category(context: &NativeCallContext, code: i64) -> Result<Category> {
    Category::from_code(code).map_err(|error| script_error(context, &error))
}

fn category_map(category: Category) -> Map {
    let mut map = Map::new();
    map.insert("code".into(), Dynamic::from_int(category.code()));
    map.insert("name".into(), category.name().into());
    map.insert("official_count".into(), Dynamic::from_int(category.official_count() as i64));
    map
}

/// The strings of a script array; anything else names its index.
fn strings(context: &NativeCallContext, name: &str, values: &Array) -> Result<Vec<String>> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            value.clone().into_string().map_err(|type_name| {
                let message = format!("`{name}[{index}]` must be a string, got {type_name}");
                Box::new(EvalAltResult::ErrorRuntime(message.into(), context.call_position()))
            })
        })
        .collect()
}

pub fn module() -> Module {
    let mut module = Module::new();

    function(
        "categories",
        &["Array"],
        "
LoCoMo's five question categories in code order: `#{ code, name, official_count }` (the
questions of that category in the official `locomo10.json`: 282, 321, 96, 841, 446). The codes
are the data's, not the paper's order: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial.
Example: `for c in qa::categories() { print(`${c.code}: ${c.name}`); }`",
    )
    .set_into_module(&mut module, || -> Array {
        Category::ALL.iter().map(|category| category_map(*category).into()).collect()
    });

    function(
        "category",
        &["code: i64", "Map"],
        "
The category of a `category` code, as `qa::categories()` lists it; a code outside 1–5 is an
error.
Example: `qa::category(2).name` is `\"temporal\"`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, code: i64| -> Result<Map> {
        category(&context, code).map(category_map)
    });

    function(
        "gold_text",
        &["answer: Dynamic", "String"],
        "
A gold `answer` as the text the official evaluation scores: a string as it is, a number as
Python's `str()` writes it (`2022`, `3.5`); anything else is an error.
Example: `qa::gold_text(2022)` is `\"2022\"`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, answer: Dynamic| -> Result<String> {
        let value: serde_json::Value = rhai::serde::from_dynamic(&answer)?;
        qa::gold_text(&value).map_err(|error| script_error(&context, &error))
    });

    function(
        "normalize",
        &["answer: &str", "String"],
        "
An answer normalised as the official evaluation does before comparing: commas dropped,
lowercased, ASCII punctuation dropped, the words a, an, the and `and` dropped, white space
collapsed.
Example: `qa::normalize(\"The cat, and a Dog!\")` is `\"cat dog\"`",
    )
    .set_into_module(&mut module, |answer: &str| -> String { qa::normalize_answer(answer) });

    function(
        "token_f1",
        &["prediction: &str", "gold: &str", "f64"],
        "
The official token F1: both answers normalised, each token Porter-stemmed, F1 of the two bags
of stems (0 when they share nothing).
Example: `qa::token_f1(\"in May 2023\", \"7 May 2023\")` is about 0.67",
    )
    .set_into_module(&mut module, |prediction: &str, gold: &str| -> f64 { qa::token_f1(prediction, gold) });

    function(
        "bleu1",
        &["prediction: &str", "gold: &str", "f64"],
        "
BLEU-1 of a prediction against one gold answer, over the normalised tokens: clipped unigram
precision times the brevity penalty (the official evaluation file computes no BLEU; this is
the unigram BLEU other LoCoMo harnesses report beside F1).
Example: `let b = qa::bleu1(prediction, question.gold);`",
    )
    .set_into_module(&mut module, |prediction: &str, gold: &str| -> f64 { qa::bleu1(prediction, gold) });

    function(
        "score",
        &["category: i64", "prediction: &str", "gold: &str", "f64"],
        "
The official score of a prediction by its question's category: token F1 for 2 and 4; for 3
against the gold cut at its first `;`; for 1 (multi-hop) both split at commas, the mean over the
gold's parts of the best F1 of any predicted part; for 5 (adversarial) 1 when the prediction
says \"no information available\" or \"not mentioned\", else 0.
Example: `let f1 = qa::score(q.category, prediction, q.gold);`",
    )
    .set_into_module(
        &mut module,
        |context: NativeCallContext, code: i64, prediction: &str, gold: &str| -> Result<f64> {
            Ok(qa::score(category(&context, code)?, prediction, gold))
        },
    );

    function(
        "evidence_recall",
        &["evidence: Array", "retrieved: Array", "f64"],
        "
The share of a question's evidence turn ids (`D<session>:<turn>`) among the retrieved ids, as
the official evaluation counts it; retrieved session ids (`S<session>`) count the evidence of
their sessions. No evidence scores 1, nothing retrieved 0.
Example: `let recall = qa::evidence_recall(q.evidence, hits.map(|h| h.id));`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, evidence: Array, retrieved: Array| -> Result<f64> {
        let evidence = strings(&context, "evidence", &evidence)?;
        let retrieved = strings(&context, "retrieved", &retrieved)?;
        Ok(qa::evidence_recall(&evidence, &retrieved))
    });

    module
}

#[cfg(test)]
#[path = "rhai_tests.rs"]
mod tests;
