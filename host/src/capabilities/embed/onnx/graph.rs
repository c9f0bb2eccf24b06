//! A BERT encoder (all-MiniLM-L6-v2's shape, read from its config.json) as an ONNX Runtime
//! graph, built in memory from the safetensors weights through the Model Editor API: no ONNX
//! file, no PyTorch, no exporter.
//!
//! The nodes are ONNX Runtime's fused transformer operators (domain `com.microsoft`), the ones
//! its optimiser makes of an exported BERT:
//!
//! - `EmbedLayerNormalization`: word + position (+ token type 0, folded into the position table)
//!   embeddings, layer norm, and each row's length from the mask;
//! - per layer, `Attention` (Q, K and V in one packed matrix, the lengths as its mask),
//!   `MatMul` + `SkipLayerNormalization` (output projection, bias, residual, layer norm),
//!   `MatMul` + `BiasGelu` (exact, erf-based GELU, as `hidden_act: "gelu"` means),
//!   `MatMul` + `SkipLayerNormalization`.
//!
//! Inputs `input_ids` and `attention_mask`: int32, `[batch, sequence]`, right-padded. Output
//! `hidden`: f32 `[batch, sequence, hidden_size]`, the last layer's states.

use std::collections::HashMap;

use ort::editor::{Graph, Model, Node, ONNX_DOMAIN, Opset};
use ort::memory::Allocator;
use ort::operator::Attribute;
use ort::value::{Outlet, Shape, SymbolicDimensions, Tensor, TensorElementType, ValueType};

use super::super::config::BertConfig;
use super::super::weights::{Array, transpose_into};
use super::text;

const CONTRIB: &str = "com.microsoft";
pub const INPUT_IDS: &str = "input_ids";
pub const MASK: &str = "attention_mask";
pub const OUTPUT: &str = "hidden";

/// The encoder of `config` with the weights in `arrays`, ready to become a session.
pub fn encoder(config: &BertConfig, arrays: &HashMap<String, Array>) -> Result<Model, String> {
    if config.hidden_act != "gelu" {
        return Err(format!("the graph supports `hidden_act: \"gelu\"` only, not {:?}", config.hidden_act));
    }
    if config.position_embedding_type != "absolute" {
        return Err("the graph supports absolute position embeddings only".into());
    }
    if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
        return Err(format!(
            "hidden_size {} is not a multiple of num_attention_heads {}",
            config.hidden_size, config.num_attention_heads
        ));
    }
    let mut builder = Builder { graph: Graph::new().map_err(text)?, arrays, nodes: 0 };
    builder.graph.set_inputs([integers(INPUT_IDS), integers(MASK)]).map_err(text)?;
    builder.graph.set_outputs([states(OUTPUT)]).map_err(text)?;
    let mut hidden = builder.embeddings(config)?;
    for layer in 0..config.num_hidden_layers {
        hidden = builder.layer(config, layer, &hidden)?;
    }
    builder.node("Identity", ONNX_DOMAIN, &[&hidden], OUTPUT, vec![])?;
    let mut model = Model::new([Opset::new(ONNX_DOMAIN, 17).map_err(text)?, Opset::new(CONTRIB, 1).map_err(text)?])
        .map_err(text)?;
    model.set_graph(builder.graph).map_err(text)?;
    Ok(model)
}

fn integers(name: &str) -> Outlet {
    Outlet::new(
        name,
        ValueType::Tensor {
            ty: TensorElementType::Int32,
            shape: Shape::new([-1, -1]),
            dimension_symbols: SymbolicDimensions::new(["batch".to_string(), "sequence".to_string()]),
        },
    )
}

fn states(name: &str) -> Outlet {
    Outlet::new(
        name,
        ValueType::Tensor {
            ty: TensorElementType::Float32,
            shape: Shape::new([-1, -1, -1]),
            dimension_symbols: SymbolicDimensions::new(["batch".into(), "sequence".into(), "hidden".into()]),
        },
    )
}

struct Builder<'a> {
    graph: Graph,
    arrays: &'a HashMap<String, Array>,
    nodes: usize,
}

