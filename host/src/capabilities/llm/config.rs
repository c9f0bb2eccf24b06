//! Where models live and which keys open them, from the environment variables the original
//! benchmark used. Keys are held in [`ApiKey`], which never prints itself.

use super::{ChatRequest, DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, ErrorKind};

pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The original benchmark's answer and judge models.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_JUDGE_MODEL: &str = "gpt-4.1-mini";

/// A secret. `Debug` and `Display` show `***`, so a key cannot leak through a log or an error.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("ApiKey(***)")
    }
}

/// A server and the key for it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// The variable to set when the key is missing, for the error message.
    pub key_variable: &'static str,
}

/// An environment setting, trimmed; empty counts as unset, as in the original benchmark.
pub fn setting(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).map(|value| value.trim().to_string()).filter(|value| !value.is_empty())
}

/// Every endpoint and default model, resolved once per run.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// `LLM_BASE_URL` / `LLM_API_KEY`: the OpenAI-compatible server.
    pub llm: Endpoint,
    /// `JUDGE_BASE_URL` / `JUDGE_API_KEY`, each falling back to its `LLM_*` counterpart.
    pub judge: Endpoint,
    /// `ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY`.
    pub anthropic: Endpoint,
    /// `LLM_MODEL`, default `gpt-4o-mini`.
    pub default_model: String,
    /// `JUDGE_MODEL`, falling back to `LLM_MODEL`, default `gpt-4.1-mini`.
    pub judge_model: String,
}

impl LlmConfig {
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads settings through `lookup`; empty values count as unset, as in the original.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| setting(&lookup, name);
        let llm_base = get("LLM_BASE_URL").unwrap_or_else(|| OPENAI_BASE_URL.to_string());
        let llm_key = get("LLM_API_KEY");
        let llm_model = get("LLM_MODEL");
        LlmConfig {
            llm: Endpoint {
                base_url: llm_base.clone(),
                api_key: llm_key.clone().map(ApiKey),
                key_variable: "LLM_API_KEY",
            },
            judge: Endpoint {
                base_url: get("JUDGE_BASE_URL").unwrap_or(llm_base),
                api_key: get("JUDGE_API_KEY").or(llm_key).map(ApiKey),
                key_variable: "JUDGE_API_KEY (or LLM_API_KEY)",
            },
            anthropic: Endpoint {
                base_url: get("ANTHROPIC_BASE_URL").unwrap_or_else(|| ANTHROPIC_BASE_URL.to_string()),
                api_key: get("ANTHROPIC_API_KEY").map(ApiKey),
                key_variable: "ANTHROPIC_API_KEY",
            },
            default_model: llm_model.clone().unwrap_or_else(|| DEFAULT_MODEL.to_string()),
            judge_model: get("JUDGE_MODEL").or(llm_model).unwrap_or_else(|| DEFAULT_JUDGE_MODEL.to_string()),
        }
    }

    /// Fills every default, so that equal requests have equal fingerprints: the model becomes
    /// `provider:name`, temperature and max_tokens get the original benchmark's defaults.
    pub fn normalize(&self, mut request: ChatRequest) -> Result<ChatRequest, ErrorKind> {
        if request.messages.is_empty() {
            return Err(ErrorKind::InvalidRequest { message: "`messages` is empty".into() });
        }
        if let Some(message) =
            request.messages.iter().find(|m| !matches!(m.role.as_str(), "system" | "user" | "assistant"))
        {
            let message = format!("message role `{}` is not `system`, `user` or `assistant`", message.role);
            return Err(ErrorKind::InvalidRequest { message });
        }
        let is_judge = request.role.as_deref() == Some("judge");
        let model = match request.model.take() {
            Some(model) if !model.trim().is_empty() => model,
            _ if is_judge => self.judge_model.clone(),
            _ => self.default_model.clone(),
        };
        request.model = Some(match model.split_once(':') {
            Some(("openai" | "anthropic", name)) if !name.is_empty() => model,
            // Anything else is a model name of the OpenAI-compatible server, colons included
            // (OpenAI fine-tunes are named `ft:gpt-4o-mini:org::id`).
            _ => format!("openai:{model}"),
        });
        request.temperature = Some(request.temperature.unwrap_or(DEFAULT_TEMPERATURE));
        request.max_tokens = Some(request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS));
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::llm::Message;

    fn config(pairs: &[(&str, &str)]) -> LlmConfig {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        LlmConfig::from_lookup(move |name| pairs.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone()))
    }

    fn ask(model: Option<&str>, role: Option<&str>) -> ChatRequest {
        ChatRequest {
            model: model.map(str::to_string),
            role: role.map(str::to_string),
            messages: vec![Message { role: "user".into(), content: "hi".into() }],
            ..ChatRequest::default()
        }
    }

    #[test]
    fn judge_settings_fall_back_to_the_llm_ones_and_empty_values_count_as_unset() {
        let config = config(&[
            ("LLM_API_KEY", "k1"),
            ("LLM_BASE_URL", "http://llm"),
            ("JUDGE_BASE_URL", ""),
            ("LLM_MODEL", "m"),
        ]);
        assert_eq!(config.judge.base_url, "http://llm");
        assert_eq!(config.judge.api_key, Some(ApiKey::new("k1")));
        assert_eq!(config.judge_model, "m");
        let defaults = super::LlmConfig::from_lookup(|_| None);
        assert_eq!(defaults.llm.base_url, OPENAI_BASE_URL);
        assert_eq!(
            (defaults.default_model.as_str(), defaults.judge_model.as_str()),
            (DEFAULT_MODEL, DEFAULT_JUDGE_MODEL)
        );
    }

    #[test]
    fn normalising_names_the_provider_and_fills_the_original_defaults() {
        let config = config(&[]);
        let request = config.normalize(ask(None, None)).unwrap();
        assert_eq!(request.model.as_deref(), Some("openai:gpt-4o-mini"));
        assert_eq!((request.temperature, request.max_tokens), (Some(0.0), Some(1024)));
        assert_eq!(config.normalize(ask(None, Some("judge"))).unwrap().model.as_deref(), Some("openai:gpt-4.1-mini"));
        let anthropic = config.normalize(ask(Some("anthropic:claude-haiku-4-5"), None)).unwrap();
        assert_eq!(anthropic.provider_and_model(), ("anthropic", "claude-haiku-4-5"));
        let tuned = config.normalize(ask(Some("ft:gpt-4o-mini:org::abc"), None)).unwrap();
        assert_eq!(tuned.provider_and_model(), ("openai", "ft:gpt-4o-mini:org::abc"));
    }

    #[test]
    fn a_request_without_messages_or_with_an_odd_role_is_invalid() {
        let config = config(&[]);
        assert!(config.normalize(ChatRequest::default()).is_err());
        let mut odd = ask(None, None);
        odd.messages[0].role = "tool".into();
        assert!(config.normalize(odd).is_err());
    }

    #[test]
    fn keys_never_print() {
        let config = config(&[("LLM_API_KEY", "sk-very-secret")]);
        assert!(!format!("{config:?}").contains("sk-very-secret"));
    }
}
