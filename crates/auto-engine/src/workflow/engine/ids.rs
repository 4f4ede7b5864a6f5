//! Derived ids: the same run, task and attempt always give the same id, so a repeated step
//! finds its child and its timers.

use sha2::{Digest, Sha256};

/// The run id rule: 1 to 128 of `[A-Za-z0-9._:-]`.
pub(super) const RUN_ID_BYTES_MAX: usize = 128;
/// A parent id longer than this is hashed before the child's part is added.
const PARENT_PART_MAX: usize = 96;

fn digest(parts: &[&str]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hasher.finalize().into()
}

fn is_run_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-')
}

/// The run id of the child a call task starts: the parent's id (hashed when long), a dot, and
/// 24 hex digits of the parent, the reference and the attempt.
pub(super) fn child_run_id(run_id: &str, reference: &str, attempt: u32) -> String {
    let tail = digest(&[run_id, reference, &attempt.to_string()]);
    let mut id = String::with_capacity(run_id.len().min(PARENT_PART_MAX + 1) + 1 + TAIL_DIGITS);
    push_parent(&mut id, run_id);
    id.push('.');
    push_hex(&mut id, &tail[..TAIL_DIGITS / 2]);
    debug_assert!(id.len() <= RUN_ID_BYTES_MAX);
    id
}

/// The hex digits of a digest a derived id ends with.
const TAIL_DIGITS: usize = 24;

/// `run_id` as a derived id begins: itself, or `h` and 32 hex digits of its digest when it is
/// longer than [`PARENT_PART_MAX`] or outside the run id rule.
fn push_parent(id: &mut String, run_id: &str) {
    if run_id.len() <= PARENT_PART_MAX && run_id.chars().all(is_run_id_char) {
        id.push_str(run_id);
    } else {
        id.push('h');
        push_hex(id, &digest(&[run_id])[..16]);
    }
}

/// `bytes` (at most 16) as lowercase hex digits, two a byte, without a `String` of their own.
fn push_hex(id: &mut String, bytes: &[u8]) {
    let mut digits = [0u8; 32];
    let digits = &mut digits[..bytes.len() * 2];
    if hex::encode_to_slice(bytes, digits).is_ok()
        && let Ok(digits) = std::str::from_utf8(digits)
    {
        id.push_str(digits);
    }
}

/// The id of the event an emit task records: the run's id (hashed when long), `.emit.`, and
/// 24 hex digits of the run, the reference and the count of that task's emits.
pub(super) fn emitted_event_id(run_id: &str, reference: &str, n: u32) -> String {
    let tail = digest(&["emit", run_id, reference, &n.to_string()]);
    let mut id = String::with_capacity(run_id.len().min(PARENT_PART_MAX + 1) + 6 + TAIL_DIGITS);
    push_parent(&mut id, run_id);
    id.push_str(".emit.");
    push_hex(&mut id, &tail[..TAIL_DIGITS / 2]);
    id
}

/// A call's id within its run: the reference and the attempt.
pub(super) fn call_id(reference: &str, attempt: u32) -> String {
    format!("call:{reference}#{attempt}")
}

/// A timer's id within its run: its purpose, the reference and the count.
pub(super) fn timer_id(purpose: &str, reference: &str, count: u32) -> String {
    format!("{purpose}:{reference}#{count}")
}

/// A fraction in [0, 1) from the run, the reference and the attempt: the jitter, since the
/// engine has no random source.
pub(super) fn fraction(run_id: &str, reference: &str, attempt: u32) -> f64 {
    let bytes = digest(&["jitter", run_id, reference, &attempt.to_string()]);
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes[..8]);
    (u64::from_be_bytes(first) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_ids_keep_the_run_id_rule_and_are_stable() {
        let short = child_run_id("run-1", "/do/0/a", 1);
        assert_eq!(short, child_run_id("run-1", "/do/0/a", 1));
        assert_ne!(short, child_run_id("run-1", "/do/0/a", 2));
        assert!(short.starts_with("run-1."));
        let long = child_run_id(&"x".repeat(128), &format!("/do/0/{}", "é".repeat(100)), 7);
        assert!(long.len() <= RUN_ID_BYTES_MAX);
        assert!(long.chars().all(is_run_id_char));
        let f = fraction("r", "/do/0/a", 1);
        assert!((0.0..1.0).contains(&f));
        assert_eq!(f, fraction("r", "/do/0/a", 1));
    }

    /// A run recorded by an earlier build is taken up again by this one: its children and
    /// its emitted events keep the ids the first formula gave, `format!` of the parent (or
    /// `h` and its hashed part), a dot and the first 24 of the digest's 64 hex digits.
    #[test]
    fn derived_ids_are_the_ones_an_earlier_build_gave() {
        let parent = |run_id: &str| {
            if run_id.len() <= PARENT_PART_MAX && run_id.chars().all(is_run_id_char) {
                run_id.to_owned()
            } else {
                format!("h{}", &hex::encode(digest(&[run_id]))[..32])
            }
        };
        let long = "r".repeat(PARENT_PART_MAX + 1);
        for run_id in [
            "run-1",
            "01a247d2-3927-7769-baf3-6e87462c5e8f",
            "a b",
            long.as_str(),
        ] {
            for (reference, n) in [("/do/0/a", 1), ("/do/2/third/for/do/0/x", 42)] {
                let tail = hex::encode(digest(&[run_id, reference, &n.to_string()]));
                assert_eq!(
                    child_run_id(run_id, reference, n),
                    format!("{}.{}", parent(run_id), &tail[..24])
                );
                let tail = hex::encode(digest(&["emit", run_id, reference, &n.to_string()]));
                assert_eq!(
                    emitted_event_id(run_id, reference, n),
                    format!("{}.emit.{}", parent(run_id), &tail[..24])
                );
            }
        }
        assert_eq!(
            child_run_id("run-1", "/do/0/a", 1),
            format!(
                "run-1.{}",
                &hex::encode(digest(&["run-1", "/do/0/a", "1"]))[..24]
            )
        );
    }
}