impl<'a> Builder<'a> {
    /// Adds a node with one output, named after the node; returns that name.
    fn node(
        &mut self,
        op: &str,
        domain: &str,
        inputs: &[&str],
        output: &str,
        attributes: Vec<Attribute>,
    ) -> Result<String, String> {
        self.nodes += 1;
        let name = format!("{op}_{}", self.nodes);
        let node = Node::new(op, domain, &name, inputs, [output], attributes).map_err(text)?;
        self.graph.add_node(node).map_err(text)?;
        Ok(output.to_string())
    }

    /// The values of the weight `name`, checked to have `shape` (borrowed from the weights, not
    /// from the builder, so an initializer can be filled from them).
    fn array(&self, name: &str, shape: &[usize]) -> Result<&'a [f32], String> {
        let arrays: &'a HashMap<String, Array> = self.arrays;
        arrays.get(name).ok_or_else(|| format!("the weights lack tensor `{name}`"))?.floats(name, shape)
    }

    /// Adds an initializer of `shape` whose values `fill` writes; returns its name.
    fn initializer(&mut self, name: &str, shape: &[usize], fill: impl FnOnce(&mut [f32])) -> Result<String, String> {
        let mut tensor = Tensor::<f32>::new(&Allocator::default(), shape).map_err(text)?;
        fill(tensor.extract_tensor_mut().1);
        // As external data the session uses this tensor's memory in place instead of copying it
        // (it takes the tensor and frees it with the session; valgrind saw no read of freed
        // memory and nothing left at exit): loading takes 0.24 s instead of 0.32, and 95 MB less.
        // ONNX Runtime refuses external data under 128 bytes.
        let external = shape.iter().product::<usize>() * std::mem::size_of::<f32>() >= 128;
        self.graph.add_initializer(name, tensor, external).map_err(text)?;
        Ok(name.to_string())
    }

    /// A copy of the weight `name` as an initializer.
    fn copied(&mut self, name: &str, shape: &[usize]) -> Result<String, String> {
        let values = self.array(name, shape)?;
        self.initializer(name, shape, |out| out.copy_from_slice(values))
    }

    /// A linear layer's `[out, in]` weight as the `[in, out]` matrix `MatMul` multiplies by.
    fn transposed(&mut self, name: &str, out: usize, input: usize) -> Result<String, String> {
        let values = self.array(name, &[out, input])?;
        self.initializer(&format!("{name}.t"), &[input, out], |stored| transpose_into(values, out, input, stored))
    }

    fn embeddings(&mut self, config: &BertConfig) -> Result<String, String> {
        let hidden = config.hidden_size;
        let positions = config.max_position_embeddings;
        let words = self.copied("embeddings.word_embeddings.weight", &[config.vocab_size, hidden])?;
        // Every token has type 0, so its type embedding is added to each position's.
        let types = self.array("embeddings.token_type_embeddings.weight", &[config.type_vocab_size.max(1), hidden])?;
        let type_zero = &types[..hidden];
        let position_table = self.array("embeddings.position_embeddings.weight", &[positions, hidden])?;
        let position = self.initializer("embeddings.position_and_type", &[positions, hidden], |out| {
            for (out, table) in out.chunks_exact_mut(hidden).zip(position_table.chunks_exact(hidden)) {
                out.iter_mut().zip(table).zip(type_zero).for_each(|((out, p), t)| *out = p + t);
            }
        })?;
        let gamma = self.copied("embeddings.LayerNorm.weight", &[hidden])?;
        let beta = self.copied("embeddings.LayerNorm.bias", &[hidden])?;
        let inputs = [INPUT_IDS, "", &words, &position, "", &gamma, &beta, MASK];
        let epsilon = Attribute::new("epsilon", config.layer_norm_eps as f32).map_err(text)?;
        let node =
            Node::new("EmbedLayerNormalization", CONTRIB, "embeddings", inputs, ["embedded", "lengths"], [epsilon])
                .map_err(text)?;
        self.graph.add_node(node).map_err(text)?;
        Ok("embedded".into())
    }

    fn layer(&mut self, config: &BertConfig, layer: usize, input: &str) -> Result<String, String> {
        let (hidden, inner) = (config.hidden_size, config.intermediate_size);
        let prefix = format!("encoder.layer.{layer}");
        let epsilon = || Attribute::new("epsilon", config.layer_norm_eps as f32).map_err(text);

        // Q, K and V side by side: row i of the packed matrix is input feature i's weights.
        let mut packed_weights = Vec::with_capacity(3);
        let mut packed_bias = Vec::with_capacity(3 * hidden);
        for part in ["query", "key", "value"] {
            let name = format!("{prefix}.attention.self.{part}");
            let weight = self.array(&format!("{name}.weight"), &[hidden, hidden])?;
            let mut transposed = vec![0f32; hidden * hidden];
            transpose_into(weight, hidden, hidden, &mut transposed);
            packed_weights.push(transposed);
            packed_bias.extend_from_slice(self.array(&format!("{name}.bias"), &[hidden])?);
        }
        let qkv = self.initializer(&format!("{prefix}.attention.qkv.weight"), &[hidden, 3 * hidden], |out| {
            for (row, out) in out.chunks_exact_mut(3 * hidden).enumerate() {
                for (part, weights) in packed_weights.iter().enumerate() {
                    out[part * hidden..(part + 1) * hidden].copy_from_slice(&weights[row * hidden..(row + 1) * hidden]);
                }
            }
        })?;
        let qkv_bias = self.initializer(&format!("{prefix}.attention.qkv.bias"), &[3 * hidden], |out| {
            out.copy_from_slice(&packed_bias)
        })?;
        let heads = Attribute::new("num_heads", config.num_attention_heads as i64).map_err(text)?;
        let attended = self.node(
            "Attention",
            CONTRIB,
            &[input, &qkv, &qkv_bias, "lengths"],
            &format!("{prefix}.attended"),
            vec![heads],
        )?;

        let projection = self.transposed(&format!("{prefix}.attention.output.dense.weight"), hidden, hidden)?;
        let projected =
            self.node("MatMul", ONNX_DOMAIN, &[&attended, &projection], &format!("{prefix}.projected"), vec![])?;
        let bias = self.copied(&format!("{prefix}.attention.output.dense.bias"), &[hidden])?;
        let gamma = self.copied(&format!("{prefix}.attention.output.LayerNorm.weight"), &[hidden])?;
        let beta = self.copied(&format!("{prefix}.attention.output.LayerNorm.bias"), &[hidden])?;
        let attention_out = self.node(
            "SkipLayerNormalization",
            CONTRIB,
            &[&projected, input, &gamma, &beta, &bias],
            &format!("{prefix}.attention_out"),
            vec![epsilon()?],
        )?;

        let up = self.transposed(&format!("{prefix}.intermediate.dense.weight"), inner, hidden)?;
        let widened = self.node("MatMul", ONNX_DOMAIN, &[&attention_out, &up], &format!("{prefix}.widened"), vec![])?;
        let up_bias = self.copied(&format!("{prefix}.intermediate.dense.bias"), &[inner])?;
        let activated =
            self.node("BiasGelu", CONTRIB, &[&widened, &up_bias], &format!("{prefix}.activated"), vec![])?;
        let down = self.transposed(&format!("{prefix}.output.dense.weight"), hidden, inner)?;
        let narrowed = self.node("MatMul", ONNX_DOMAIN, &[&activated, &down], &format!("{prefix}.narrowed"), vec![])?;
        let down_bias = self.copied(&format!("{prefix}.output.dense.bias"), &[hidden])?;
        let gamma = self.copied(&format!("{prefix}.output.LayerNorm.weight"), &[hidden])?;
        let beta = self.copied(&format!("{prefix}.output.LayerNorm.bias"), &[hidden])?;
        self.node(
            "SkipLayerNormalization",
            CONTRIB,
            &[&narrowed, &attention_out, &gamma, &beta, &down_bias],
            &format!("{prefix}.out"),
            vec![epsilon()?],
        )
    }
}
