//! Callers and their keys: `Authorization: Bearer <key>`, keys stored as SHA-256 hashes, each
//! bound to one org with one role (supplement §2, "Auth").
//!
//! With no key configured every request is the caller `local`, an admin of every org (and the
//! server listens on loopback only; see `config::check_listen`).

use std::collections::HashMap;

use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::problem::Problem;

/// The prefix of a key as `auto key new` prints it, so a leaked key is recognisable.
pub const KEY_PREFIX: &str = "auto_";
/// Random bytes in a key: 256 bits.
pub const KEY_RANDOM_BYTES: usize = 32;
/// The caller id of every request to a server without keys.
pub const LOCAL_CALLER: &str = "local";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads.
    Viewer,
    /// Reads, runs and events.
    Runner,
    /// Reads and definitions.
    Editor,
    /// Everything in its org.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Runner => "runner",
            Self::Editor => "editor",
            Self::Admin => "admin",
        }
    }
}

/// What an operation needs of its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    Read,
    /// Create, update and retire definitions.
    Define,
    /// Run definitions, publish and send events, answer requests.
    Run,
    /// Create and delete orgs and playbooks, and purge runs.
    Administer,
}

impl Permission {
    fn granted_to(self, role: Role) -> bool {
        match self {
            Self::Read => true,
            Self::Define => matches!(role, Role::Editor | Role::Admin),
            Self::Run => matches!(role, Role::Runner | Role::Admin),
            Self::Administer => role == Role::Admin,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Define => "change definitions",
            Self::Run => "run definitions and send events",
            Self::Administer => "create or delete orgs and playbooks, or purge runs",
        }
    }
}

/// Who makes a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub id: String,
    /// The org the caller's key belongs to; `None` for `local`, who acts in every org.
    pub org: Option<String>,
    pub role: Role,
}

impl Caller {
    pub fn local() -> Self {
        Self {
            id: LOCAL_CALLER.into(),
            org: None,
            role: Role::Admin,
        }
    }

    /// Checks that the caller may act in `org` with `permission`.
    pub fn require(&self, org: &str, permission: Permission) -> Result<(), Problem> {
        if let Some(own) = &self.org
            && own != org
        {
            return Err(Problem::forbidden(format!(
                "The key of {} belongs to the org {own}; it cannot reach the org {org}.",
                self.id
            )));
        }
        if !permission.granted_to(self.role) {
            return Err(Problem::forbidden(format!(
                "The caller {} is a {} of {org}, which may not {}.",
                self.id,
                self.role.as_str(),
                permission.words()
            )));
        }
        Ok(())
    }
}

/// One configured key.
#[derive(Clone, Debug)]
pub struct KeyEntry {
    pub caller: Caller,
    digest: [u8; 32],
}

impl KeyEntry {
    /// A key entry from its configuration; `hash` is `sha256:` and 64 hexadecimal digits.
    pub fn new(caller: &str, org: &str, role: Role, hash: &str) -> Result<Self, String> {
        let digest = parse_hash(hash).ok_or_else(|| {
            format!(
                "the key of {caller} has hash {hash:?}: it must be sha256: followed by 64 \
                 hexadecimal digits, as `auto key new` prints it"
            )
        })?;
        Ok(Self {
            caller: Caller {
                id: caller.into(),
                org: Some(org.into()),
                role,
            },
            digest,
        })
    }
}

fn parse_hash(hash: &str) -> Option<[u8; 32]> {
    let hex_digits = hash.strip_prefix("sha256:")?;
    let bytes = hex::decode(hex_digits).ok()?;
    bytes.try_into().ok()
}

fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// The configured keys, by digest.
#[derive(Clone, Debug, Default)]
pub struct Keys {
    by_digest: HashMap<[u8; 32], Caller>,
}

