//! The transformer on candle (pure Rust), in builds with the `candle` feature: the fallback
//! backend where ONNX Runtime's library cannot be loaded, and a second implementation the
//! ONNX Runtime graph can be checked against.

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use super::EmbedError;
use super::local::{Padded, Transformer, Weights, load_error};
use super::weights::{Array, Values, transpose_into};

pub struct CandleTransformer {
    model: BertModel,
    device: Device,
}

fn compute(error: candle_core::Error) -> EmbedError {
    EmbedError::Compute { message: error.to_string() }
}

impl CandleTransformer {
    pub fn new(weights: &Weights) -> Result<Self, EmbedError> {
        let device = Device::Cpu;
        let path = weights.path;
        let builder = match &weights.arrays {
            Some(arrays) => VarBuilder::from_tensors(
                tensors(arrays, &device).map_err(|e| load_error(path, e))?,
                DType::F32,
                &device,
            ),
            None => {
                let bytes = std::fs::read(path).map_err(|e| load_error(path, e))?;
                VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device).map_err(|e| load_error(path, e))?
            }
        };
        // candle reads the whole config.json beside the weights with its own type.
        let config_path = path.with_file_name("config.json");
        let config_text = std::fs::read_to_string(&config_path).map_err(|e| load_error(&config_path, e))?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| load_error(&config_path, e))?;
        let model = BertModel::load(builder, &config).map_err(|e| load_error(path, e))?;
        Ok(CandleTransformer { model, device })
    }
}

/// The arrays as candle tensors. A linear layer's weight (2-D, outside the embedding tables) is
/// stored transposed and handed out as a transposed view: the same shape and values, in the
/// layout its matrix product reads without repacking (gemm copied every weight matrix on every
/// forward pass otherwise, which made embedding one short text cost about as much as sixteen).
fn tensors(arrays: &HashMap<String, Array>, device: &Device) -> candle_core::Result<HashMap<String, Tensor>> {
    let linear = |name: &str| name.ends_with(".weight") && !name.contains("embeddings");
    arrays
        .iter()
        .map(|(name, array)| {
            let tensor = match (&array.values, &array.shape[..]) {
                (Values::F32(values), &[rows, columns]) if linear(name) => {
                    let mut stored = vec![0f32; values.len()];
                    transpose_into(values, rows, columns, &mut stored);
                    Tensor::from_vec(stored, (columns, rows), device).and_then(|stored| stored.t())
                }
                (Values::F32(values), shape) => Tensor::from_slice(values, shape, device),
                (Values::I64(values), shape) => Tensor::from_slice(values, shape, device),
            };
            tensor.map(|tensor| (name.clone(), tensor))
        })
        .collect()
}

impl Transformer for CandleTransformer {
    fn hidden_states(&self, batch: &Padded) -> Result<Vec<f32>, EmbedError> {
        let shape = (batch.members, batch.longest);
        let input = Tensor::from_slice(&batch.ids, shape, &self.device).map_err(compute)?;
        let mask = Tensor::from_slice(&batch.mask, shape, &self.device).map_err(compute)?;
        let token_types = input.zeros_like().map_err(compute)?;
        let hidden = self.model.forward(&input, &token_types, Some(&mask)).map_err(compute)?;
        hidden.flatten_all().and_then(|flat| flat.to_vec1::<f32>()).map_err(compute)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linear_weight_keeps_its_shape_and_values_with_its_transpose_s_layout() {
        let arrays = HashMap::from([(
            "layer.weight".to_string(),
            Array { shape: vec![2, 3], values: Values::F32(vec![1.5, -2.0, 0.25, 8.0, 3.0, 4.5]) },
        )]);
        let tensors = tensors(&arrays, &Device::Cpu).unwrap();
        let weight = &tensors["layer.weight"];
        assert_eq!(weight.dims(), [2, 3]);
        assert_eq!(weight.to_vec2::<f32>().unwrap(), [[1.5, -2.0, 0.25], [8.0, 3.0, 4.5]]);
        assert!(!weight.is_contiguous() && weight.t().unwrap().is_contiguous(), "stored as its transpose");
    }
}
