//! The model's `config.json`: the shape of the BERT encoder a backend builds. Only the fields the
//! ONNX Runtime graph reads; a backend with its own reader (candle) reads the file itself.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    /// `gelu` (the exact, erf-based GELU) for all-MiniLM-L6-v2.
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    #[serde(default = "absolute")]
    pub position_embedding_type: String,
}

fn absolute() -> String {
    "absolute".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_is_read_from_a_sentence_transformers_config_and_the_rest_is_ignored() {
        let text = r#"{"architectures": ["BertModel"], "hidden_act": "gelu", "hidden_size": 384,
            "intermediate_size": 1536, "layer_norm_eps": 1e-12, "max_position_embeddings": 512,
            "num_attention_heads": 12, "num_hidden_layers": 6, "type_vocab_size": 2,
            "vocab_size": 30522, "hidden_dropout_prob": 0.1}"#;
        let config: BertConfig = serde_json::from_str(text).unwrap();
        assert_eq!((config.hidden_size, config.num_hidden_layers, config.vocab_size), (384, 6, 30522));
        assert_eq!((config.hidden_act.as_str(), config.position_embedding_type.as_str()), ("gelu", "absolute"));
    }

    #[test]
    fn a_config_without_the_encoders_shape_is_refused_naming_the_field() {
        let error = serde_json::from_str::<BertConfig>(r#"{"hidden_size": 384}"#).unwrap_err();
        assert!(error.to_string().contains("missing field"), "{error}");
    }
}
