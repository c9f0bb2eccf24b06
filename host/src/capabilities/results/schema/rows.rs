//! What rows imply about column types while none are fixed, and whether a row fits columns once
//! they are. It reports the table, column path and row of the first value that does not fit; it
//! must not change any state when it rejects a row, and does no I/O.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Number, Value};

use super::super::table::TableError;
use super::{ColumnType, Columns, MAX_DEPTH, describe_struct, push_field};

/// Where a value came from, for error messages.
#[derive(Clone, Copy)]
pub(crate) struct Site<'a> {
    pub(crate) table: &'a str,
    pub(crate) row: u64,
}

impl Site<'_> {
    fn conflict(self, path: &str, expected: String, found: &'static str) -> TableError {
        TableError::TypeConflict {
            table: self.table.to_owned(),
            column: path.to_owned(),
            row: self.row,
            expected,
            found,
        }
    }

    fn too_deep(self, path: &str) -> TableError {
        TableError::TooDeep { table: self.table.to_owned(), column: path.to_owned(), row: Some(self.row) }
    }
}

/// The short name of a JSON value's kind, as used in error messages.
pub(crate) fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "struct",
    }
}

/// Whether a number is stored as an int or a float; above `i64::MAX` it cannot be stored at all.
fn is_int(number: &Number, site: Site, path: &str) -> Result<bool, TableError> {
    match number.as_u64() {
        Some(value) if !number.is_i64() => Err(TableError::IntegerOutOfRange {
            table: site.table.to_owned(),
            column: path.to_owned(),
            row: site.row,
            value,
        }),
        _ => Ok(!number.is_f64()),
    }
}

/// A column type while rows are still being read; `Unknown` is what only nulls and empty lists
/// imply, and becomes a string if nothing more specific turns up.
#[derive(Debug, Clone, Default, PartialEq)]
enum Inferred {
    #[default]
    Unknown,
    Int,
    Float,
    Bool,
    String,
    List(Box<Inferred>),
    /// Never empty: an empty object only fits a struct whose fields are already known.
    Struct(BTreeMap<String, Inferred>),
}

impl Inferred {
    fn describe(&self) -> String {
        match self {
            Self::Unknown => "unknown".to_owned(),
            Self::List(item) => format!("list<{}>", item.describe()),
            Self::Struct(fields) => describe_struct(fields.iter().map(|(n, t)| (n, t.describe()))),
            scalar => scalar.fix().describe(),
        }
    }

    fn fix(&self) -> ColumnType {
        match self {
            Self::Unknown | Self::String => ColumnType::String,
            Self::Int => ColumnType::Int,
            Self::Float => ColumnType::Float,
            Self::Bool => ColumnType::Bool,
            Self::List(item) => ColumnType::List(Box::new(item.fix())),
            Self::Struct(fields) => ColumnType::Struct(fix_fields(fields)),
        }
    }

    /// Widens `self` to take `value`: null adds nothing, an int widens to float, lists and
    /// structs widen member by member; anything else is a conflict at `path`.
    fn absorb(&mut self, value: &Value, path: &mut String, depth: usize, site: Site) -> Result<(), TableError> {
        let found = match value {
            Value::Null => return Ok(()),
            Value::Bool(_) => Self::Bool,
            Value::Number(number) if is_int(number, site, path)? => Self::Int,
            Value::Number(_) => Self::Float,
            Value::String(_) => Self::String,
            Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
                return Err(site.too_deep(path));
            }
            Value::Array(items) => {
                if *self == Self::Unknown {
                    *self = Self::List(Box::default());
                }
                let Self::List(item) = self else {
                    return Err(site.conflict(path, self.describe(), "list"));
                };
                let mark = path.len();
                path.push_str("[]");
                items.iter().try_for_each(|v| item.absorb(v, path, depth + 1, site))?;
                path.truncate(mark);
                return Ok(());
            }
            Value::Object(object) => {
                if *self == Self::Unknown {
                    if object.is_empty() {
                        return Err(TableError::EmptyObject {
                            table: site.table.to_owned(),
                            column: path.clone(),
                            row: site.row,
                        });
                    }
                    *self = Self::Struct(BTreeMap::new());
                }
                let Self::Struct(fields) = self else {
                    return Err(site.conflict(path, self.describe(), "struct"));
                };
                return absorb_fields(fields, object, path, depth + 1, site);
            }
        };
        match (&*self, &found) {
            (Self::Unknown, _) | (Self::Int, Self::Float) => *self = found,
            (Self::Float, Self::Int) => {}
            (current, found) if current == found => {}
            (current, found) => {
                return Err(site.conflict(path, current.describe(), found.describe_static()));
            }
        }
        Ok(())
    }

    fn describe_static(&self) -> &'static str {
        match self {
            Self::Unknown => "null",
            Self::Int => "int",
            Self::Float => "float",
            Self::Bool => "bool",
            Self::String => "string",
            Self::List(_) => "list",
            Self::Struct(_) => "struct",
        }
    }
}

