//! Passwords: Unleash's strength rules, Argon2id hashing, and Unleash's bcrypt hashes of users
//! moved across, replaced at their first login.

use std::sync::LazyLock;

use argon2::{Argon2, PasswordHash, PasswordHasher, PasswordVerifier};

/// One of Unleash's password rules: an id pages mark it by, and what it asks.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// `length`, `repeat`, `lower`, `upper`, `digit` or `symbol`.
    pub id: &'static str,
    /// What it asks, as a form lists it.
    pub description: &'static str,
    /// What a password that breaks it is told.
    pub broken: &'static str,
    check: fn(&str) -> bool,
}

impl Rule {
    /// Whether `password` keeps the rule.
    pub fn holds(&self, password: &str) -> bool {
        (self.check)(password)
    }
}

/// Unleash's own rules (owasp-password-strength-test without passphrases): 10 to 128 characters
/// counted in UTF-16 units, a lower-case and an upper-case letter, a digit, a symbol, and no
/// character three times in a row.
pub const RULES: [Rule; 6] = [
    Rule {
        id: "length",
        description: "10 to 128 characters",
        broken: "the password must be at least 10 characters long",
        check: |password| (10..=128).contains(&password.encode_utf16().count()),
    },
    Rule {
        id: "repeat",
        description: "no character three times in a row",
        broken: "the password may not contain sequences of three or more repeated characters",
        check: |password| {
            let chars: Vec<char> = password.chars().collect();
            !chars.windows(3).any(|run| run[0] == run[1] && run[1] == run[2])
        },
    },
    Rule {
        id: "lower",
        description: "a lower-case letter",
        broken: "the password must contain at least one lowercase letter",
        check: |password| password.chars().any(|c| c.is_ascii_lowercase()),
    },
    Rule {
        id: "upper",
        description: "an upper-case letter",
        broken: "the password must contain at least one uppercase letter",
        check: |password| password.chars().any(|c| c.is_ascii_uppercase()),
    },
    Rule {
        id: "digit",
        description: "a number",
        broken: "the password must contain at least one number",
        check: |password| password.chars().any(|c| c.is_ascii_digit()),
    },
    Rule {
        id: "symbol",
        description: "a symbol",
        broken: "the password must contain at least one special character",
        check: |password| password.chars().any(|c| !c.is_ascii_alphanumeric()),
    },
];

/// Every rule `password` breaks, as Unleash words them; empty when it is acceptable. A
/// password over 128 characters is told so.
pub fn broken_rules(password: &str) -> Vec<&'static str> {
    RULES
        .iter()
        .filter(|rule| !rule.holds(password))
        .map(|rule| {
            if rule.id == "length" && password.encode_utf16().count() > 128 {
                "the password must be fewer than 128 characters"
            } else {
                rule.broken
            }
        })
        .collect()
}

/// An Argon2id PHC string for `password`, with a fresh salt.
pub fn hash(password: &str) -> Result<String, argon2::password_hash::Error> {
    Ok(Argon2::default().hash_password(password.as_bytes())?.to_string())
}

/// What a login without a usable hash is verified against: a hash made like every other, so the
/// verification costs the same.
static DECOY: LazyLock<Option<String>> = LazyLock::new(|| hash("decoy password").ok());

/// What a login's password check found.
#[derive(Debug, PartialEq, Eq)]
pub enum Verified {
    /// The password does not match, or there is no usable hash.
    No,
    /// It matches.
    Yes,
    /// It matches a hash from Unleash (bcrypt), which this Argon2id hash of it replaces.
    Rehashed(String),
}

/// Checks `password` against `stored`, which is an Argon2id PHC string or, for a user moved from
/// Unleash, a bcrypt hash (`$2a$`, `$2b$` or `$2y$`); a matching bcrypt hash is rehashed.
pub fn check(password: &str, stored: Option<&str>) -> Verified {
    match stored {
        Some(bcrypt_hash) if is_bcrypt(bcrypt_hash) => {
            if !bcrypt::verify(password, bcrypt_hash).unwrap_or(false) {
                return Verified::No;
            }
            match hash(password) {
                Ok(rehashed) => Verified::Rehashed(rehashed),
                Err(_) => Verified::Yes,
            }
        }
        stored if verify(password, stored) => Verified::Yes,
        _ => Verified::No,
    }
}

