//! Column types of a results table and the declarations scripts write for them; checking and
//! inferring types from rows lives in [`rows`]. Pure logic over JSON values: it must not do I/O
//! or know how tables are stored.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields};
use serde_json::Value;

use super::table::TableError;

mod rows;

pub(super) use rows::{FixedColumns, Inference, Site, value_kind};

/// The column the host adds to every row; scripts may neither write nor declare it.
pub const RUN_ID_COLUMN: &str = "run_id";

/// Lists and structs nest at most this deep, so that recursion over rows and declarations stays
/// far from the stack limit whatever shape a script builds.
pub const MAX_DEPTH: usize = 32;

/// The type of one column, as scripts see it.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnType {
    Int,
    Float,
    Bool,
    String,
    List(Box<ColumnType>),
    Struct(Vec<(String, ColumnType)>),
}

/// Columns in file order, without the leading `run_id`.
pub type Columns = Vec<(String, ColumnType)>;

impl ColumnType {
    /// The Arrow type stored in Parquet; everything below a column is nullable because scripts
    /// write JSON, where any value may be null or missing.
    pub fn to_arrow(&self) -> DataType {
        match self {
            Self::Int => DataType::Int64,
            Self::Float => DataType::Float64,
            Self::Bool => DataType::Boolean,
            Self::String => DataType::Utf8,
            Self::List(item) => DataType::List(Arc::new(Field::new_list_field(item.to_arrow(), true))),
            Self::Struct(fields) => DataType::Struct(arrow_fields(fields)),
        }
    }

    /// The column type an Arrow type stores, for a file written by [`Self::to_arrow`].
    pub fn from_arrow(data_type: &DataType) -> Option<Self> {
        Some(match data_type {
            DataType::Int64 => Self::Int,
            DataType::Float64 => Self::Float,
            DataType::Boolean => Self::Bool,
            DataType::Utf8 => Self::String,
            DataType::List(item) => Self::List(Box::new(Self::from_arrow(item.data_type())?)),
            DataType::Struct(fields) => Self::Struct(
                fields
                    .iter()
                    .map(|field| Some((field.name().clone(), Self::from_arrow(field.data_type())?)))
                    .collect::<Option<_>>()?,
            ),
            _ => return None,
        })
    }

    /// The name a script would write in a declaration, e.g. `struct{a: int, b: list<string>}`.
    pub fn describe(&self) -> String {
        match self {
            Self::Int => "int".to_owned(),
            Self::Float => "float".to_owned(),
            Self::Bool => "bool".to_owned(),
            Self::String => "string".to_owned(),
            Self::List(item) => format!("list<{}>", item.describe()),
            Self::Struct(fields) => describe_struct(fields.iter().map(|(n, t)| (n, t.describe()))),
        }
    }

    fn depth(&self) -> usize {
        match self {
            Self::Int | Self::Float | Self::Bool | Self::String => 0,
            Self::List(item) => 1 + item.depth(),
            Self::Struct(fields) => 1 + fields.iter().map(|(_, t)| t.depth()).max().unwrap_or(0),
        }
    }
}

fn describe_struct<'a>(fields: impl Iterator<Item = (&'a String, String)>) -> String {
    let fields: Vec<String> = fields.map(|(name, ty)| format!("{name}: {ty}")).collect();
    format!("struct{{{}}}", fields.join(", "))
}

/// The Arrow fields of `columns`, in order.
pub(super) fn arrow_fields(columns: &[(String, ColumnType)]) -> Fields {
    columns.iter().map(|(name, ty)| Field::new(name, ty.to_arrow(), true)).collect()
}

/// Parses a script's declaration: a JSON object mapping column name to type, where a type is
/// `"int"`, `"float"`, `"bool"`, `"string"`, `"list<T>"` (nested allowed) or an object of fields
/// (a struct). Column order is the object's key order. Because serde_json and Rhai maps both
/// iterate in sorted key order, a list of `[name, type]` pairs is accepted wherever an object is,
/// for scripts that want their own column order.
pub fn parse_declaration(table: &str, declaration: &Value) -> Result<Columns, TableError> {
    let columns = parse_fields(table, declaration, &mut String::new(), 0)?;
    validate_columns(table, &columns)?;
    Ok(columns)
}

fn parse_fields(table: &str, value: &Value, path: &mut String, depth: usize) -> Result<Columns, TableError> {
    let shape_error = |found: &Value| TableError::DeclarationShape {
        table: table.to_owned(),
        column: (!path.is_empty()).then(|| path.clone()),
        found: shorten(found.to_string()),
    };
    let entries: Vec<(&String, &Value)> = match value {
        Value::Object(map) => map.iter().collect(),
        Value::Array(pairs) => pairs
            .iter()
            .map(|pair| match pair.as_array().map(Vec::as_slice) {
                Some([Value::String(name), ty]) => Ok((name, ty)),
                _ => Err(shape_error(pair)),
            })
            .collect::<Result<_, _>>()?,
        other => return Err(shape_error(other)),
    };
    let mut columns = Vec::with_capacity(entries.len());
    for (name, ty) in entries {
        let mark = push_field(path, name);
        columns.push((name.clone(), parse_type(table, ty, path, depth)?));
        path.truncate(mark);
    }
    Ok(columns)
}

