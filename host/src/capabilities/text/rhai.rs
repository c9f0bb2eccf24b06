//! The Rhai namespace `text::`.

use rhai::{Array, Dynamic, EvalAltResult, ImmutableString, Map, Module, NativeCallContext};

use algorithms::text::{self, Align};

use crate::capabilities::{docs::function, script_error, script_options};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

fn fail(context: &NativeCallContext, message: String) -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorRuntime(message.into(), context.call_position()))
}

fn strings(values: Vec<String>) -> Array {
    values.into_iter().map(Dynamic::from).collect()
}

/// The strings of a script array; anything else names its index.
fn string_items(context: &NativeCallContext, name: &str, values: &Array) -> Result<Vec<ImmutableString>> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            value
                .clone()
                .into_immutable_string()
                .map_err(|type_name| fail(context, format!("`{name}[{index}]` must be a string, got {type_name}")))
        })
        .collect()
}

/// A number argument that may be `()`; integers count as floats.
fn optional_number(context: &NativeCallContext, value: &Dynamic) -> Result<Option<f64>> {
    if value.is_unit() {
        return Ok(None);
    }
    value
        .as_float()
        .or_else(|_| value.as_int().map(|int| int as f64))
        .map(Some)
        .map_err(|type_name| fail(context, format!("`value` must be a number or (), got {type_name}")))
}

/// A value as Rhai's `to_string` prints it (the way `print` finds the function, falling back to
/// the value's display when none is registered).
fn display(context: &NativeCallContext, value: &Dynamic) -> String {
    if let Some(text) = value.read_lock::<ImmutableString>() {
        return text.to_string();
    }
    let mut value = value.clone();
    match context.call_native_fn_raw("to_string", true, &mut [&mut value]) {
        Ok(text) if text.is_string() => text.to_string(),
        _ => value.to_string(),
    }
}

/// The options of `text::table`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct TableOptions {
    align: Option<String>,
}

pub fn module() -> Module {
    let mut module = Module::new();
    register_sentences(&mut module);
    register_words(&mut module);
    register_quantities(&mut module);
    register_facts(&mut module);
    register_claims(&mut module);
    register_dates(&mut module);
    register_format(&mut module);
    register_table(&mut module);
    register_template(&mut module);
    register_tokens(&mut module);
    module
}

fn register_sentences(module: &mut Module) {
    function(
        "sentences",
        &["text: &str", "Array"],
        "
The sentences of a text, as the built-in answerer cuts them: each line is cut after `.`, `!` or
`?` followed by a space and an ASCII capital, digit or backtick; each cut is trimmed, loses
leading bullet markers (`- `, `* `, `#`) and is kept when 12 or more characters remain.
Example: `text::sentences(\"- First point here. Second point here.\")` is `[\"First point here.\", \"Second point here.\"]`",
    )
    .set_into_module(module, |text: &str| -> Array { strings(text::sentences(text)) });

    function(
        "pieces",
        &["text: &str", "Array"],
        "
The pieces of a message, as the local Cortex memory takes its facts: each fenced code block is
one piece (a one-word first line, the language tag, dropped; whitespace squashed); prose is cut
after `. `, `? ` or `! ` and at line breaks, never inside a backticked span; empty pieces go.
Example: `for piece in text::pieces(message.content) { ... }`",
    )
    .set_into_module(module, |text: &str| -> Array { strings(text::pieces(text)) });

    function(
        "squash",
        &["text: &str", "String"],
        "
Whitespace squashed: line feeds and tabs become spaces, runs of spaces one space, ends trimmed.
Example: `text::squash(\"  a\\n\\tb   c \")` is `\"a b c\"`",
    )
    .set_into_module(module, |text: &str| -> String { text::squash(text) });
}

