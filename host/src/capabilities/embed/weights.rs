//! Reading safetensors weights straight into arrays: each tensor is allocated once and read from
//! the file into place, for either backend to take over (candle wraps them, ONNX Runtime copies
//! them into its initializers). Reading the whole file and letting candle copy each tensor out of
//! it touched every byte twice (about 190 ms for all-MiniLM-L6-v2's 90 MB in the dev build,
//! against about 90 ms this way, most of it the first touch of fresh memory); memory-mapping
//! would need `unsafe`, which this crate keeps for guest memory.
//!
//! Handles the dtypes the model ships (`F32`, and `I64` for position ids); a file with others
//! is read by candle's own loader instead (`None`).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// The most header bytes believed: the model's is 11 KB.
const MAX_HEADER_BYTES: u64 = 16 << 20;

struct Entry {
    name: String,
    dtype: String,
    shape: Vec<usize>,
    start: u64,
    end: u64,
}

/// One tensor's values, row-major, with its shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub shape: Vec<usize>,
    pub values: Values,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    F32(Vec<f32>),
    I64(Vec<i64>),
}

impl Array {
    /// The values of an `F32` tensor of exactly `shape`, or an error naming the tensor.
    pub fn floats(&self, name: &str, shape: &[usize]) -> Result<&[f32], String> {
        match &self.values {
            Values::F32(values) if self.shape == shape => Ok(values),
            Values::F32(_) => Err(format!("tensor `{name}` has shape {:?}, expected {shape:?}", self.shape)),
            Values::I64(_) => Err(format!("tensor `{name}` holds integers, expected floats")),
        }
    }
}

/// The tensors of the safetensors file at `path`, or `None` when one has a dtype not read here.
pub fn read(path: &Path) -> Result<Option<HashMap<String, Array>>, String> {
    let mut file = std::fs::File::open(path).map_err(|error| error.to_string())?;
    let mut length = [0u8; 8];
    file.read_exact(&mut length).map_err(|error| format!("cannot read the header's length: {error}"))?;
    let header_bytes = u64::from_le_bytes(length);
    if header_bytes > MAX_HEADER_BYTES {
        return Err(format!("the header claims {header_bytes} bytes"));
    }
    let mut header = vec![0u8; header_bytes as usize];
    file.read_exact(&mut header).map_err(|error| format!("cannot read the header: {error}"))?;
    let header: HashMap<String, Value> =
        serde_json::from_slice(&header).map_err(|error| format!("the header is not valid JSON: {error}"))?;
    let mut entries = Vec::with_capacity(header.len());
    for (name, info) in header {
        if name == "__metadata__" {
            continue;
        }
        entries.push(entry(name, &info)?);
    }
    if entries.iter().any(|entry| !matches!(entry.dtype.as_str(), "F32" | "I64")) {
        return Ok(None);
    }
    entries.sort_by_key(|entry| entry.start);
    let data_start = 8 + header_bytes;
    let file_bytes = file.metadata().map_err(|error| error.to_string())?.len();
    let mut arrays = HashMap::with_capacity(entries.len());
    for entry in entries {
        // Checked before anything is allocated, so a damaged header cannot ask for any amount.
        let width = if entry.dtype == "F32" { 4 } else { 8 };
        let count = entry.shape.iter().try_fold(1usize, |count, &dim| count.checked_mul(dim));
        if count.and_then(|count| count.checked_mul(width)).map(|bytes| bytes as u64) != Some(entry.end - entry.start) {
            return Err(format!(
                "tensor `{}` has {} bytes for shape {:?}",
                entry.name,
                entry.end - entry.start,
                entry.shape
            ));
        }
        if data_start.checked_add(entry.end).is_none_or(|end| end > file_bytes) {
            return Err(format!("cannot read tensor `{}`: the file ends before it does", entry.name));
        }
        let count = count.unwrap_or_default();
        file.seek(SeekFrom::Start(data_start + entry.start)).map_err(|error| error.to_string())?;
        let short = |error: std::io::Error| format!("cannot read tensor `{}`: {error}", entry.name);
        let values = if entry.dtype == "F32" {
            let mut data = vec![0f32; count];
            file.read_exact(bytemuck::cast_slice_mut(&mut data)).map_err(short)?;
            data.iter_mut().for_each(|value| *value = f32::from_bits(u32::from_le(value.to_bits())));
            Values::F32(data)
        } else {
            let mut data = vec![0i64; count];
            file.read_exact(bytemuck::cast_slice_mut(&mut data)).map_err(short)?;
            data.iter_mut().for_each(|value| *value = i64::from_le(*value));
            Values::I64(data)
        };
        arrays.insert(entry.name, Array { shape: entry.shape, values });
    }
    Ok(Some(arrays))
}

