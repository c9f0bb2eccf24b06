//! What calls cost: USD per million prompt and completion tokens, per `provider:model`.
//!
//! The built-in table (`pricing.toml`) holds list prices as published by the providers when it
//! was written; `--llm-pricing FILE` replaces it. A model matches its longest listed prefix, so
//! dated snapshots (`gpt-4o-mini-2024-07-18`) find their family. Unknown models cost `null`.

use std::collections::BTreeMap;

use serde::Deserialize;

const BUILT_IN: &str = include_str!("pricing.toml");

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

#[derive(Debug, Clone, Default)]
pub struct Pricing {
    prices: BTreeMap<String, Price>,
}

impl Pricing {
    pub fn built_in() -> Self {
        // The built-in table is checked by a unit test, so parsing cannot fail at run time.
        Self::parse(BUILT_IN).unwrap_or_default()
    }

    /// A table of `["provider:model"] input_per_million = .., output_per_million = ..`.
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        Ok(Pricing { prices: toml::from_str(text)? })
    }

    /// The cost of a call, if the model is priced.
    pub fn cost(&self, provider: &str, model: &str, prompt_tokens: u64, completion_tokens: u64) -> Option<f64> {
        let name = format!("{provider}:{model}");
        let price = self
            .prices
            .iter()
            .filter(|(listed, _)| name.starts_with(listed.as_str()))
            .max_by_key(|(listed, _)| listed.len())
            .map(|(_, price)| price)?;
        Some(
            (prompt_tokens as f64 * price.input_per_million + completion_tokens as f64 * price.output_per_million)
                / 1e6,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_parses() {
        assert!(Pricing::parse(BUILT_IN).is_ok());
    }

    #[test]
    fn a_dated_snapshot_is_priced_as_its_family_and_the_longest_prefix_wins() {
        let pricing = Pricing::built_in();
        let mini = pricing.cost("openai", "gpt-4o-mini-2024-07-18", 1_000_000, 1_000_000).unwrap();
        assert!((mini - 0.75).abs() < 1e-9, "gpt-4o-mini is 0.15 + 0.60 per million, got {mini}");
        let full = pricing.cost("openai", "gpt-4o", 1_000_000, 0).unwrap();
        assert!((full - 2.5).abs() < 1e-9);
        assert_eq!(pricing.cost("openai", "unheard-of", 10, 10), None);
    }
}
