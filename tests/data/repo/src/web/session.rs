use std::collections::HashMap;

/// A user session with expiring tokens.
pub struct Session {
    tokens: HashMap<String, u64>,
}

impl Session {
    /// Create an empty session store.
    pub fn new() -> Self {
        Session { tokens: HashMap::new() }
    }

    /// Refresh a token so it expires later.
    pub fn refresh_token(&mut self, token: &str, now: u64) {
        self.tokens.insert(token.to_string(), now + 3600);
    }
}