impl Keys {
    pub fn new(entries: Vec<KeyEntry>) -> Self {
        Self {
            by_digest: entries.into_iter().map(|e| (e.digest, e.caller)).collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }

    /// The caller of a request, from its `Authorization` header value.
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Caller, Problem> {
        if self.is_empty() {
            return Ok(Caller::local());
        }
        let Some(value) = authorization else {
            return Err(unauthenticated(
                "The request has no Authorization header: send Authorization: Bearer <key>.",
            ));
        };
        let Some(key) = value.strip_prefix("Bearer ").map(str::trim) else {
            return Err(unauthenticated(
                "The Authorization header is not a bearer key: send Authorization: Bearer <key>.",
            ));
        };
        // The map is keyed by the digest, so no key is compared byte by byte in secret-dependent
        // time: only the digest of what the caller sent is computed.
        self.by_digest
            .get(&digest(key))
            .cloned()
            .ok_or_else(|| unauthenticated("The key is not known to this server."))
    }
}

/// HTTP's status of a request without a known key: 401, which RFC 9110 gives a request whose
/// credentials are missing or wrong, and which asks for a key (`WWW-Authenticate: Bearer`). A
/// known key whose role or org does not allow the operation is `forbidden` 403.
pub const UNAUTHENTICATED_STATUS: u16 = 401;

/// A request without a known key: reason `forbidden`, kind `unauthenticated`, status 401.
fn unauthenticated(detail: &str) -> Problem {
    Problem::new(
        crate::problem::Reason::Forbidden,
        "Not authenticated",
        detail,
    )
    .with_kind("unauthenticated")
    .with_status(UNAUTHENTICATED_STATUS)
}

/// A new key and the hash to paste into `[[keys]]`.
pub fn new_key() -> (String, String) {
    let mut random = [0u8; KEY_RANDOM_BYTES];
    rand::rng().fill_bytes(&mut random);
    let key = format!("{KEY_PREFIX}{}", hex::encode(random));
    let hash = format!("sha256:{}", hex::encode(digest(&key)));
    (key, hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_authenticates_by_its_hash() {
        let (key, hash) = new_key();
        assert!(key.starts_with(KEY_PREFIX));
        let entry = KeyEntry::new("ci-bot", "acme", Role::Runner, &hash).unwrap();
        let keys = Keys::new(vec![entry]);
        let caller = keys.authenticate(Some(&format!("Bearer {key}"))).unwrap();
        assert_eq!(caller.id, "ci-bot");
        for refused in [Some("Bearer auto_wrong"), None, Some(key.as_str())] {
            let problem = keys.authenticate(refused).unwrap_err();
            assert_eq!(problem.status, UNAUTHENTICATED_STATUS, "{refused:?}");
            assert_eq!(problem.kind.as_deref(), Some("unauthenticated"));
        }
    }

    #[test]
    fn no_keys_is_the_local_admin() {
        assert_eq!(Keys::default().authenticate(None).unwrap(), Caller::local());
    }

    #[test]
    fn roles_and_orgs_bound_what_a_caller_may_do() {
        let runner = Caller {
            id: "bot".into(),
            org: Some("acme".into()),
            role: Role::Runner,
        };
        assert!(runner.require("acme", Permission::Run).is_ok());
        assert!(runner.require("acme", Permission::Read).is_ok());
        assert!(runner.require("acme", Permission::Define).is_err());
        assert!(runner.require("other", Permission::Read).is_err());
        let viewer = Caller {
            role: Role::Viewer,
            ..runner.clone()
        };
        assert!(viewer.require("acme", Permission::Run).is_err());
        assert!(
            Caller::local()
                .require("any", Permission::Administer)
                .is_ok()
        );
    }

    #[test]
    fn malformed_hashes_are_refused() {
        assert!(KeyEntry::new("a", "b", Role::Admin, "sha256:abc").is_err());
        assert!(KeyEntry::new("a", "b", Role::Admin, &"0".repeat(64)).is_err());
    }
}
