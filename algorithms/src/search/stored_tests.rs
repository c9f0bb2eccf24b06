//! Specification of the corpus file: what goes in comes back, searches alike, and a damaged
//! file is an error that says what is wrong, never a panic or a silently different corpus.

use serde_json::json;

use super::*;

fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}

/// Three memories with vectors, an age on one, and an `imports` list to index.
fn sample() -> (Corpus, Vec<Map<String, Value>>) {
    let given = [
        ("m1", "revalidateTag after a mutation", [1.0, 0.0, 0.0], None, json!(["next/cache"])),
        ("m2", "cookies are async", [0.0, 2.0, 0.0], Some(3.5), json!(["next/headers"])),
        ("m3", "use cache with cacheLife", [0.6, 0.0, 0.8], None, json!(["next/cache", "react"])),
    ];
    let mut documents = Vec::new();
    let mut maps = Vec::new();
    for (id, text, vector, age_days, imports) in given {
        documents.push(Document {
            id: id.into(),
            text: text.into(),
            vector: Some(vector.to_vec()),
            age_days,
            meta: Map::new(),
        });
        maps.push(fields(json!({ "id": id, "text": text, "imports": imports, "rule": format!("rule of {id}") })));
    }
    (Corpus::new(documents).unwrap(), maps)
}

#[test]
fn a_saved_corpus_reads_back_with_its_ids_texts_ages_vectors_and_model() {
    let (corpus, maps) = sample();
    let bytes = encode(&corpus, &maps, Some("local"), &[], &[]).unwrap();
    let read = decode(bytes).unwrap();
    assert_eq!(read.model.as_deref(), Some("local"));
    assert_eq!(read.corpus.len(), 3);
    for doc in 0..3 {
        let (before, after) = (corpus.document(doc).unwrap(), read.corpus.document(doc).unwrap());
        assert_eq!((&before.id, &before.text, before.age_days), (&after.id, &after.text, after.age_days));
        assert_eq!(corpus.vector(doc), read.corpus.vector(doc), "vectors are stored normalised, bit for bit");
    }
    let query = [0.5, 0.1, 0.5];
    assert_eq!(corpus.similarities(&query).unwrap(), read.corpus.similarities(&query).unwrap());
}

#[test]
fn vectors_whose_norm_is_not_exactly_one_after_normalising_come_back_bit_for_bit() {
    // Normalising an already normalised vector can move its last bit; a read-back corpus must
    // score exactly as the one that was saved.
    let documents: Vec<Document> = (0..200)
        .map(|i| {
            let vector = (0..7).map(|d| ((i * 31 + d * 17) % 97) as f32 / 13.0 - 3.0).collect();
            Document { id: format!("d{i}"), text: "t".into(), vector: Some(vector), age_days: None, meta: Map::new() }
        })
        .collect();
    let maps = vec![Map::new(); documents.len()];
    let corpus = Corpus::new(documents).unwrap();
    let read = decode(encode(&corpus, &maps, None, &[], &[]).unwrap()).unwrap();
    for doc in 0..corpus.len() {
        assert_eq!(corpus.vector(doc), read.corpus.vector(doc), "document {doc}");
    }
}

#[test]
fn each_document_s_fields_are_decoded_on_their_own() {
    let (corpus, maps) = sample();
    let read = decode(encode(&corpus, &maps, None, &[], &[]).unwrap()).unwrap();
    assert_eq!(read.fields.len(), 3);
    assert_eq!(read.fields.get(1).unwrap().unwrap(), maps[1]);
    assert!(read.fields.get(3).is_none(), "past the end there is nothing");
}

#[test]
fn indexed_fields_list_each_value_s_documents_once_in_order() {
    let (corpus, maps) = sample();
    let read = decode(encode(&corpus, &maps, None, &["imports".into()], &[]).unwrap()).unwrap();
    let imports = &read.index["imports"];
    assert_eq!(imports["next/cache"], [0, 2]);
    assert_eq!(imports["next/headers"], [1]);
    assert_eq!(imports["react"], [2]);
    assert_eq!(imports.len(), 3);
}

#[test]
fn a_corpus_without_vectors_saves_and_reads_back_without_them() {
    let documents =
        vec![Document { id: "a".into(), text: "plain".into(), vector: None, age_days: None, meta: Map::new() }];
    let corpus = Corpus::new(documents).unwrap();
    let read = decode(encode(&corpus, &[fields(json!({ "text": "plain" }))], None, &[], &[]).unwrap()).unwrap();
    assert!(!read.corpus.has_vectors());
    assert_eq!(read.corpus.document(0).unwrap().text, "plain");
}

