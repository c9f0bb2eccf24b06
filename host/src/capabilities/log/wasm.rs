//! The guest import module `host:log`: operation `write` of an [`abi::LogRecord`], shown with
//! the guest's name.

use abi::{Failure, FailureKind, LogLevel, LogRecord};
use serde_json::Value;

use super::{Level, Log};

pub fn call(log: &dyn Log, guest: &str, op: &str, input: &[u8]) -> Result<Value, Failure> {
    if op != "write" {
        return Err(Failure::new(
            FailureKind::Unsupported,
            format!("`host:log` has no operation `{op}`; it has `write`"),
        ));
    }
    let record: LogRecord = super::super::decode(input)?;
    let level = match record.level {
        LogLevel::Debug => Level::Debug,
        LogLevel::Info => Level::Info,
        LogLevel::Warn => Level::Warn,
        LogLevel::Error => Level::Error,
    };
    log.write(level, &format!("[{guest}] {}", record.message));
    Ok(Value::Null)
}
