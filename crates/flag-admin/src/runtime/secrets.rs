//! Secrets: generating them, storing only verifiers, comparing in constant time; and sealing
//! the few an operator asks to keep readable under a key of their own ([`SealingKey`]).

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
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

/// What a sealed secret begins with: the format's version.
const SEALED_PREFIX: &str = "sealed1";

/// The operator's key for the secrets kept readable (`HALYARD_SECRETS_KEY` or
/// `HALYARD_SECRETS_KEY_FILE`): 32 bytes, given as 64 hex digits. It lives only in the process,
/// never in the database; each sealed value names the key it was sealed under by the key's
/// [`id`](Self::id), so a wrong key is told apart from a damaged value.
#[derive(Clone)]
pub struct SealingKey {
    cipher: XChaCha20Poly1305,
    id: String,
}

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SealingKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Why a key or a sealed value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealingError {
    /// The key is not 64 hex digits.
    #[error("the secrets key must be 32 bytes written as 64 hex digits (openssl rand -hex 32 makes one)")]
    MalformedKey,
    /// The value was sealed under another key.
    #[error("the secret was sealed under the key {sealed_under}, not under the key given ({given})")]
    OtherKey {
        /// The id of the key it was sealed under.
        sealed_under: String,
        /// The id of the key given.
        given: String,
    },
    /// The value is not a sealed secret, or it was changed.
    #[error("the sealed secret is damaged")]
    Damaged,
    /// The operating system gave no random nonce.
    #[error("no random nonce: {0}")]
    Random(String),
}

impl SealingKey {
    /// The key written as 64 hex digits (surrounding white space ignored, as a key file ends
    /// with a newline).
    pub fn from_hex(text: &str) -> Result<Self, SealingError> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text.trim(), &mut bytes).map_err(|_| SealingError::MalformedKey)?;
        let id = hex::encode(&Sha256::digest([b"halyard sealing key ".as_slice(), &bytes].concat())[..8]);
        Ok(Self {
            cipher: XChaCha20Poly1305::new(&bytes.into()),
            id,
        })
    }

    /// The key's public name: 16 hex digits of a digest of it, which sealed values carry.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// `secret` sealed under this key, with a fresh random nonce:
    /// `sealed1:<key id>:<nonce>:<ciphertext>`, in hex. The key id is bound into the seal.
    pub fn seal(&self, secret: &str) -> Result<String, SealingError> {
        let mut nonce = [0u8; 24];
        getrandom::fill(&mut nonce).map_err(|error| SealingError::Random(error.to_string()))?;
        let sealed = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                chacha20poly1305::aead::Payload {
                    msg: secret.as_bytes(),
                    aad: self.id.as_bytes(),
                },
            )
            .map_err(|_| SealingError::Damaged)?;
        Ok(format!(
            "{SEALED_PREFIX}:{}:{}:{}",
            self.id,
            hex::encode(nonce),
            hex::encode(sealed)
        ))
    }

    /// The secret `sealed` holds, when this key sealed it and it is intact.
    pub fn open(&self, sealed: &str) -> Result<String, SealingError> {
        let (key_id, nonce, sealed_bytes) = parts(sealed).ok_or(SealingError::Damaged)?;
        if key_id != self.id {
            return Err(SealingError::OtherKey {
                sealed_under: key_id.to_owned(),
                given: self.id.clone(),
            });
        }
        let opened = self
            .cipher
            .decrypt(
                XNonce::from_slice(&nonce),
                chacha20poly1305::aead::Payload {
                    msg: &sealed_bytes,
                    aad: self.id.as_bytes(),
                },
            )
            .map_err(|_| SealingError::Damaged)?;
        String::from_utf8(opened).map_err(|_| SealingError::Damaged)
    }
}

/// The id of the key a sealed value names, when it reads as one.
pub fn sealed_under(sealed: &str) -> Option<&str> {
    parts(sealed).map(|(key_id, _, _)| key_id)
}

/// A sealed value's key id, nonce and ciphertext.
fn parts(sealed: &str) -> Option<(&str, [u8; 24], Vec<u8>)> {
    let mut fields = sealed.split(':');
    if fields.next() != Some(SEALED_PREFIX) {
        return None;
    }
    let key_id = fields.next()?;
    let mut nonce = [0u8; 24];
    hex::decode_to_slice(fields.next()?, &mut nonce).ok()?;
    let sealed = hex::decode(fields.next()?).ok()?;
    fields.next().is_none().then_some((key_id, nonce, sealed))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const OTHER: &str = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    #[test]
    fn sealed_secrets_open_only_under_their_key_and_intact() -> Result<(), SealingError> {
        let key = SealingKey::from_hex(&format!("{KEY}\n"))?;
        let sealed = key.seal("default:development.xyz")?;
        // Sealed text is hex, so letters past `f` would show the secret through.
        assert!(
            !sealed.contains("xyz") && !sealed.contains("development"),
            "{sealed}"
        );
        assert_ne!(
            sealed,
            key.seal("default:development.xyz")?,
            "a fresh nonce each time"
        );
        assert_eq!(key.open(&sealed)?, "default:development.xyz");
        assert_eq!(sealed_under(&sealed), Some(key.id()));
        let other = SealingKey::from_hex(OTHER)?;
        assert!(matches!(other.open(&sealed), Err(SealingError::OtherKey { .. })));
        let mut changed = sealed.clone();
        let last = changed
            .pop()
            .map_or('0', |digit| if digit == '0' { '1' } else { '0' });
        changed.push(last);
        assert_eq!(key.open(&changed), Err(SealingError::Damaged));
        assert_eq!(key.open("default:development.xyz"), Err(SealingError::Damaged));
        assert!(!format!("{key:?}").contains(KEY));
        Ok(())
    }

    #[test]
    fn keys_must_be_32_bytes_of_hex() {
        for bad in ["", "00", &KEY[2..], &format!("{KEY}00"), &KEY.replace('0', "g")] {
            assert_eq!(
                SealingKey::from_hex(bad).err(),
                Some(SealingError::MalformedKey),
                "{bad}"
            );
        }
    }

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