fn is_bcrypt(stored: &str) -> bool {
    ["$2a$", "$2b$", "$2y$"]
        .iter()
        .any(|prefix| stored.starts_with(prefix))
}

/// Whether `password` matches the PHC string `stored`. With no usable hash (an unknown user, or
/// one without a password) it still runs one verification against a fixed hash and answers
/// `false`, so the time taken does not tell which users exist.
pub fn verify(password: &str, stored: Option<&str>) -> bool {
    let parsed = stored.and_then(|stored| PasswordHash::new(stored).ok());
    let Some(parsed) = parsed else {
        if let Some(decoy) = DECOY.as_deref().and_then(|decoy| PasswordHash::new(decoy).ok()) {
            let _ = Argon2::default().verify_password(password.as_bytes(), &decoy);
        }
        return false;
    };
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_match_unleash() {
        assert!(broken_rules("Str0ng!Passw0rd").is_empty());
        assert_eq!(broken_rules("Sh0rt!pwd").len(), 1); // 9 characters
        assert!(broken_rules("Abcdefgh1!").is_empty()); // exactly 10
        assert!(broken_rules(&format!("Aa1!{}", "xy".repeat(62))).is_empty()); // 128
        assert_eq!(broken_rules(&format!("Aa1!{}z", "xy".repeat(62))).len(), 1); // 129
        assert_eq!(broken_rules("Paaassword1!").len(), 1); // a run of three
        assert_eq!(broken_rules("password1!x").len(), 1); // no upper-case
        assert_eq!(broken_rules("PASSWORD1!X").len(), 1); // no lower-case
        assert_eq!(broken_rules("Password!!x").len(), 1); // no digit
        assert_eq!(broken_rules("Password12x").len(), 1); // no symbol
        assert!(broken_rules("Pässword12x").is_empty()); // non-ASCII counts as a symbol
        assert_eq!(broken_rules("").len(), 5);
        // An emoji is two UTF-16 units.
        assert!(broken_rules("Aa1😀😀😀x").len() == 1);
    }

    #[test]
    fn a_bcrypt_hash_from_unleash_is_verified_once_and_replaced() -> Result<(), bcrypt::BcryptError> {
        // As Unleash's bcryptjs writes them: 2a before 8.0, 2b since, cost 10.
        for version in [bcrypt::Version::TwoA, bcrypt::Version::TwoB] {
            let unleash = bcrypt::hash_with_result("Str0ng!Passw0rd", 10)?.format_for_version(version);
            assert_eq!(check("Wrong!Passw0rd", Some(&unleash)), Verified::No);
            let Verified::Rehashed(rehashed) = check("Str0ng!Passw0rd", Some(&unleash)) else {
                panic!("a matching bcrypt hash is not rehashed");
            };
            assert!(rehashed.starts_with("$argon2id$"));
            assert_eq!(check("Str0ng!Passw0rd", Some(&rehashed)), Verified::Yes);
        }
        assert_eq!(check("Str0ng!Passw0rd", Some("$2b$10$not-a-hash")), Verified::No);
        assert_eq!(check("Str0ng!Passw0rd", None), Verified::No);
        Ok(())
    }

    #[test]
    fn hashes_are_argon2id_and_salted() -> Result<(), argon2::password_hash::Error> {
        let first = hash("Str0ng!Passw0rd")?;
        let second = hash("Str0ng!Passw0rd")?;
        assert!(first.starts_with("$argon2id$v=19$"));
        assert_ne!(first, second);
        assert!(verify("Str0ng!Passw0rd", Some(&first)));
        assert!(!verify("Str0ng!Passw0rd?", Some(&first)));
        assert!(!verify("Str0ng!Passw0rd", Some("not a hash")));
        assert!(
            !verify("decoy password", None),
            "the decoy hash never admits anyone"
        );
        Ok(())
    }

    #[test]
    fn unknown_users_are_verified_against_a_hash_made_like_the_others()
    -> Result<(), argon2::password_hash::Error> {
        let real = hash("Str0ng!Passw0rd")?;
        let real = PasswordHash::new(&real)?;
        let decoy = DECOY.as_deref().unwrap_or_default();
        let decoy = PasswordHash::new(decoy)?;
        assert_eq!(decoy.algorithm, real.algorithm);
        assert_eq!(decoy.version, real.version);
        assert_eq!(decoy.params, real.params);
        Ok(())
    }
}
