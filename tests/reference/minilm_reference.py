"""An independent reference for the local embedding model, all-MiniLM-L6-v2.

Written from the model's published description, sharing no code with the host: its own
WordPiece tokenizer (BERT's basic tokenizer, lowercasing, accent stripping, punctuation and CJK
splitting, greedy longest-match word pieces over vocab.txt), its own safetensors reader, and a
float64 numpy forward pass (6 layers, 12 heads, exact erf GELU), then mean pooling over the
attention mask and L2 normalisation, as sentence-transformers does. Texts are cut to 256 tokens.

Regenerate the fixture (needs numpy; the model folder comes from `host model`):
    python3 tests/reference/minilm_reference.py MODEL_DIR > fixtures/embeddings/minilm_reference.json
"""

import json
import math
import struct
import sys
import unicodedata
from pathlib import Path

import numpy as np

MAX_TOKENS = 256

SENTENCES = [
    "Hello world",
    "The cache TTL was raised from 300 to 600 seconds.",
    "We switched auth from JWT to iron-session in week 4.",
    "Redis keys use the format arclight:{entity}:{id}.",
    "The API server listens on port 4000.",
    "Transactional email moved from Resend to SendGrid because of deliverability.",
    "a",
    "",
    "   leading and trailing spaces   ",
    "ALL CAPS SENTENCE WITH NUMBERS 12345",
    "Café, naïve, résumé — accents are stripped before word pieces.",
    "Ünïcödé ströngs wïth dïäcrïtïcs everywhere",
    "東京は日本の首都です。",
    "Привет, как дела? Это тест на кириллице.",
    "emoji 🚀 and symbols ∑ ∫ √ are unknown to the vocabulary",
    "fn main() { println!(\"{}\", vec![1, 2, 3].iter().sum::<i32>()); }",
    "import { useState, useEffect } from 'react'; export default function App() {}",
    "SELECT run_id, avg(score) FROM 'runs/*/judgments.parquet' GROUP BY run_id;",
    "path/to/file_name.rs:42:7 error[E0599]: no method named `foo` found",
    "Tabs\tand\nnewlines\r\nare whitespace too.",
    " ".join(["The memory plugin retrieves facts about the project."] * 12),
    " ".join(f"token{i}" for i in range(400)),
    "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "Drizzle ORM with snake_case tables and UUID primary keys; BullMQ queues on ioredis; vitest in GitHub Actions.",
]


def is_whitespace(char):
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def is_control(char):
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


def is_punctuation(char):
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_cjk(code):
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def basic_tokens(text):
    cleaned = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD or is_control(char):
            continue
        if is_whitespace(char):
            cleaned.append(" ")
        elif is_cjk(code):
            cleaned.append(f" {char} ")
        else:
            cleaned.append(char)
    tokens = []
    for word in "".join(cleaned).split():
        word = unicodedata.normalize("NFD", word.lower())
        word = "".join(char for char in word if unicodedata.category(char) != "Mn")
        current = ""
        for char in word:
            if is_punctuation(char):
                if current:
                    tokens.append(current)
                    current = ""
                tokens.append(char)
            else:
                current += char
        if current:
            tokens.append(current)
    return tokens


def word_pieces(token, vocab):
    if len(token) > 100:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(token):
        end = len(token)
        found = None
        while start < end:
            piece = token[start:end] if start == 0 else "##" + token[start:end]
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return ["[UNK]"]
        pieces.append(found)
        start = end
    return pieces


def tokenize(text, vocab):
    pieces = [piece for token in basic_tokens(text) for piece in word_pieces(token, vocab)]
    pieces = ["[CLS]"] + pieces[: MAX_TOKENS - 2] + ["[SEP]"]
    return [vocab[piece] for piece in pieces]


def read_safetensors(path):
    data = Path(path).read_bytes()
    (header_size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_size])
    base = 8 + header_size
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue  # e.g. the I64 `embeddings.position_ids` buffer, which the forward pass does not need
        start, end = info["data_offsets"]
        array = np.frombuffer(data[base + start : base + end], dtype="<f4").reshape(info["shape"])
        tensors[name] = array.astype(np.float64)
    return tensors


def layer_norm(x, weight, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def forward(ids, w, config):
    heads = config["num_attention_heads"]
    hidden = config["hidden_size"]
    size = hidden // heads
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        linear = lambda v, name: v @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        q = linear(x, "attention.self.query").reshape(n, heads, size).transpose(1, 0, 2)
        k = linear(x, "attention.self.key").reshape(n, heads, size).transpose(1, 0, 2)
        v = linear(x, "attention.self.value").reshape(n, heads, size).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attention = scores / scores.sum(-1, keepdims=True)
        context = (attention @ v).transpose(1, 0, 2).reshape(n, hidden)
        x = layer_norm(x + linear(context, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        inner = gelu(linear(x, "intermediate.dense"))
        x = layer_norm(x + linear(inner, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    folder = Path(sys.argv[1])
    vocab = {line.rstrip("\n"): index for index, line in enumerate((folder / "vocab.txt").read_text(encoding="utf-8").splitlines())}
    config = json.loads((folder / "config.json").read_text())
    weights = read_safetensors(folder / "model.safetensors")
    cases = []
    for sentence in SENTENCES:
        ids = tokenize(sentence, vocab)
        vector = forward(ids, weights, config)
        cases.append({"text": sentence, "ids": ids, "vector": [round(float(v), 8) for v in vector]})
    json.dump({"model": "sentence-transformers/all-MiniLM-L6-v2", "max_tokens": MAX_TOKENS, "cases": cases}, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
