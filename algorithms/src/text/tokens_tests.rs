use super::*;

#[test]
fn a_known_sentence_has_the_token_count_of_its_encoding() {
    // Counts checked against OpenAI's tiktoken: "hello world" is 2 tokens in both encodings.
    assert_eq!(token_count("hello world", "o200k_base"), Ok(2));
    assert_eq!(token_count("hello world", "cl100k_base"), Ok(2));
    assert_eq!(token_count("", "o200k_base"), Ok(0));
}

#[test]
fn a_memory_block_counts_fewer_tokens_than_characters_and_more_than_words() {
    let block = "<cortex_memories>\n- The cache TTL is 300 seconds for user profiles.\n- Keys look like user:{id}:profile.\n</cortex_memories>";
    let tokens = token_count(block, "o200k_base").unwrap_or_default();
    let words = block.split_whitespace().count();
    assert!(tokens > words && tokens < block.len() / 2, "{tokens} tokens for {words} words");
}

#[test]
fn special_token_text_is_counted_as_ordinary_text() {
    let counted = token_count("<|endoftext|>", "cl100k_base").unwrap_or_default();
    assert!(counted > 1, "{counted}");
}

#[test]
fn an_unknown_encoding_names_the_known_ones() {
    let error = token_count("x", "gpt2").map_err(|e| e.to_string());
    assert_eq!(error, Err("unknown encoding `gpt2`; the encodings are: o200k_base, cl100k_base".to_string()));
}
