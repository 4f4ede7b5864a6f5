//! JSON pointers (RFC 6901) as issues and positions use them: `/config/temperature`, with `~`
//! written `~0` and `/` written `~1` inside a segment. The root is the empty pointer.

use std::borrow::Cow;

/// One key or index, escaped for a pointer: `a/b~c` becomes `a~1b~0c`.
pub fn escape_segment(segment: &str) -> Cow<'_, str> {
    if segment.contains(['~', '/']) {
        // `~` first, or the `~` of a fresh `~1` would be escaped again.
        Cow::Owned(segment.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// The key or index a pointer segment names: `a~1b~0c` becomes `a/b~c`.
pub fn unescape_segment(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        // `~1` first, or the `~1` left by an unescaped `~01` would turn into `/`.
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// Appends one unescaped key or index to a pointer.
pub fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    pointer.push_str(&escape_segment(segment));
}

/// The pointer of a child: `child_pointer("/config", "top_p")` is `/config/top_p`.
pub fn child_pointer(parent: &str, segment: &str) -> String {
    let mut pointer = String::with_capacity(parent.len() + segment.len() + 1);
    pointer.push_str(parent);
    push_segment(&mut pointer, segment);
    pointer
}

/// A pointer built from unescaped segments: `["do", "0", "a/b"]` gives `/do/0/a~1b`.
pub fn pointer_of<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> String {
    let mut pointer = String::new();
    for segment in segments {
        push_segment(&mut pointer, segment.as_ref());
    }
    pointer
}

/// The pointer one level up, or `None` for the root.
pub fn parent_pointer(pointer: &str) -> Option<&str> {
    pointer.rfind('/').map(|slash| &pointer[..slash])
}

/// The unescaped segments of a pointer; the root has none.
pub fn segments(pointer: &str) -> impl Iterator<Item = Cow<'_, str>> {
    pointer.split('/').skip(1).map(unescape_segment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_tilde_before_slash() {
        assert_eq!(escape_segment("a/b~c"), "a~1b~0c");
        assert_eq!(escape_segment("~1"), "~01");
        assert_eq!(escape_segment("plain"), "plain");
    }

    #[test]
    fn unescapes_slash_before_tilde() {
        assert_eq!(unescape_segment("a~1b~0c"), "a/b~c");
        assert_eq!(unescape_segment("~01"), "~1");
    }

    #[test]
    fn round_trips_through_segments() {
        let pointer = pointer_of(["do", "0", "a/b", "~x", ""]);
        assert_eq!(pointer, "/do/0/a~1b/~0x/");
        let back: Vec<_> = segments(&pointer).collect();
        assert_eq!(back, ["do", "0", "a/b", "~x", ""]);
        assert_eq!(segments("").count(), 0);
    }

    #[test]
    fn walks_up_to_the_root() {
        assert_eq!(parent_pointer("/a/b"), Some("/a"));
        assert_eq!(parent_pointer("/a"), Some(""));
        assert_eq!(parent_pointer(""), None);
        assert_eq!(child_pointer("", "a~"), "/a~0");
    }
}