/// `data`, a `rows × columns` row-major matrix, transposed into `out` (`columns × rows`); in
/// square tiles, so that both sides stay in cache.
pub fn transpose_into(data: &[f32], rows: usize, columns: usize, out: &mut [f32]) {
    const TILE: usize = 32;
    for row_start in (0..rows).step_by(TILE) {
        for column_start in (0..columns).step_by(TILE) {
            for row in row_start..(row_start + TILE).min(rows) {
                for column in column_start..(column_start + TILE).min(columns) {
                    out[column * rows + row] = data[row * columns + column];
                }
            }
        }
    }
}

fn entry(name: String, info: &Value) -> Result<Entry, String> {
    let bad = |what: &str| format!("tensor `{name}` has no valid {what}");
    let dtype = info["dtype"].as_str().ok_or_else(|| bad("dtype"))?.to_string();
    let shape = info["shape"]
        .as_array()
        .and_then(|dims| dims.iter().map(|dim| dim.as_u64().and_then(|dim| usize::try_from(dim).ok())).collect())
        .ok_or_else(|| bad("shape"))?;
    let offsets: Option<Vec<u64>> = info["data_offsets"].as_array().and_then(|o| o.iter().map(Value::as_u64).collect());
    let (start, end) = match offsets.as_deref() {
        Some(&[start, end]) if start <= end => (start, end),
        _ => return Err(bad("data_offsets")),
    };
    Ok(Entry { name, dtype, shape, start, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file with `tensors` (name, dtype, shape, little-endian bytes).
    fn file(tensors: &[(&str, &str, Vec<usize>, Vec<u8>)]) -> tempfile::NamedTempFile {
        let mut header = serde_json::Map::new();
        header.insert("__metadata__".into(), serde_json::json!({ "format": "pt" }));
        let mut data = Vec::new();
        for (name, dtype, shape, bytes) in tensors {
            let start = data.len();
            data.extend_from_slice(bytes);
            header.insert(
                (*name).into(),
                serde_json::json!({ "dtype": dtype, "shape": shape, "data_offsets": [start, data.len()] }),
            );
        }
        let header = serde_json::to_vec(&header).unwrap();
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(&header);
        out.extend_from_slice(&data);
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), out).unwrap();
        file
    }

    #[test]
    fn tensors_come_back_with_their_values_shapes_and_dtypes() {
        let floats: Vec<u8> = [1.5f32, -2.0, 0.25, 8.0, 3.0, 4.5].iter().flat_map(|v| v.to_le_bytes()).collect();
        let ids: Vec<u8> = [0i64, 1, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let path = file(&[("ids", "I64", vec![1, 3], ids), ("w", "F32", vec![2, 3], floats)]);
        let arrays = read(path.path()).unwrap().unwrap();
        assert_eq!(arrays["w"], Array { shape: vec![2, 3], values: Values::F32(vec![1.5, -2.0, 0.25, 8.0, 3.0, 4.5]) });
        assert_eq!(arrays["ids"], Array { shape: vec![1, 3], values: Values::I64(vec![0, 1, 2]) });
        assert_eq!(arrays["w"].floats("w", &[2, 3]).unwrap()[3], 8.0);
        assert!(arrays["w"].floats("w", &[3, 2]).unwrap_err().contains("has shape [2, 3], expected [3, 2]"));
    }

    #[test]
    fn a_transpose_swaps_rows_and_columns_across_tile_edges() {
        let (rows, columns) = (33, 70);
        let data: Vec<f32> = (0..rows * columns).map(|value| value as f32).collect();
        let mut out = vec![0.0; data.len()];
        transpose_into(&data, rows, columns, &mut out);
        for (row, column) in [(0, 0), (32, 69), (5, 40), (32, 0)] {
            assert_eq!(out[column * rows + row], data[row * columns + column]);
        }
    }

    #[test]
    fn other_dtypes_are_left_to_candle() {
        let path = file(&[("h", "F16", vec![2], vec![0, 60, 0, 60])]);
        assert!(read(path.path()).unwrap().is_none());
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_what_is_wrong() {
        let path = file(&[("w", "F32", vec![3], vec![0; 8])]);
        let error = read(path.path()).unwrap_err();
        assert!(error.contains("tensor `w` has 8 bytes for shape [3]"), "{error}");
        let cut = file(&[("w", "F32", vec![2], vec![0; 8])]);
        let bytes = std::fs::read(cut.path()).unwrap();
        std::fs::write(cut.path(), &bytes[..bytes.len() - 3]).unwrap();
        assert!(read(cut.path()).unwrap_err().contains("cannot read tensor `w`"));
        std::fs::write(cut.path(), u64::MAX.to_le_bytes()).unwrap();
        assert!(read(cut.path()).unwrap_err().contains("the header claims"));
    }
}
