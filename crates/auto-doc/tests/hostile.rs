//! Hostile input: deep nesting that would overflow a recursive reader, floods of refused
//! features, and random bytes. Reading must end, without a panic, with issues to show.

use auto_doc::{IssueForm, NESTING_DEPTH_CEILING, YamlConfig, read_markdown, read_yaml, texts};

const HOSTILE_REPEAT: usize = 100_000;

fn issue_texts(text: &str, config: &YamlConfig) -> Vec<String> {
    read_yaml(text, config)
        .issues
        .into_iter()
        .map(|issue| issue.text)
        .collect()
}

#[test]
fn a_hundred_thousand_open_brackets_are_refused() {
    for opening in ["[", "{", "{a: ", "[{a: "] {
        let text = opening.repeat(HOSTILE_REPEAT);
        let front_matter = issue_texts(&text, &YamlConfig::front_matter());
        assert_eq!(front_matter, [texts::too_deep(72)], "{opening}");
        let workflow = issue_texts(&text, &YamlConfig::workflow());
        assert_eq!(workflow, [texts::FLOW_TOO_DEEP], "{opening}");
    }
}

#[test]
fn a_hundred_thousand_nested_block_lists_are_cut_at_the_limit() {
    let text = format!("{}x", "- ".repeat(HOSTILE_REPEAT));
    let read = read_yaml(&text, &YamlConfig::workflow());
    assert_eq!(read.issues.len(), 1);
    assert_eq!(read.issues[0].text, texts::too_deep(512));
    assert_eq!(read.issues[0].column, Some(2 * 512 + 1));
    assert!(!read.complete);
}

#[test]
fn thousands_of_nested_block_mappings_are_cut_at_the_limit() {
    let text: String = (0..5_000)
        .map(|depth| format!("{}k:\n", " ".repeat(depth)))
        .collect();
    let read = read_yaml(&text, &YamlConfig::front_matter());
    assert_eq!(read.issues.len(), 1);
    assert_eq!(
        read.issues[0].message(),
        format!("Line 74, {}: {}", "/k".repeat(72), texts::too_deep(72))
    );
}

#[test]
fn a_caller_cannot_ask_for_more_than_the_ceiling() {
    let config = YamlConfig {
        depth_max: usize::MAX,
        line_offset: 0,
        form: IssueForm::Line,
    };
    let text = format!("{}x", "- ".repeat(NESTING_DEPTH_CEILING + 1));
    assert_eq!(
        issue_texts(&text, &config),
        [texts::too_deep(NESTING_DEPTH_CEILING)]
    );
}

#[test]
fn every_one_of_a_flood_of_anchors_is_reported() {
    let text: String = (0..10_000).map(|n| format!("k{n}: &a{n} {n}\n")).collect();
    let read = read_yaml(&text, &YamlConfig::workflow());
    assert_eq!(read.issues.len(), 10_000);
    assert!(read.issues.iter().all(|issue| issue.text == texts::ANCHOR));
}

#[test]
fn random_bytes_never_panic() {
    let mut random = XorShift::new(0x5EED_0001);
    for _ in 0..20_000 {
        let length = random.below(64);
        let bytes: Vec<u8> = (0..length).map(|_| random.byte()).collect();
        read_both_ways(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn yaml_shaped_noise_never_panics() {
    const PIECES: &[&str] = &[
        "a",
        ":",
        " ",
        "\n",
        "  ",
        "-",
        "[",
        "]",
        "{",
        "}",
        ",",
        "&x",
        "*x",
        "!t",
        "!!str",
        "?",
        "|",
        ">",
        "\"",
        "'",
        "#",
        "---",
        "...",
        "%YAML 1.2",
        "\t",
        "\r\n",
        "é",
        "~",
        ".inf",
        "0x1F",
        "key: value",
        "- item",
        "\\",
        "|-",
        ">+2",
        "%TAG ! tag:x,2000:",
        "!<tag:x>",
    ];
    let mut random = XorShift::new(0x5EED_0002);
    for _ in 0..50_000 {
        let count = random.below(24);
        let text: String = (0..count)
            .map(|_| PIECES[random.below(PIECES.len())])
            .collect();
        read_both_ways(&text);
    }
}

fn read_both_ways(text: &str) {
    let read = read_yaml(text, &YamlConfig::workflow());
    assert!(read.document.positions().get("").is_some(), "{text:?}");
    let _ = read_markdown(&format!("---\n{text}\n---\n"), &YamlConfig::front_matter());
}

/// A small deterministic generator, so a failure repeats with the seed in the test.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    fn byte(&mut self) -> u8 {
        self.next().to_le_bytes()[0]
    }
}