fn fix_fields(fields: &BTreeMap<String, Inferred>) -> Columns {
    fields.iter().map(|(name, ty)| (name.clone(), ty.fix())).collect()
}

fn absorb_fields(
    fields: &mut BTreeMap<String, Inferred>,
    object: &Map<String, Value>,
    path: &mut String,
    depth: usize,
    site: Site,
) -> Result<(), TableError> {
    for (name, value) in object {
        let mark = push_field(path, name);
        fields.entry(name.clone()).or_default().absorb(value, path, depth, site)?;
        path.truncate(mark);
    }
    Ok(())
}

/// The columns implied by the rows read so far, while no schema is fixed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Inference {
    columns: BTreeMap<String, Inferred>,
}

impl Inference {
    /// Widens the columns to take `row`, or leaves them as they were and names the first value
    /// that conflicts with the types unified from earlier rows, so a rejected row leaves no trace.
    pub(crate) fn absorb(&mut self, row: &Map<String, Value>, site: Site) -> Result<(), TableError> {
        // Cloning costs little: it happens for at most the first batch of rows.
        let mut widened = self.columns.clone();
        absorb_fields(&mut widened, row, &mut String::new(), 0, site)?;
        self.columns = widened;
        Ok(())
    }

    /// Columns in sorted name order; a column that held only nulls or empty lists is a string.
    pub(crate) fn columns(&self) -> Columns {
        fix_fields(&self.columns)
    }
}

/// The columns of a table once fixed, indexed for checking rows.
pub(crate) struct FixedColumns {
    columns: Columns,
    index: HashMap<String, usize>,
    declared: bool,
}

impl FixedColumns {
    pub(crate) fn new(columns: Columns, declared: bool) -> Self {
        let index = columns.iter().enumerate().map(|(i, (name, _))| (name.clone(), i)).collect();
        Self { columns, index, declared }
    }

    pub(crate) fn columns(&self) -> &Columns {
        &self.columns
    }

    /// Accepts `row` if every value has its column's type (an int also fits a float column).
    pub(crate) fn check(&self, row: &Map<String, Value>, site: Site) -> Result<(), TableError> {
        let lookup = |name: &str| self.index.get(name).and_then(|&i| self.columns.get(i));
        self.check_fields(lookup, row, &mut String::new(), site)
    }

    fn check_fields<'c>(
        &self,
        lookup: impl Fn(&str) -> Option<&'c (String, ColumnType)>,
        object: &Map<String, Value>,
        path: &mut String,
        site: Site,
    ) -> Result<(), TableError> {
        for (name, value) in object {
            let mark = push_field(path, name);
            let Some((_, ty)) = lookup(name) else {
                return Err(TableError::UnknownColumn {
                    table: site.table.to_owned(),
                    column: path.clone(),
                    row: site.row,
                    declared: self.declared,
                });
            };
            self.check_value(ty, value, path, site)?;
            path.truncate(mark);
        }
        Ok(())
    }

    // The recursion follows the type, whose depth is bounded, not the value.
    fn check_value(&self, ty: &ColumnType, value: &Value, path: &mut String, site: Site) -> Result<(), TableError> {
        match (ty, value) {
            (_, Value::Null) | (ColumnType::Bool, Value::Bool(_)) | (ColumnType::String, Value::String(_)) => Ok(()),
            (_, Value::Number(number)) => match (is_int(number, site, path)?, ty) {
                (true, ColumnType::Int | ColumnType::Float) | (false, ColumnType::Float) => Ok(()),
                (true, _) => Err(site.conflict(path, ty.describe(), "int")),
                (false, _) => Err(site.conflict(path, ty.describe(), "float")),
            },
            (ColumnType::List(item), Value::Array(items)) => {
                let mark = path.len();
                path.push_str("[]");
                items.iter().try_for_each(|v| self.check_value(item, v, path, site))?;
                path.truncate(mark);
                Ok(())
            }
            (ColumnType::Struct(fields), Value::Object(object)) => {
                let lookup = |name: &str| fields.iter().find(|(field, _)| field == name);
                self.check_fields(lookup, object, path, site)
            }
            (_, other) => Err(site.conflict(path, ty.describe(), value_kind(other))),
        }
    }
}
