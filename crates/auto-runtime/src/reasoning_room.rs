//! The room each tool result has in the step that reads it (reasoning page, "Limits on
//! calls"), and the cut of a result that does not fit: still valid JSON, with a note.

use serde_json::json;

/// "A run's model calls use at most the input tokens the operator sets with
/// REASONING_MAX_INPUT_TOKENS, 2,000,000 by default."
pub const REASONING_MAX_INPUT_TOKENS_DEFAULT: u64 = 2_000_000;

/// What one step that called tools spent and sent, as its model call's ending tells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StepCount {
    /// Input tokens the provider counted for the step (uncached, cache read and write).
    pub input_tokens: Option<u64>,
    /// Output tokens of the step's answer.
    pub output_tokens: Option<u64>,
    /// Bytes of the request the step sent.
    pub request_bytes: u64,
}

/// The bytes each of a step's `calls` results may take, or `None` when each is read in full:
/// "The room starts as the smaller of two figures: the model's context window, as the
/// server's model catalog gives it, and what is left of the run's budget. The step's input and
/// output are taken off it, and the step's calls share the rest equally. Room is counted in
/// the provider's tokens for that step, and converted to bytes at the step's ratio of bytes
/// sent to input tokens counted. When the catalog does not know the window, or the provider
/// reports no token counts, each result is read in full."
pub(crate) fn result_room_bytes(
    context_window: Option<u64>,
    budget_left_tokens: u64,
    step: StepCount,
    calls: usize,
) -> Option<usize> {
    let window = context_window?;
    let input = step.input_tokens.filter(|t| *t > 0)?;
    let output = step.output_tokens.unwrap_or(0);
    let room_tokens = window
        .min(budget_left_tokens)
        .saturating_sub(input.saturating_add(output));
    let share_tokens = room_tokens / u64::try_from(calls.max(1)).unwrap_or(u64::MAX);
    let bytes_per_token = step.request_bytes as f64 / input as f64;
    Some((share_tokens as f64 * bytes_per_token) as usize)
}

/// The text the model reads of a result within `room` bytes: itself when it fits, else JSON
/// holding its start and a note; with the bytes shown when cut.
pub(crate) fn cut_to_room(text: &str, room: usize) -> (String, Option<usize>) {
    if text.len() <= room {
        return (text.to_owned(), None);
    }
    let mut keep = room.min(text.len());
    loop {
        let mut end = keep;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = json!({
            "cut_result": &text[..end],
            "note": format!(
                "The result was cut to fit the room left in the run: {end} of {} bytes are shown. Ask the tool for fewer rows, fields or depth.",
                text.len()
            ),
        })
        .to_string();
        if cut.len() <= room || end == 0 {
            return (cut, Some(end));
        }
        // Shrink by what the JSON overran, at least one byte.
        keep = end.saturating_sub((cut.len() - room).max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(input: u64, output: u64, bytes: u64) -> StepCount {
        StepCount {
            input_tokens: Some(input),
            output_tokens: Some(output),
            request_bytes: bytes,
        }
    }

    #[test]
    fn the_room_is_the_smaller_figure_less_the_step_shared_by_its_calls() {
        // 200,000 window, 1,000 in and 100 out, 4 bytes a token, two calls.
        assert_eq!(
            result_room_bytes(Some(200_000), 2_000_000, step(1_000, 100, 4_000), 2),
            Some((200_000 - 1_100) / 2 * 4)
        );
        // The budget left is smaller than the window.
        assert_eq!(
            result_room_bytes(Some(200_000), 11_100, step(1_000, 100, 4_000), 1),
            Some(10_000 * 4)
        );
        // Unknown window, or no token counts: read in full.
        assert_eq!(result_room_bytes(None, 2_000_000, step(1, 1, 4), 1), None);
        let uncounted = StepCount {
            input_tokens: None,
            ..step(0, 0, 4)
        };
        assert_eq!(
            result_room_bytes(Some(200_000), 2_000_000, uncounted, 1),
            None
        );
    }

    /// A result that fits is read whole; one byte more is cut, and the cut is valid JSON
    /// within the room with a note asking for fewer rows, fields or depth.
    #[test]
    fn a_result_past_its_room_is_cut_to_valid_json_with_a_note() {
        let room = 400;
        let fits = "a".repeat(room);
        assert_eq!(cut_to_room(&fits, room), (fits.clone(), None));
        let past = format!("{fits}\"");
        let (cut, shown) = cut_to_room(&past, room);
        assert!(cut.len() <= room, "{}", cut.len());
        let value: serde_json::Value = serde_json::from_str(&cut).expect("valid JSON");
        let shown = shown.expect("cut");
        assert_eq!(value["cut_result"].as_str().map(str::len), Some(shown));
        assert_eq!(
            value["note"],
            format!(
                "The result was cut to fit the room left in the run: {shown} of {} bytes are shown. Ask the tool for fewer rows, fields or depth.",
                room + 1
            )
        );
        // Wide characters are cut at a boundary.
        let (cut, _) = cut_to_room(&"é".repeat(400), room);
        assert!(serde_json::from_str::<serde_json::Value>(&cut).is_ok());
    }
}
