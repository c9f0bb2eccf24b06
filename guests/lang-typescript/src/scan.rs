pub fn language(_path: &str) -> &'static str {
    "go"
}

pub fn imports(_content: &str) -> Vec<String> {
    Vec::new()
}
