//! TEMPORARY STUB (replaced by the real table writer).
use super::schema::Columns;
#[derive(Debug)]
pub struct TableWriter { name: String, rows: u64, dir: std::path::PathBuf }
#[derive(Debug, Clone)]
pub struct TableSummary { pub name: String, pub path: std::path::PathBuf, pub rows: u64, pub columns: Vec<(String, String)> }
#[derive(Debug, thiserror::Error)]
pub enum TableError { #[error("stub")] Stub }
impl TableWriter {
    pub fn new(dir: &std::path::Path, name: &str, _run_id: &str, _declared: Option<Columns>) -> Result<Self, TableError> { Ok(TableWriter { name: name.into(), rows: 0, dir: dir.into() }) }
    pub fn append(&mut self, _row: serde_json::Value) -> Result<(), TableError> { self.rows += 1; Ok(()) }
    pub fn rows(&self) -> u64 { self.rows }
    pub fn name(&self) -> &str { &self.name }
    pub fn finish(self) -> Result<TableSummary, TableError> { Ok(TableSummary { path: self.dir.join(&self.name), name: self.name, rows: self.rows, columns: vec![] }) }
}
