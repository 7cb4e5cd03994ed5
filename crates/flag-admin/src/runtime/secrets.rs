//! Secrets: generating them, storing only verifiers, comparing in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// `bytes` random bytes from the operating system, as lower-case hex.
pub fn random_hex(bytes: usize) -> Result<String, getrandom::Error> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer)?;
    Ok(hex::encode(buffer))
}

/// The verifier stored for a secret: hex SHA-256.
pub fn verifier(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Whether `secret` matches the stored `verifier`, compared in constant time.
pub fn matches(secret: &str, verifier_hex: &str) -> bool {
    verifier(secret).as_bytes().ct_eq(verifier_hex.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifiers_match_only_their_secret() -> Result<(), getrandom::Error> {
        let secret = random_hex(28)?;
        assert_eq!(secret.len(), 56);
        let stored = verifier(&secret);
        assert_ne!(stored, secret);
        assert!(matches(&secret, &stored));
        assert!(!matches(&format!("{secret}x"), &stored));
        assert!(!matches(&secret, &stored[1..]));
        Ok(())
    }
}
