//! GitHub-flavoured Markdown tables, padded so that the raw text reads as a grid. The layout is
//! tabled's (widths by Unicode display width, alignment, the `:` markers of the delimiter row);
//! this file only checks the shape and escapes what Markdown would misread.

use tabled::builder::Builder;
use tabled::grid::config::{AlignmentHorizontal, Entity, Offset, Position};
use tabled::settings::formatting::TrimStrategy;
use tabled::settings::object::Segment;
use tabled::settings::{Style, Width};

use super::{Result, TextError};

/// How a column's cells sit: `l`, `r` or `c` in an `align` string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    #[default]
    Left,
    Right,
    Center,
}

impl Align {
    /// One alignment per column from a string such as "lrrr".
    pub fn parse_all(align: &str, columns: usize) -> Result<Vec<Align>> {
        let letters = align.chars().count();
        if letters != columns {
            return Err(TextError::AlignLength { letters, columns });
        }
        align
            .chars()
            .enumerate()
            .map(|(column, letter)| match letter {
                'l' => Ok(Align::Left),
                'r' => Ok(Align::Right),
                'c' => Ok(Align::Center),
                _ => Err(TextError::AlignLetter { letter, column }),
            })
            .collect()
    }
}

/// A Markdown table: the header row, the delimiter row (`|---|`, `|--:|`, `|:-:|` by
/// alignment), one line per row, and a final newline. Every row has as many cells as the header;
/// `align` has one entry per column, or is `None` for all left. A `|` in a cell is escaped as
/// `\|`; line breaks and tabs become spaces (a row is one line); leading and trailing spaces of
/// a cell go (Markdown ignores them). Columns are at least 3 wide, so the delimiter row always
/// has its dashes.
pub fn markdown_table(header: &[String], rows: &[Vec<String>], align: Option<&[Align]>) -> Result<String> {
    let columns = header.len();
    if columns == 0 {
        return Err(TextError::NoColumns);
    }
    if let Some((index, row)) = rows.iter().enumerate().find(|(_, row)| row.len() != columns) {
        return Err(TextError::RowLength { index, cells: row.len(), columns });
    }
    let default = vec![Align::Left; columns];
    let align = align.unwrap_or(&default);
    if align.len() != columns {
        return Err(TextError::AlignLength { letters: align.len(), columns });
    }
    let mut builder = Builder::with_capacity(rows.len() + 1, columns);
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        builder.push_record(row.iter().map(|cell| escape(cell)));
    }
    let mut table = builder.build();
    table.with(Style::markdown());
    // Widening pads the cell's text with spaces; trimming lets alignment place it again.
    table.modify(Segment::all(), Width::increase(3));
    table.modify(Segment::all(), TrimStrategy::Horizontal);
    let config = table.get_config_mut();
    for (column, &alignment) in align.iter().enumerate() {
        let (horizontal, start, end) = match alignment {
            Align::Left => (AlignmentHorizontal::Left, false, false),
            Align::Right => (AlignmentHorizontal::Right, false, true),
            Align::Center => (AlignmentHorizontal::Center, true, true),
        };
        config.set_alignment_horizontal(Entity::Column(column), horizontal);
        // The delimiter row is the horizontal line above row 1.
        let delimiter = Position::new(1, column);
        if start {
            config.set_horizontal_char(delimiter, Offset::Start(0), ':');
        }
        if end {
            config.set_horizontal_char(delimiter, Offset::End(0), ':');
        }
    }
    Ok(format!("{table}\n"))
}

fn escape(cell: &str) -> String {
    cell.replace("\r\n", " ").replace(['\n', '\r', '\t'], " ").replace('|', "\\|")
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
