//! TEMPORARY STUB (replaced by the real schema module).
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnType { Int, Float, Bool, String, List(Box<ColumnType>), Struct(Vec<(String, ColumnType)>) }
pub type Columns = Vec<(String, ColumnType)>;
pub fn parse_declaration(_table: &str, _declaration: &serde_json::Value) -> Result<Columns, super::TableError> { Ok(Vec::new()) }