fn parse_type(table: &str, value: &Value, path: &mut String, depth: usize) -> Result<ColumnType, TableError> {
    let too_deep = || TableError::TooDeep { table: table.to_owned(), column: path.clone(), row: None };
    match value {
        Value::String(text) => {
            let (lists, base) = parse_type_name(text).ok_or_else(|| TableError::UnknownType {
                table: table.to_owned(),
                column: path.clone(),
                declared: shorten(text.clone()),
            })?;
            if depth + lists > MAX_DEPTH {
                return Err(too_deep());
            }
            Ok((0..lists).fold(base, |item, _| ColumnType::List(Box::new(item))))
        }
        Value::Object(_) | Value::Array(_) if depth < MAX_DEPTH => {
            Ok(ColumnType::Struct(parse_fields(table, value, path, depth + 1)?))
        }
        Value::Object(_) | Value::Array(_) => Err(too_deep()),
        other => Err(TableError::UnknownType {
            table: table.to_owned(),
            column: path.clone(),
            declared: shorten(other.to_string()),
        }),
    }
}

/// Cuts what a script wrote to a length an error message can carry.
fn shorten(text: String) -> String {
    const MAX_CHARS: usize = 60;
    let short: String = text.chars().take(MAX_CHARS).collect();
    if short.len() < text.len() { format!("{short}…") } else { text }
}

/// Splits `list<list<int>>` into (2, Int) without recursion, so a huge string cannot overflow
/// the stack before the depth check sees it.
fn parse_type_name(text: &str) -> Option<(usize, ColumnType)> {
    let mut rest = text.trim();
    let mut lists = 0;
    while let Some(inner) = rest.strip_prefix("list<").and_then(|r| r.strip_suffix('>')) {
        rest = inner.trim();
        lists += 1;
    }
    let base = match rest {
        "int" => ColumnType::Int,
        "float" => ColumnType::Float,
        "bool" => ColumnType::Bool,
        "string" => ColumnType::String,
        _ => return None,
    };
    Some((lists, base))
}

/// Checks what a Parquet file and the JSON decoder need of declared columns, whether they came
/// from [`parse_declaration`] or were built in code: no `run_id`, unique names, no empty struct
/// (Parquet cannot store one), bounded depth.
pub(super) fn validate_columns(table: &str, columns: &[(String, ColumnType)]) -> Result<(), TableError> {
    if columns.iter().any(|(name, _)| name == RUN_ID_COLUMN) {
        return Err(TableError::ReservedColumn { table: table.to_owned(), row: None });
    }
    validate_fields(table, columns, &mut String::new())
}

fn validate_fields(table: &str, fields: &[(String, ColumnType)], path: &mut String) -> Result<(), TableError> {
    for (index, (name, ty)) in fields.iter().enumerate() {
        let mark = push_field(path, name);
        if fields.iter().take(index).any(|(earlier, _)| earlier == name) {
            return Err(TableError::DuplicateColumn { table: table.to_owned(), column: path.clone() });
        }
        if ty.depth() > MAX_DEPTH {
            return Err(TableError::TooDeep { table: table.to_owned(), column: path.clone(), row: None });
        }
        let mut inner = ty;
        while let ColumnType::List(item) = inner {
            path.push_str("[]");
            inner = item;
        }
        if let ColumnType::Struct(members) = inner {
            if members.is_empty() {
                return Err(TableError::EmptyStructDeclared { table: table.to_owned(), column: path.clone() });
            }
            validate_fields(table, members, path)?;
        }
        path.truncate(mark);
    }
    Ok(())
}

/// Appends a field name to a dotted column path and returns the length to truncate back to.
fn push_field(path: &mut String, name: &str) -> usize {
    let mark = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
    mark
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_writes_types_as_a_declaration_would() {
        let ty = ColumnType::Struct(vec![
            ("a".to_owned(), ColumnType::Int),
            ("b".to_owned(), ColumnType::List(Box::new(ColumnType::String))),
        ]);
        assert_eq!(ty.describe(), "struct{a: int, b: list<string>}");
        assert_eq!(ColumnType::List(Box::new(ColumnType::Float)).describe(), "list<float>");
    }

    #[test]
    fn declared_type_names_nest_lists_and_reject_the_rest() {
        let declaration = serde_json::json!({"x": "list< list<float> >"});
        let nested = ColumnType::List(Box::new(ColumnType::List(Box::new(ColumnType::Float))));
        let parsed = parse_declaration("t", &declaration).ok();
        assert_eq!(parsed, Some(vec![("x".to_owned(), nested)]));
        for bad in ["decimal", "list<>", "list<int", "Int", "list<list<>>", ""] {
            assert_eq!(parse_type_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_huge_list_type_name_is_too_deep_not_a_stack_overflow() {
        let name = format!("{}int{}", "list<".repeat(100_000), ">".repeat(100_000));
        let declaration = serde_json::json!({ "x": name });
        let error = parse_declaration("t", &declaration).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("nesting too deep in table `t`, column `x`; hint: use at most 32 levels of lists and structs")
        );
    }
}
