//! Specification of `table.rs`: GitHub-flavoured Markdown tables that read as a grid.

use super::*;

fn cells(row: &[&str]) -> Vec<String> {
    row.iter().map(|cell| (*cell).to_owned()).collect()
}

fn render(header: &[&str], rows: &[&[&str]], align: Option<&str>) -> Result<String> {
    let header = cells(header);
    let rows: Vec<Vec<String>> = rows.iter().map(|row| cells(row)).collect();
    let align = align.map(|align| Align::parse_all(align, header.len())).transpose()?;
    markdown_table(&header, &rows, align.as_deref())
}

#[test]
fn a_table_has_a_header_a_delimiter_row_and_padded_rows() {
    let table = render(&["Condition", "Mean"], &[&["openclaw", "1.23"], &["openclaw+cortex", "2.50"]], None).unwrap();
    assert_eq!(
        table,
        "\
| Condition       | Mean |
|-----------------|------|
| openclaw        | 1.23 |
| openclaw+cortex | 2.50 |
"
    );
}

#[test]
fn alignment_sets_the_colons_and_the_padding() {
    let table =
        render(&["Comparison", "Δ", "p"], &[&["a vs b", "+0.10", "0.5"], &["c", "-1.25", "0.031"]], Some("lrc"))
            .unwrap();
    assert_eq!(
        table,
        "\
| Comparison |     Δ |   p   |
|------------|------:|:-----:|
| a vs b     | +0.10 |  0.5  |
| c          | -1.25 | 0.031 |
"
    );
}

#[test]
fn narrow_columns_are_three_wide_so_the_delimiter_keeps_its_dashes() {
    let table = render(&["", "n"], &[&["x", ""]], Some("cr")).unwrap();
    assert_eq!(
        table,
        "\
|     |   n |
|:---:|----:|
|  x  |     |
"
    );
}

#[test]
fn a_header_without_rows_is_a_table() {
    assert_eq!(render(&["only"], &[], None).unwrap(), "| only |\n|------|\n");
}

#[test]
fn pipes_are_escaped_and_line_breaks_become_spaces() {
    let table = render(&["a|b", "c"], &[&["x\ny", "tab\there"], &["one\r\ntwo", " pad "]], None).unwrap();
    assert_eq!(
        table,
        "\
| a\\|b    | c        |
|---------|----------|
| x y     | tab here |
| one two | pad      |
"
    );
}

#[test]
fn wide_characters_are_padded_by_display_width() {
    let table = render(&["name", "n"], &[&["日本", "1"], &["abcdef", "22"]], Some("lr")).unwrap();
    assert_eq!(
        table,
        "\
| name   |   n |
|--------|----:|
| 日本   |   1 |
| abcdef |  22 |
"
    );
}

#[test]
fn a_row_of_the_wrong_length_is_an_error_naming_its_index() {
    let error = render(&["a", "b"], &[&["1", "2"], &["1"]], None).unwrap_err();
    assert_eq!(error, TextError::RowLength { index: 1, cells: 1, columns: 2 });
    assert_eq!(error.to_string(), "`rows[1]` has 1 cells, the header has 2");
}

#[test]
fn align_needs_one_known_letter_per_column() {
    let error = render(&["a", "b"], &[], Some("l")).unwrap_err();
    assert_eq!(error, TextError::AlignLength { letters: 1, columns: 2 });
    assert!(error.to_string().contains("`text::table`") && error.to_string().contains("`align`"), "{error}");
    let error = render(&["a", "b"], &[], Some("lx")).unwrap_err();
    assert_eq!(error, TextError::AlignLetter { letter: 'x', column: 1 });
    assert!(error.to_string().contains("`text::table`") && error.to_string().contains("`align`"), "{error}");
    assert_eq!(render(&["a"], &[], Some("L")).unwrap_err(), TextError::AlignLetter { letter: 'L', column: 0 });
}

#[test]
fn a_table_needs_a_column() {
    assert_eq!(render(&[], &[], None), Err(TextError::NoColumns));
    assert_eq!(render(&[], &[&[]], Some("")), Err(TextError::NoColumns));
}