#[test]
fn a_file_of_another_kind_is_refused_by_its_first_line() {
    let error = decode(b"PAR1 not a corpus".to_vec()).unwrap_err();
    assert!(matches!(error, StoredError::Magic), "{error}");
    assert!(error.to_string().contains("hint: write one with `corpus.save(path)`"));
}

#[test]
fn a_file_cut_short_says_which_part_is_missing() {
    let (corpus, maps) = sample();
    let bytes = encode(&corpus, &maps, None, &[], &[]).unwrap();
    let error = decode(bytes[..bytes.len() - 5].to_vec()).unwrap_err();
    assert_eq!(error.to_string(), "it ends early, in the vectors");
    let header_only = bytes.iter().position(|&b| b == b'\n').unwrap() + 10;
    assert_eq!(decode(bytes[..header_only].to_vec()).unwrap_err().to_string(), "it ends early, in the header");
}

#[test]
fn parts_that_disagree_are_an_error_not_a_different_corpus() {
    let (corpus, maps) = sample();
    let text = String::from_utf8_lossy(&encode(&corpus, &maps, None, &["imports".into()], &[]).unwrap()).into_owned();
    // One id fewer than texts.
    let fewer = text.replacen("\"ids\":[\"m1\",", "\"ids\":[", 1);
    assert!(decode(fewer.into_bytes()).unwrap_err().to_string().contains("2 ids, 3 texts"));
    // An index entry past the end.
    let past = text.replacen("\"react\":[2]", "\"react\":[7]", 1);
    assert!(decode(past.into_bytes()).unwrap_err().to_string().contains("lists document 7 for `react`, of 3"));
    // Extra bytes after the vectors.
    let mut longer = encode(&corpus, &maps, None, &[], &[]).unwrap();
    longer.extend_from_slice(&[0, 0, 0, 0]);
    assert!(decode(longer).unwrap_err().to_string().contains("bytes after the fields for 3 × 3 dimensions of vectors"));
}

#[test]
fn a_kept_keyword_index_searches_exactly_as_one_built_from_the_texts() {
    let (corpus, maps) = sample();
    let bytes = encode(&corpus, &maps, None, &[], &[Tokenizer::Benchmark, Tokenizer::Unicode61]).unwrap();
    assert!(bytes.starts_with(b"host-corpus 2\n"), "a file with keyword indexes is version 2");
    let read = decode(bytes).unwrap();
    for tokenizer in [Tokenizer::Benchmark, Tokenizer::Unicode61] {
        let (kept, built) = (read.corpus.bm25(tokenizer), corpus.bm25(tokenizer));
        assert_eq!(kept.tokenizer(), tokenizer);
        for text in ["cache revalidateTag", "cookies async", "use cache with cacheLife", "nothing here"] {
            let query = crate::search::bm25::Bm25Query::from_text(text, tokenizer);
            for params in [crate::search::bm25::Bm25Params::benchmark(), Default::default()] {
                assert_eq!(kept.search(&query, &params, None).unwrap(), built.search(&query, &params, None).unwrap());
            }
        }
    }
}

#[test]
fn a_file_without_keyword_indexes_stays_version_1() {
    let (corpus, maps) = sample();
    let bytes = encode(&corpus, &maps, None, &[], &[]).unwrap();
    assert!(bytes.starts_with(b"host-corpus 1\n"));
    assert!(!String::from_utf8_lossy(&bytes).contains("\"keyword\""));
}

#[test]
fn a_keyword_index_that_disagrees_with_its_header_is_an_error() {
    let (corpus, maps) = sample();
    let bytes = encode(&corpus, &maps, None, &[], &[Tokenizer::Benchmark]).unwrap();
    let error = decode(bytes[..bytes.len() - 2].to_vec()).unwrap_err();
    assert_eq!(error.to_string(), "it ends early, in a keyword index");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let more_terms = text.replacen("\"terms\":", "\"terms\":1", 1);
    assert!(decode(more_terms.into_bytes()).unwrap_err().to_string().contains("terms, not 1"));
    // A version 1 file may not claim an index.
    let old = text.replacen("host-corpus 2", "host-corpus 1", 1);
    assert!(decode(old.into_bytes()).unwrap_err().to_string().contains("keyword indexes need `host-corpus 2`"));
}

#[test]
fn arbitrary_bytes_never_panic() {
    let (corpus, maps) = sample();
    let bytes = encode(&corpus, &maps, Some("local"), &["imports".into()], &[Tokenizer::Benchmark]).unwrap();
    // Every prefix, and every single-byte change, decodes or fails cleanly.
    for end in 0..bytes.len() {
        let _ = decode(bytes[..end].to_vec());
    }
    for at in 0..bytes.len() {
        let mut changed = bytes.clone();
        changed[at] ^= 0x5a;
        let _ = decode(changed);
    }
}
