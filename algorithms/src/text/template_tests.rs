use serde_json::json;

use super::render;
use crate::text::TextError;

#[test]
fn placeholders_are_filled_and_an_empty_optional_block_disappears() {
    let template = "{{ summary }}{% if recent %}\n\nRecent:\n{{ recent }}{% endif %}\n\nQuestion: {{ question }}\n";
    let values = json!({ "summary": "S", "recent": "", "question": "Why <Zod> & not Joi?" });
    assert_eq!(render("t", template, &values).unwrap(), "S\n\nQuestion: Why <Zod> & not Joi?");
    let values = json!({ "summary": "S", "recent": "R", "question": "Q" });
    assert_eq!(render("t", template, &values).unwrap(), "S\n\nRecent:\nR\n\nQuestion: Q");
}

#[test]
fn a_placeholder_the_values_do_not_define_is_an_error_naming_the_file_the_line_and_the_known_names() {
    let error =
        render("answer-user.md", "Context:\n{{ sumary }}\n", &json!({ "summary": "", "question": "" })).unwrap_err();
    assert_eq!(
        error,
        TextError::Placeholder {
            name: "answer-user.md".into(),
            line: Some(2),
            placeholder: "sumary".into(),
            known: "question, summary".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "template `answer-user.md`, line 2: unknown placeholder `sumary`; the values are: question, summary"
    );
}

#[test]
fn a_syntax_error_names_the_template_and_the_line() {
    let error = render("judge.md", "one\n{% if x %}two\n", &json!({ "x": true })).unwrap_err();
    let TextError::Template { name, line, .. } = &error else { panic!("{error:?}") };
    assert_eq!((name.as_str(), *line), ("judge.md", Some(2)));
}