fn register_words(module: &mut Module) {
    function(
        "words",
        &["text: &str", "Array"],
        "
The Cortex benchmark's terms: lowercase, split at anything but ASCII letters and digits, words
of one character dropped (the same as `search::tokens(text, \"benchmark\")`).
Example: `text::words(\"The TTL is 600s, isn't it?\")` is `[\"the\", \"ttl\", \"is\", \"600s\", \"isn\", \"it\"]`",
    )
    .set_into_module(module, |text: &str| -> Array { strings(text::words(text)) });

    function(
        "stem",
        &["word: &str", "String"],
        "
A word without a final plural `s`: dropped when the word is longer than 3 characters and ends
in `s` but not `ss`.
Example: `text::stem(\"keys\")` is `\"key\"`; `\"class\"` and `\"bus\"` stay",
    )
    .set_into_module(module, |word: &str| -> String { text::stem(word) });

    function(
        "porter_stem",
        &["word: &str", "String"],
        "
The Porter stem of a word as NLTK's `PorterStemmer()` (3.9.1, its default mode) gives it, the
stemmer LoCoMo's official F1 uses; the word is lowercased first.
Example: `text::porter_stem(\"running\")` is `\"run\"`; `\"generously\"` is `\"gener\"`",
    )
    .set_into_module(module, |word: &str| -> String { text::porter_stem(word) });

    function(
        "stop_words",
        &["Array"],
        "
The one stop-word list (136 lowercase words: articles, pronouns, auxiliaries, \"use\", \"now\", ...).
Example: `let common = text::stop_words();`",
    )
    .set_into_module(module, || -> Array { text::STOP_WORDS.iter().map(|&word| Dynamic::from(word)).collect() });

    function(
        "is_stop_word",
        &["word: &str", "bool"],
        "
Whether a word is in `text::stop_words()` (exactly: lowercase, untrimmed).
Example: `text::is_stop_word(\"the\")` is `true`",
    )
    .set_into_module(module, |word: &str| -> bool { text::is_stop_word(word) });

    function(
        "content_words",
        &["text: &str", "Array"],
        "
`text::words` without stop words, in order, repeats kept.
Example: `text::content_words(\"What is the cache TTL now?\")` is `[\"cache\", \"ttl\"]`",
    )
    .set_into_module(module, |text: &str| -> Array { strings(text::content_words(text)) });

    function(
        "overlap",
        &["words: Array", "text: &str", "f64"],
        "
The share of `words` found among `text::words(text)` (each of `words` counted, repeats too); 0
for no words.
Example: `text::overlap([\"cache\", \"ttl\"], \"The TTL is 600 s\")` is `0.5`",
    )
    .set_into_module(module, |words: Array, text: &str| -> f64 {
        let words: Vec<String> = words.iter().map(ToString::to_string).collect();
        text::overlap(&words, text)
    });

    function(
        "terms",
        &["text: &str", "Array"],
        "
`text::content_words`, each stemmed: the BM25 terms of the local Cortex memory.
Example: `text::terms(\"Which keys does it follow?\")` is `[\"key\", \"follow\"]`",
    )
    .set_into_module(module, |text: &str| -> Array { strings(text::terms(text)) });

    function(
        "whole_number",
        &["token: &str", "Dynamic"],
        "
The value of a token of 1 to 9 ASCII digits, else `()`.
Example: `text::whole_number(\"12\")` is `12`; `\"12a\"` and `\"\"` give `()`",
    )
    .set_into_module(module, |token: &str| -> Dynamic {
        text::whole_number(token).map_or(Dynamic::UNIT, Dynamic::from)
    });

    function(
        "has_digit",
        &["text: &str", "bool"],
        "
Whether a text holds an ASCII digit.
Example: `text::has_digit(\"k6\")` is `true`",
    )
    .set_into_module(module, |text: &str| -> bool { text::has_digit(text) });
}

fn register_quantities(module: &mut Module) {
    function(
        "unit",
        &["word: &str", "String"],
        "
The unit a word names, normalised (s, ms, min, h, day, week, month, %, requests, connections,
characters), or `\"\"`.
Example: `text::unit(\"seconds\")` is `\"s\"`",
    )
    .set_into_module(module, |word: &str| -> String { text::unit(word).to_owned() });

    function(
        "quantity",
        &["token: &str", "Dynamic"],
        "
A token read as a number with a glued unit: `#{ number, unit }` (`number` a string, `unit` \"\",
\"%\" or a `text::unit`, after an optional `-`), or `()`. Versions (\"20.11.1\"), \"3.\" and \"k6\"
are no quantity.
Example: `text::quantity(\"30-day\")` is `#{ number: \"30\", unit: \"day\" }`",
    )
    .set_into_module(module, |token: &str| -> Dynamic {
        text::quantity(token).map_or(Dynamic::UNIT, |quantity| {
            let mut map = Map::new();
            map.insert("number".into(), quantity.number.into());
            map.insert("unit".into(), quantity.unit.into());
            map.into()
        })
    });

    function(
        "quantities",
        &["text: &str", "Array"],
        "
The numbers of a text with what they measure: `[#{ number, key, unit }]`. The key is the glued
unit or the unit word that follows (`unit` true), else the nearest earlier word that is not a
stop word, a plain word and not \"week\" or \"day\" (`unit` false); numbers without a key go.
Example: `text::quantities(\"a concurrency of 5, TTL 600 seconds\")` gives keys \"concurrency\" and \"s\"",
    )
    .set_into_module(module, |text: &str| -> Array {
        text::quantities(text)
            .into_iter()
            .map(|value| {
                let mut map = Map::new();
                map.insert("number".into(), value.number.into());
                map.insert("key".into(), value.key.into());
                map.insert("unit".into(), value.unit.into());
                map.into()
            })
            .collect()
    });
}

fn register_facts(module: &mut Module) {
    function(
        "contains_fact",
        &["text: &str", "fact: &str", "bool"],
        "
Whether a text contains a fact, case-insensitively and at token boundaries: the characters
around an occurrence are not ASCII letters, digits or `_`; every occurrence is tried. An empty
fact is never contained.
Example: `text::contains_fact(\"TTL is 3000 s\", \"300\")` is `false`",
    )
    .set_into_module(module, |text: &str, fact: &str| -> bool { text::contains_fact(text, fact) });

    function(
        "count_facts",
        &["text: &str", "facts: Array", "i64"],
        "
How many of the facts (strings) `text::contains_fact` finds in the text.
Example: `let found = text::count_facts(answer, prompt.key_facts);`",
    )
    .set_into_module(module, |context: NativeCallContext, text: &str, facts: Array| -> Result<i64> {
        let facts = string_items(&context, "facts", &facts)?;
        Ok(i64::try_from(text::count_facts(text, &facts)).unwrap_or(i64::MAX))
    });

    function(
        "facts_in",
        &["text: &str", "facts: Array", "Array"],
        "
The facts (strings) that `text::contains_fact` finds in the text, in their order.
Example: `let covered = text::facts_in(answer, prompt.key_facts);`",
    )
    .set_into_module(module, |context: NativeCallContext, text: &str, facts: Array| -> Result<Array> {
        let facts = string_items(&context, "facts", &facts)?;
        Ok(strings(text::facts_in(text, &facts)))
    });
}

fn register_claims(module: &mut Module) {
    function(
        "specifics",
        &["text: &str", "Array"],
        "
The specific things a text names, in order: the content of each code span (a fenced block is one
item), then each token outside code with a digit, one of `_ / @ { }`, a `.` or `:` between
letters or digits, or a lowerCamelCase shape. Plain words, capitalised names, hyphenated words,
numbered-list markers and `e.g.` are not specifics.
Example: `text::specifics(\"Set `ttl` to 600 in apps/api, as usual.\")` is `[\"ttl\", \"600\", \"apps/api\"]`",
    )
    .set_into_module(module, |text: &str| -> Array { strings(text::specifics(text)) });

    function(
        "numerals",
        &["text: &str", "String"],
        "
The text with numbers in words written as digits (\"two hundred\" → \"200\", \"the fourth week\" →
\"week 4\"), and, on an added last line, every \"N minutes\" or \"N hours\" in seconds and every
\"N percent\" as \"N%\", so that key facts written as digits are found in it.
Example: `text::numerals(\"Five minutes\")` is `\"5 minutes\\n300\"`",
    )
    .set_into_module(module, |text: &str| -> String { text::numerals(text) });

    function(
        "clauses",
        &["text: &str", "Array"],
        "
The clauses of a text: cut after `.`, `?`, `!`, `;` or `:` followed by white space, at line
breaks and before \", but\"; trimmed, empty ones dropped.
Example: `text::clauses(\"I don't know, but maybe 100.\")` is `[\"I don't know\", \"maybe 100.\"]`",
    )
    .set_into_module(module, |text: &str| -> Array { strings(text::clauses(text)) });

    function(
        "truth_facts",
        &["truth: &str", "question: &str", "Array"],
        "
The sentences of a ground truth, each as an array of the facts an answer would name to state it:
outside parentheses where that leaves any, its code spans, specifics and names (`SendGrid`, `ESM`,
`iron-session`, a capitalised word inside the sentence), or, when it has none, its content words;
facts the question already states are left out, and a sentence left with none is dropped. The
built-in judge's key facts when a dataset gives none.
Example: `text::truth_facts(\"Port 4000. Dashboards use Grafana on 3000.\", \"Which port?\")` is `[[\"4000\"], [\"Grafana\", \"3000\"]]`",
    )
    .set_into_module(module, |truth: &str, question: &str| -> Array {
        text::truth_facts(truth, question).into_iter().map(|facts| Dynamic::from_array(strings(facts))).collect()
    });

    function(
        "stated",
        &["answer: &str", "facts: Array", "Array"],
        "
The facts (strings) an answer states, in their order: found as written (`text::contains_fact`,
with the answer's number words as digits), or the fact's words one after another among the
answer's, each stemmed (\"400-line\" is stated by \"400 lines\").
Example: `text::stated(\"PRs stay under 400 lines\", [\"400-line\", \"Biome\"])` is `[\"400-line\"]`",
    )
    .set_into_module(module, |context: NativeCallContext, answer: &str, facts: Array| -> Result<Array> {
        let facts = string_items(&context, "facts", &facts)?;
        Ok(strings(text::stated(answer, &facts)))
    });

    function(
        "plain",
        &["markdown: &str", "String"],
        "
Markdown prose as plain text: links keep their text, images and HTML/JSX tags go, `**`/`__`
go, list, quote and heading markers at a line's start go, fenced code blocks go; code spans
stay as written. One output line per non-blank line.
Example: `text::plain(\"- Use [`updateTag`](/docs/u)\")` is `\"Use `updateTag`\"`",
    )
    .set_into_module(module, |markdown: &str| -> String { text::plain(markdown) });
}

fn register_dates(module: &mut Module) {
    function(
        "add_days",
        &["date: &str", "days: i64", "String"],
        "
A \"YYYY-MM-DD\" date plus a number of days (negative to go back). A malformed or impossible
date is an error.
Example: `text::add_days(\"2024-02-27\", 3)` is `\"2024-03-01\"`",
    )
    .set_into_module(module, |context: NativeCallContext, date: &str, days: i64| -> Result<String> {
        text::add_days(date, days).map_err(|error| script_error(&context, &error))
    });

    function(
        "day_number",
        &["date: &str", "i64"],
        "
The days from 1970-01-01 to a \"YYYY-MM-DD\" date. A malformed or impossible date is an error.
Example: `text::day_number(\"1970-01-02\")` is `1`",
    )
    .set_into_module(module, |context: NativeCallContext, date: &str| -> Result<i64> {
        text::day_number(date).map_err(|error| script_error(&context, &error))
    });
}

fn register_tokens(module: &mut Module) {
    function(
        "token_count",
        &["text: &str", "encoding: &str", "i64"],
        "
How many tokens `text` is in one of OpenAI's BPE encodings: `o200k_base` (GPT-4o and later) or
`cl100k_base` (GPT-4). The ranks are built into the host; the first count of a run loads the
encoding (about 0.1 s). Another encoding is an error naming the known ones.
Example: `let tokens = text::token_count(block, \"o200k_base\");`",
    )
    .set_into_module(module, |context: NativeCallContext, text: &str, encoding: &str| -> Result<i64> {
        let count = text::token_count(text, encoding).map_err(|error| script_error(&context, &error))?;
        Ok(i64::try_from(count).unwrap_or(i64::MAX))
    });
}

fn register_format(module: &mut Module) {
    function(
        "fixed",
        &["value: Dynamic", "places: i64", "String"],
        "
A number rounded half away from zero to `places` decimals (0 to 9) and printed with exactly
that many; a value that rounds to zero has no sign; `()` prints \"n/a\". Integers are accepted.
Example: `text::fixed(2.5, 0)` is `\"3\"`, `text::fixed(0.1, 3)` is `\"0.100\"`",
    )
    .set_into_module(module, |context: NativeCallContext, value: Dynamic, places: i64| -> Result<String> {
        text::fixed(optional_number(&context, &value)?, places).map_err(|error| script_error(&context, &error))
    });

    function(
        "percent",
        &["value: Dynamic", "places: i64", "String"],
        "
A share as a percentage: `text::fixed(value * 100, places)` and \"%\"; `()` prints \"n/a\".
Example: `text::percent(0.875, 1)` is `\"87.5%\"`",
    )
    .set_into_module(module, |context: NativeCallContext, value: Dynamic, places: i64| -> Result<String> {
        text::percent(optional_number(&context, &value)?, places).map_err(|error| script_error(&context, &error))
    });

    function(
        "signed",
        &["value: Dynamic", "places: i64", "String"],
        "
`text::fixed` with a \"+\" before a value that is positive or rounds to zero (never \"-0.00\");
`()` prints \"n/a\".
Example: `text::signed(0.25, 2)` is `\"+0.25\"`, `text::signed(-0.001, 2)` is `\"+0.00\"`",
    )
    .set_into_module(module, |context: NativeCallContext, value: Dynamic, places: i64| -> Result<String> {
        text::signed(optional_number(&context, &value)?, places).map_err(|error| script_error(&context, &error))
    });

    function(
        "code",
        &["text: &str", "String"],
        "
`text` as a Markdown code span: in backticks, or in a longer run of them when it holds
backticks itself.
Example: `text::code(\"max: 25\")` is `` \"`max: 25`\" ``",
    )
    .set_into_module(module, |text: &str| -> String { text::code(text) });

    function(
        "join",
        &["items: Array", "separator: &str", "String"],
        "
The items, each as `to_string` prints it, with the separator between them.
Example: `text::join([3, 1.5, \"x\"], \" / \")` is `\"3 / 1.5 / x\"`",
    )
    .set_into_module(module, |context: NativeCallContext, items: Array, separator: &str| -> String {
        items.iter().map(|item| display(&context, item)).collect::<Vec<_>>().join(separator)
    });
}

fn register_table(module: &mut Module) {
    function(
        "table",
        &["header: Array", "rows: Array", "options: Map", "String"],
        "
A GitHub-flavoured Markdown table, padded to read as a grid, ending in a newline. Cells print
as `to_string` does; `|` is escaped as `\\|`, line breaks and tabs become spaces. Every row has
as many cells as the header. Options: `align` (one of `l`, `r`, `c` per column; all `l`).
Example: `text::table([\"Condition\", \"Score\"], [[\"cortex\", \"2.50\"]], #{ align: \"lr\" })`",
    )
    .set_into_module(
        module,
        |context: NativeCallContext, header: Array, rows: Array, options: Map| -> Result<String> {
            let options: TableOptions = script_options(&context, "text::table", options)?;
            let header: Vec<String> = header.iter().map(|cell| display(&context, cell)).collect();
            let rows = rows
                .iter()
                .enumerate()
                .map(|(index, row)| match row.read_lock::<Array>() {
                    Some(cells) => Ok(cells.iter().map(|cell| display(&context, cell)).collect()),
                    None => Err(fail(&context, format!("`rows[{index}]` must be an array, got {}", row.type_name()))),
                })
                .collect::<Result<Vec<Vec<String>>>>()?;
            let align = options
                .align
                .map(|align| Align::parse_all(&align, header.len()))
                .transpose()
                .map_err(|error| script_error(&context, &error))?;
            text::markdown_table(&header, &rows, align.as_deref()).map_err(|error| script_error(&context, &error))
        },
    );
}

fn register_template(module: &mut Module) {
    function(
        "render",
        &["name: &str", "template: &str", "values: Map", "String"],
        "
`template` filled from `values`, in Jinja syntax (minijinja): `{{ name }}`, `{% if name %}…
{% endif %}`, `{% for item in items %}…{% endfor %}`; no HTML escaping; one trailing newline
dropped. A placeholder `values` does not define is an error naming `name` (a file, say), the
line and the names there are.
Example: `text::render(\"judge-user.md\", fs::read_text(path), #{ question: q, answer: a })`",
    )
    .set_into_module(
        module,
        |context: NativeCallContext, name: &str, template: &str, values: Map| -> Result<String> {
            let values: serde_json::Value = rhai::serde::from_dynamic(&Dynamic::from_map(values))
                .map_err(|error| fail(&context, format!("text::render: the values of `{name}`: {error}")))?;
            text::render(name, template, &values).map_err(|error| script_error(&context, &error))
        },
    );
}

#[cfg(test)]
#[path = "rhai_tests.rs"]
mod tests;
