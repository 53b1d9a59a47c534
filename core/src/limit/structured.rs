//! The structured cut (SPEC L15): a result over the cap that carries
//! `structuredContent` keeps it, cut inside so that it still validates.
//!
//! 1. **Plan.** The value is walked once with the tool's `outputSchema`
//!    ([`Applicable`]): each string and array learns what it costs on the wire and what
//!    a cut may do to it. A string longer than the cap is measured only up to the cap;
//!    of an array that may lose items only the last items that can fit are planned.
//! 2. **Share.** The room left by everything that stays is shared out by water-filling:
//!    the largest strings and arrays are cut first, down to a common level.
//! 3. **Fit.** A string keeps its longest tail within its share, at a boundary L8/L9
//!    allow; an array keeps its last items.
//! 4. **Assemble and measure.** A text block that was the serialization of the value
//!    becomes the serialization of the cut value (both are counted: each kept byte
//!    costs its escape twice, [`Weights::LITERAL_AND_TEXT`]); other text is cut per L3;
//!    each cut is reported under `_meta["backstop/truncation"].structured` with its JSON
//!    pointer, what it dropped and what it was (L17). Where the text blocks hold only the
//!    serialization, a block with the header line goes first, its count the bytes the
//!    serialization lost, so that a model reading the text sees the cut (L17). The result is measured; if it overshoots (a longer report), the room
//!    shrinks by the overshoot and the cut is made again.
//!
//! Where nothing that satisfies the schema fits, the result becomes an `isError`
//! result that says so (L15 c): the header and the tail of its text, with
//! `_meta.error_type` `ResultTooLarge` and a suggestion.

use serde::Serialize;
use serde_json::{Map, Value};

use super::joined::{Gap, Joined};
use super::schema::{Applicable, NotUnderstood};
use super::serialization::is_serialization_of;
use super::{
    Cutter, ERROR_META_KEYS, HeldInPart, Keep, Limit, Limited, MetaKept, TRUNCATION_META_KEY,
    Truncation, find_cut, find_cut_from, find_head_cut, header_of, kept_meta, share_of,
    with_header,
};
use crate::result::{Content, ToolResult};
use crate::wire::Weights;

/// `_meta.error_type` of a result that could not be cut to fit its schema (L15 c).
pub const RESULT_TOO_LARGE: &str = "ResultTooLarge";

/// The suggestion of a result that could not be cut to fit its schema (L15 c).
pub const RESULT_TOO_LARGE_SUGGESTION: &str = "Too large to return within the output schema: narrow the request (a smaller range, a filter, fewer items).";

/// One cut inside `structuredContent`, as reported in `_meta` (L15 a).
///
/// ```
/// use backstop_core::{Limit, ToolResult};
/// let mut result = ToolResult::default();
/// result.structured_content = Some(serde_json::json!({"log": "x".repeat(5000), "lines": 5}));
/// let cut = Limit::new(1000).unwrap().apply_to_result(result);
/// let report = cut.truncation.unwrap();
/// assert_eq!(report.structured[0].pointer, "/log");
/// assert!(report.structured[0].dropped_bytes.unwrap() > 4000);
/// assert_eq!(cut.result.structured_content.unwrap()["lines"], 5);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StructuredCut {
    /// Where the cut value is, as a JSON pointer into `structuredContent`.
    pub pointer: String,
    /// For a string: the bytes (UTF-8) dropped from its head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_bytes: Option<usize>,
    /// For an array: the items dropped from its start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_items: Option<usize>,
    /// For a string: its bytes (UTF-8) before the cut (L17).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_bytes: Option<usize>,
    /// For an array: its items before the cut (L17).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_items: Option<usize>,
}

/// One value of `structuredContent`, planned: its cost, the least a cut can make it
/// cost, and what a cut may do to it. Costs saturate at `over` (more than the cap).
enum Node<'v> {
    /// Kept as it is.
    Fixed { value: &'v Value, cost: usize },
    /// A string that may lose its head, keeping at least `min_chars` characters.
    Str {
        text: &'v str,
        cost: usize,
        min_cost: usize,
        min_chars: usize,
    },
    /// An array whose first `head_len` and last `items.len() - head_len` items are
    /// planned (the `skipped` ones between them can never be kept): the last ones for a
    /// tail cut, the first ones for a head cut, both for head and tail (L16);
    /// `min_items` is how many a cut keeps at least, `None` if none may go.
    Array {
        items: Vec<Node<'v>>,
        head_len: usize,
        skipped: usize,
        min_items: Option<usize>,
        cost: usize,
        min_cost: usize,
    },
    /// An object: its members stay, their values may be cut. Each member carries the
    /// cost of its key and colon.
    Object {
        members: Vec<(&'v str, usize, Node<'v>)>,
        cost: usize,
        min_cost: usize,
    },
}

/// How values are costed and cut: the weights, the line alignment, and the cap.
#[derive(Clone, Copy)]
struct Planner {
    weights: Weights,
    line_align: bool,
    keep: Keep,
    /// The reader reads the value itself (L18): a cut string carries the header line
    /// under every policy (L17), not under head+tail alone.
    header_in_strings: bool,
    /// One more than the cap: "does not fit".
    over: usize,
}

impl Planner {
    fn add(&self, a: usize, b: usize) -> usize {
        a.saturating_add(b).min(self.over)
    }

    /// The cost of `n` bytes of punctuation (or of a number, `true`, `null`).
    fn punctuation(&self, n: usize) -> usize {
        n.saturating_mul(self.weights.punctuation).min(self.over)
    }

    fn string_cost(&self, text: &str) -> usize {
        self.weights
            .string_upto(text, self.over - 1)
            .unwrap_or(self.over)
    }

    /// The cost of a value kept as it is, counting stopped once it is over the cap.
    fn value_cost(&self, value: &Value) -> usize {
        match value {
            Value::Null | Value::Bool(true) => self.punctuation(4),
            Value::Bool(false) => self.punctuation(5),
            Value::Number(n) => self.punctuation(crate::wire::number_size(n)),
            Value::String(text) => self.string_cost(text),
            Value::Array(items) => {
                let mut cost = self.punctuation(2 + items.len().saturating_sub(1));
                for item in items {
                    cost = self.add(cost, self.value_cost(item));
                    if cost >= self.over {
                        break;
                    }
                }
                cost
            }
            Value::Object(map) => {
                let mut cost = self.punctuation(2 + map.len().saturating_sub(1));
                for (key, value) in map {
                    cost = self.add(cost, self.add(self.key_cost(key), self.value_cost(value)));
                    if cost >= self.over {
                        break;
                    }
                }
                cost
            }
        }
    }

    /// The cost of `"key":`.
    fn key_cost(&self, key: &str) -> usize {
        self.add(self.string_cost(key), self.punctuation(1))
    }

    fn fixed<'v>(&self, value: &'v Value) -> Node<'v> {
        Node::Fixed {
            value,
            cost: self.value_cost(value),
        }
    }

    /// Plan `value` under the schemas that apply to it.
    fn plan<'v>(
        &self,
        value: &'v Value,
        applicable: Result<Applicable<'_>, NotUnderstood>,
    ) -> Node<'v> {
        let Ok(applicable) = applicable else {
            return self.fixed(value);
        };
        if applicable.is_pinned() {
            return self.fixed(value);
        }
        match value {
            Value::String(text) => match applicable.string_min_chars() {
                None => self.fixed(value),
                Some(min_chars) => {
                    // The shortest a cut may keep: the last (or first) `min_chars`
                    // characters, and under head and tail the header line between.
                    let least = match self.keep {
                        Keep::Tail => {
                            let kept = match min_chars.checked_sub(1) {
                                None => text.len(),
                                Some(n) => text.char_indices().rev().nth(n).map_or(0, |(at, _)| at),
                            };
                            self.string_cost(&text[kept..])
                        }
                        Keep::Head | Keep::HeadAndTail { .. } => {
                            let kept = text
                                .char_indices()
                                .nth(min_chars)
                                .map_or(text.len(), |(at, _)| at);
                            let marker = match self.keep {
                                Keep::HeadAndTail { .. } => self
                                    .weights
                                    .of_bytes(with_header(self.keep, 0, "", "").as_bytes()),
                                _ => 0,
                            };
                            self.add(self.string_cost(&text[..kept]), marker)
                        }
                    };
                    let cost = self.string_cost(text);
                    Node::Str {
                        text,
                        cost,
                        min_cost: least.min(cost),
                        min_chars,
                    }
                }
            },
            Value::Array(items) => self.plan_array(items, &applicable),
            Value::Object(map) => {
                let mut cost = self.punctuation(2 + map.len().saturating_sub(1));
                let mut min_cost = cost;
                let members: Vec<_> = map
                    .iter()
                    .map(|(key, member)| {
                        let node = self.plan(member, applicable.member(key, member));
                        let key_cost = self.key_cost(key);
                        cost = self.add(cost, self.add(key_cost, node.cost()));
                        min_cost = self.add(min_cost, self.add(key_cost, node.min_cost()));
                        (key.as_str(), key_cost, node)
                    })
                    .collect();
                Node::Object {
                    members,
                    cost,
                    min_cost,
                }
            }
            _ => self.fixed(value),
        }
    }

    fn plan_array<'v>(&self, items: &'v [Value], applicable: &Applicable<'_>) -> Node<'v> {
        let min_items = applicable.array_min_items();
        let must_keep = min_items.unwrap_or(items.len());
        // The first items (head cuts), walking on until they no longer fit and enough
        // are planned; then the last items (tail cuts), walking back likewise.
        let mut planned = Vec::new();
        if self.keep != Keep::Tail {
            let mut whole = self.punctuation(2);
            for item in items {
                if whole >= self.over && planned.len() >= must_keep.max(1) {
                    break;
                }
                let node = self.plan(item, applicable.item(item));
                whole = self.add(whole, self.add(node.cost(), self.punctuation(1)));
                planned.push(node);
            }
        }
        let head_len = planned.len();
        if self.keep != Keep::Head {
            let mut whole = self.punctuation(2);
            let mut tail = Vec::new();
            for item in items[head_len..].iter().rev() {
                let enough = tail.len() >= must_keep.max(1) || self.keep != Keep::Tail;
                if whole >= self.over && enough {
                    break;
                }
                let node = self.plan(item, applicable.item(item));
                whole = self.add(whole, self.add(node.cost(), self.punctuation(1)));
                tail.push(node);
            }
            planned.extend(tail.into_iter().rev());
        }
        let skipped = items.len() - planned.len();
        let commas = |n: usize| self.punctuation(n.saturating_sub(1));
        let cost = if skipped > 0 {
            self.over
        } else {
            planned.iter().fold(
                self.add(self.punctuation(2), commas(planned.len())),
                |c, n| self.add(c, n.cost()),
            )
        };
        let kept_at_least = must_keep.min(planned.len());
        let least = match self.keep {
            Keep::Tail => &planned[planned.len() - kept_at_least..],
            Keep::Head | Keep::HeadAndTail { .. } => &planned[..kept_at_least],
        };
        let min_cost = least.iter().fold(
            self.add(self.punctuation(2), commas(kept_at_least)),
            |c, n| self.add(c, n.min_cost()),
        );
        Node::Array {
            items: planned,
            head_len,
            skipped,
            min_items,
            cost,
            min_cost,
        }
    }
}

impl Node<'_> {
    fn cost(&self) -> usize {
        match self {
            Node::Fixed { cost, .. }
            | Node::Str { cost, .. }
            | Node::Array { cost, .. }
            | Node::Object { cost, .. } => *cost,
        }
    }

    fn min_cost(&self) -> usize {
        match self {
            Node::Fixed { cost, .. } => *cost,
            Node::Str { min_cost, .. }
            | Node::Array { min_cost, .. }
            | Node::Object { min_cost, .. } => *min_cost,
        }
    }

    /// The value as it was (only ever called on a node that fits whole).
    fn whole(&self) -> Value {
        match self {
            Node::Fixed { value, .. } => (*value).clone(),
            Node::Str { text, .. } => Value::String((*text).to_owned()),
            Node::Array { items, .. } => Value::Array(items.iter().map(Node::whole).collect()),
            Node::Object { members, .. } => Value::Object(
                members
                    .iter()
                    .map(|(key, _, node)| ((*key).to_owned(), node.whole()))
                    .collect(),
            ),
        }
    }
}

/// Shares of `room` for children of costs `(min, whole)`: the largest are cut first,
/// down to a common level; `None` if not even the minimums fit.
fn water_fill(children: &[(usize, usize)], room: usize) -> Option<Vec<usize>> {
    let total_min = children
        .iter()
        .map(|c| c.0)
        .fold(0usize, usize::saturating_add);
    if total_min > room {
        return None;
    }
    let share = |level: usize| -> Vec<usize> {
        children
            .iter()
            .map(|&(min, whole)| level.clamp(min, whole.max(min)))
            .collect()
    };
    let used = |shares: &[usize]| shares.iter().fold(0usize, |a, &b| a.saturating_add(b));
    let (mut low, mut high) = (0usize, children.iter().map(|c| c.1).max().unwrap_or(0));
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if used(&share(mid)) <= room {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let mut shares = share(low);
    let mut left = room - used(&shares);
    for (slot, &(_, whole)) in shares.iter_mut().zip(children) {
        let more = whole.saturating_sub(*slot).min(left);
        *slot += more;
        left -= more;
    }
    Some(shares)
}

/// A JSON pointer being built while walking down.
struct Pointer(String);

impl Pointer {
    fn push(&mut self, token: &str) -> usize {
        let len = self.0.len();
        self.0.push('/');
        self.0
            .push_str(&token.replace('~', "~0").replace('/', "~1"));
        len
    }
}

/// Cuts a planned value to a share of the room.
struct Fitter<'p> {
    planner: &'p Planner,
    pointer: Pointer,
    cuts: Vec<StructuredCut>,
    held: Option<&'p HeldInPart>,
}

impl Fitter<'_> {
    /// The node cut to cost at most `budget`, with its cost; `None` if it cannot be.
    fn fit(&mut self, node: &Node<'_>, budget: usize) -> Option<(Value, usize)> {
        if node.cost() <= budget {
            return Some((node.whole(), node.cost()));
        }
        match node {
            Node::Fixed { .. } => None,
            Node::Str {
                text, min_chars, ..
            } => self.fit_string(text, *min_chars, budget),
            Node::Object { members, .. } => {
                let overhead = members.iter().fold(
                    self.planner
                        .punctuation(2 + members.len().saturating_sub(1)),
                    |c, m| c.saturating_add(m.1),
                );
                let nodes: Vec<&Node<'_>> = members.iter().map(|m| &m.2).collect();
                let keys: Vec<&str> = members.iter().map(|m| m.0).collect();
                let (values, cost) = self.fit_all(&nodes, &keys, budget.checked_sub(overhead)?)?;
                let map: Map<String, Value> =
                    keys.iter().map(|k| (*k).to_owned()).zip(values).collect();
                Some((Value::Object(map), overhead + cost))
            }
            Node::Array {
                items,
                head_len,
                skipped,
                min_items,
                ..
            } => self.fit_array(items, *head_len, *skipped, *min_items, budget),
        }
    }

    fn fit_string(
        &mut self,
        text: &str,
        min_chars: usize,
        budget: usize,
    ) -> Option<(Value, usize)> {
        let weights = self.planner.weights;
        let room = budget.checked_sub(weights.quotes)?;
        let gap = self
            .held
            .map_or(Gap::NONE, |held| held.structured_gap_of(&self.pointer.0));
        let joined = Joined::held_in_part([(gap, text)]);
        let line_align = self.planner.line_align;
        let len = joined.len();
        let keep = self.planner.keep;
        let head_only = || {
            let head = find_head_cut(&joined, line_align, weights, room, |_, c| c <= room)?;
            Some((head.text().to_owned(), len - head.end))
        };
        // The header line in the string (L17 where the reader reads the value): what it
        // costs beyond the shortest, and whether the run it stands for is long enough
        // that the string does not grow past a `maxLength` that held (a character is at
        // most 4 bytes: a run of 4 bytes per header byte is long enough unread, L13).
        let marker = |n: usize| weights.of_bytes(with_header(keep, n, "", "").as_bytes());
        let extra = |n: usize| marker(n) - marker(0);
        let header_fits = |dropped: usize, from: usize, to: usize| {
            let header = with_header(keep, dropped, "", "").len();
            dropped >= 4 * header || joined.chars_between(from, to) >= header
        };
        let (kept, dropped) = match keep {
            Keep::Tail if self.planner.header_in_strings => {
                let plain = find_cut(&joined, line_align, weights, room, |_, cost| cost <= room)?;
                let inner = room.checked_sub(marker(0));
                let marked = inner.and_then(|inner| {
                    find_cut(&joined, line_align, weights, inner, |p, c| {
                        extra(p) + c <= inner
                    })
                });
                match marked {
                    Some(cut) if cut.start > 0 && header_fits(cut.start, 0, cut.start) => {
                        (with_header(keep, cut.start, "", cut.tail()), cut.start)
                    }
                    _ => (plain.tail().to_owned(), plain.start),
                }
            }
            Keep::Tail => {
                let cut = find_cut(&joined, line_align, weights, room, |_, cost| cost <= room)?;
                (cut.tail().to_owned(), cut.start)
            }
            Keep::Head if self.planner.header_in_strings => {
                let (plain, plain_dropped) = head_only()?;
                let inner = room.checked_sub(marker(0));
                let marked = inner.and_then(|inner| {
                    find_head_cut(&joined, line_align, weights, inner, |q, c| {
                        c + extra(len - q) <= inner
                    })
                });
                match marked {
                    Some(head) if head.end < len && header_fits(len - head.end, head.end, len) => (
                        with_header(keep, len - head.end, head.text(), ""),
                        len - head.end,
                    ),
                    _ => (plain, plain_dropped),
                }
            }
            Keep::Head => head_only()?,
            Keep::HeadAndTail { head_per_mille } => {
                // L16 inside the string: its head, the header line, its tail.
                let inner = room.checked_sub(marker(0))?;
                let head_room = share_of(inner, head_per_mille);
                let head = find_head_cut(&joined, line_align, weights, head_room, |q, c| {
                    c + extra(len - q) <= head_room
                })?;
                let (q, head_cost) = (head.end, head.cost);
                let tail = find_cut_from(
                    &joined,
                    q,
                    line_align,
                    weights,
                    inner - head_cost,
                    |p, c| head_cost + extra(p - q) + c <= inner,
                )?;
                let dropped = tail.start - q;
                // The header line is ASCII: when the run it stands for has fewer
                // characters, the string would grow past a `maxLength` that held, so it
                // keeps its head alone.
                if !header_fits(dropped, q, tail.start) {
                    head_only()?
                } else {
                    (
                        with_header(keep, dropped, head.text(), tail.tail()),
                        dropped,
                    )
                }
            }
        };
        if min_chars > 0 && kept.chars().take(min_chars).count() < min_chars {
            return None;
        }
        let cost = weights.quotes + weights.of_bytes(kept.as_bytes());
        if dropped > 0 {
            self.cuts.push(StructuredCut {
                pointer: self.pointer.0.clone(),
                dropped_bytes: Some(dropped),
                dropped_items: None,
                original_bytes: Some(len),
                original_items: None,
            });
        }
        Some((Value::String(kept), cost))
    }

    fn fit_array(
        &mut self,
        items: &[Node<'_>],
        head_len: usize,
        skipped: usize,
        min_items: Option<usize>,
        budget: usize,
    ) -> Option<(Value, usize)> {
        let planner = self.planner;
        let brackets = planner.punctuation(2);
        let room = budget.checked_sub(brackets)?;
        let comma = planner.punctuation(1);
        let total = items.len() + skipped;
        // The index in the array of planned item `i`.
        let index = |i: usize| if i < head_len { i } else { i + skipped };
        // Whole items: the first ones within the head's room (L16), then the last ones
        // within what is left.
        let head_room = match planner.keep {
            Keep::Tail => 0,
            Keep::Head => room,
            Keep::HeadAndTail { head_per_mille } => share_of(room, head_per_mille),
        };
        let mut whole = 0usize;
        let mut first = 0;
        for item in items {
            let next = whole + item.cost() + if first > 0 { comma } else { 0 };
            if next > head_room {
                break;
            }
            whole = next;
            first += 1;
        }
        let mut last = 0;
        if planner.keep != Keep::Head {
            for item in items[first..].iter().rev() {
                let next = whole + item.cost() + if first + last > 0 { comma } else { 0 };
                if next > room {
                    break;
                }
                whole = next;
                last += 1;
            }
        }
        let fitting = first + last;
        let must_keep = min_items.unwrap_or(total);
        let (kept, cost) = if fitting >= must_keep.max(1) {
            let kept: Vec<Value> = items[..first]
                .iter()
                .chain(&items[items.len() - last..])
                .map(Node::whole)
                .collect();
            (kept, whole)
        } else {
            // Not even the least that must stay fits whole: cut inside the last items
            // (the first ones, for a cut that keeps a head).
            let keep = must_keep.max(1).min(items.len());
            let from = match planner.keep {
                Keep::Tail => items.len() - keep,
                Keep::Head | Keep::HeadAndTail { .. } => 0,
            };
            if keep < must_keep.min(total) {
                return None;
            }
            let chosen: Vec<&Node<'_>> = items[from..from + keep].iter().collect();
            let indices: Vec<String> = (from..from + keep).map(|i| index(i).to_string()).collect();
            let keys: Vec<&str> = indices.iter().map(String::as_str).collect();
            let commas = planner.punctuation(keep.saturating_sub(1));
            match room
                .checked_sub(commas)
                .and_then(|r| self.fit_all(&chosen, &keys, r))
            {
                Some((values, cost)) => (values, cost + commas),
                None if must_keep == 0 => (Vec::new(), 0),
                None => return None,
            }
        };
        let dropped = total - kept.len();
        if dropped > 0 {
            self.cuts.push(StructuredCut {
                pointer: self.pointer.0.clone(),
                dropped_bytes: None,
                dropped_items: Some(dropped),
                original_bytes: None,
                original_items: Some(total),
            });
        }
        Some((Value::Array(kept), brackets + cost))
    }

    /// Children cut to share `room`, with their total cost. `keys` name them in the
    /// pointer. What one child leaves of its share goes to the next.
    fn fit_all(
        &mut self,
        nodes: &[&Node<'_>],
        keys: &[&str],
        room: usize,
    ) -> Option<(Vec<Value>, usize)> {
        let costs: Vec<(usize, usize)> = nodes.iter().map(|n| (n.min_cost(), n.cost())).collect();
        let shares = water_fill(&costs, room)?;
        let mut carry = 0;
        let mut total = 0;
        let mut values = Vec::with_capacity(nodes.len());
        for ((node, key), share) in nodes.iter().zip(keys).zip(shares) {
            let at = self.pointer.push(key);
            let fitted = self.fit(node, share + carry);
            self.pointer.0.truncate(at);
            let (value, cost) = fitted?;
            carry = share + carry - cost;
            total += cost;
            values.push(value);
        }
        Some((values, total))
    }
}

/// What a structured cut works from: the result, its value and its text.
pub(super) struct StructuredCutter<'a> {
    limit: &'a Limit,
    source: &'a ToolResult,
    structured: &'a Value,
    schema: Option<&'a Value>,
    /// What is not held of the result (a streaming adapter's), if anything.
    held: Option<&'a HeldInPart>,
}

impl<'a> StructuredCutter<'a> {
    pub(super) fn new(
        limit: &'a Limit,
        source: &'a ToolResult,
        structured: &'a Value,
        schema: Option<&'a Value>,
    ) -> Self {
        Self {
            limit,
            source,
            structured,
            schema,
            held: None,
        }
    }

    /// The cut of a result held in part: its texts and strings lack the heads `held`
    /// says, and none of its text blocks is the value's serialization (checked by the
    /// caller).
    pub(super) fn held_in_part(mut self, held: &'a HeldInPart) -> Self {
        self.held = Some(held);
        self
    }

    /// The part of text block `block` that is not held.
    fn text_gap(&self, block: usize) -> Gap {
        self.held.map_or(Gap::NONE, |held| held.gap_of(block))
    }

    /// The cut result: the structured cut with all of `_meta`, then with its E3–E5 keys
    /// only; else the `ResultTooLarge` error (L15 c).
    pub(super) fn cut(&self) -> Limited {
        let blocks = &self.source.content;
        let serialization = match self.held {
            Some(_) => None,
            None => blocks.iter().position(|b| {
                b.as_text()
                    .is_some_and(|t| is_serialization_of(t, self.structured))
            }),
        };
        // The text blocks that are not the serialization, with their positions.
        let other: Vec<(usize, &Content)> = blocks
            .iter()
            .enumerate()
            .filter(|&(i, b)| Some(i) != serialization && b.as_text().is_some())
            .collect();
        let texts = Texts {
            serialization,
            serialization_len: serialization
                .and_then(|i| blocks[i].as_text())
                .map_or(0, str::len),
            serialization_first: serialization
                .is_some_and(|s| other.first().is_none_or(|&(o, _)| s < o)),
            other: Joined::held_in_part(
                other
                    .iter()
                    .filter_map(|&(i, b)| Some((self.text_gap(i), b.as_text()?))),
            ),
            other_blocks: other.iter().map(|&(_, b)| b).collect(),
            non_text: blocks.iter().filter(|b| b.as_text().is_none()).count(),
        };
        let weights = if serialization.is_some() {
            Weights::LITERAL_AND_TEXT
        } else {
            Weights::LITERAL
        };
        let planner = Planner {
            weights,
            line_align: self.limit.line_align,
            keep: self.limit.keep,
            header_in_strings: self.limit.marks_structured_cuts,
            over: self.limit.max_bytes + 1,
        };
        let root = planner.plan(
            self.structured,
            Applicable::root(self.schema, self.structured),
        );
        [MetaKept::All, MetaKept::ErrorKeys]
            .into_iter()
            .find_map(|kept| self.cut_with(&planner, &root, &texts, kept))
            .unwrap_or_else(|| self.too_large())
    }

    fn cut_with(
        &self,
        planner: &Planner,
        root: &Node<'_>,
        texts: &Texts<'_>,
        kept: MetaKept,
    ) -> Option<Limited> {
        let cap = self.limit.max_bytes;
        let meta = kept_meta(self.source.meta.as_ref(), kept, cap)?;
        for (k, v) in &self.source.extra {
            crate::wire::Meter::new(cap).member(k, v).ok()?;
        }
        // Everything but the value and the other text: the value as `null`, the other
        // text (if any) as one empty block.
        let empty = Cut {
            value: Value::Null,
            cuts: Vec::new(),
            text: OtherText::Empty,
        };
        let skeleton = self
            .assemble(&empty, texts, meta.clone(), kept)
            .wire_size_upto(cap)?;
        let room = (cap - skeleton) + planner.punctuation(4);
        let whole_text = texts.whole_cost(cap);
        let least_text = if texts.other_blocks.is_empty() {
            0
        } else {
            crate::wire::escaped_len(&with_header(self.limit.keep, texts.other.len(), "", ""))
                .min(whole_text)
        };
        // The report and the L17 header block, the parts whose size depends on the cut.
        let report_size = |cut: &Cut| {
            let report = self.report(cut, texts, kept);
            let header = header_block(&report, texts).map_or(0, |h| crate::wire::escaped_len(&h));
            serde_json::to_vec(&report).map_or(usize::MAX, |r| r.len() + header)
        };
        let empty_report = report_size(&empty);
        // What the value and the other text may cost: the room, less what the report
        // of the cuts adds to the skeleton's (known once the cuts are made).
        let mut parts = room;
        for _ in 0..8 {
            let shares = water_fill(
                &[(root.min_cost(), root.cost()), (least_text, whole_text)],
                parts,
            )?;
            let mut fitter = Fitter {
                planner,
                pointer: Pointer(String::new()),
                cuts: Vec::new(),
                held: self.held,
            };
            let (value, cost) = fitter.fit(root, shares[0])?;
            let (text, text_cost) = self.cut_other_text(texts, parts - cost, whole_text)?;
            let cut = Cut {
                value,
                cuts: fitter.cuts,
                text,
            };
            let used = cost + text_cost;
            let report = report_size(&cut).saturating_sub(empty_report);
            if used + report > room {
                parts = room.checked_sub(report)?.min(used.checked_sub(1)?);
                continue;
            }
            let result = self.assemble(&cut, texts, meta.clone(), kept);
            match result.wire_size_upto(cap) {
                Some(_) => {
                    return Some(Limited {
                        result,
                        truncation: Some(self.report(&cut, texts, kept)),
                        error_lead: false,
                    });
                }
                // Not reached while the costs above are exact; if they are not, cut more.
                None => parts = used.checked_sub(result.wire_size() - cap)?,
            }
        }
        None
    }

    /// The other text, whole if it fits in `room`, else its L3 cut: one block with the
    /// header line and the tail; with what it costs.
    fn cut_other_text(
        &self,
        texts: &Texts<'_>,
        room: usize,
        whole: usize,
    ) -> Option<(OtherText, usize)> {
        if texts.other_blocks.is_empty() {
            return Some((OtherText::Empty, 0));
        }
        if whole <= room {
            return Some((OtherText::Whole, whole));
        }
        let keep = self.limit.keep;
        let line_align = self.limit.line_align;
        let joined = &texts.other;
        let len = joined.len();
        // The cost of the header line with its line break(s), as L16 places it.
        let marker = |n: usize| crate::wire::escaped_len(&with_header(keep, n, "", ""));
        let (dropped, text) = match keep {
            Keep::Tail => {
                let cut = find_cut(joined, line_align, Weights::LITERAL, room, |p, cost| {
                    marker(p) + cost <= room
                })?;
                (cut.start, with_header(keep, cut.start, "", cut.tail()))
            }
            Keep::Head => {
                let head = find_head_cut(joined, line_align, Weights::LITERAL, room, |q, cost| {
                    marker(len - q) + cost <= room
                })?;
                let dropped = len - head.end;
                (dropped, with_header(keep, dropped, head.text(), ""))
            }
            Keep::HeadAndTail { head_per_mille } => {
                let room = room.checked_sub(marker(0))?;
                let extra = |n: usize| marker(n) - marker(0);
                let head_room = share_of(room, head_per_mille);
                let head =
                    find_head_cut(joined, line_align, Weights::LITERAL, head_room, |q, c| {
                        extra(len - q) + c <= head_room
                    })?;
                let (q, head_cost) = (head.end, head.cost);
                let tail = find_cut_from(
                    joined,
                    q,
                    line_align,
                    Weights::LITERAL,
                    room - head_cost,
                    |p, c| head_cost + extra(p - q) + c <= room,
                )?;
                let dropped = tail.start - q;
                (
                    dropped,
                    with_header(keep, dropped, head.text(), tail.tail()),
                )
            }
        };
        let cost = crate::wire::escaped_len(&text);
        Some((OtherText::Cut { dropped, text }, cost))
    }

    /// The report of a cut (L12, L17): the bytes of the text blocks before the cut and
    /// those dropped — of the other text and of the serialization, which a cut value
    /// shortens — and each cut value's.
    fn report(&self, cut: &Cut, texts: &Texts<'_>, kept: MetaKept) -> Truncation {
        let other_dropped = match cut.text {
            OtherText::Cut { dropped, .. } => dropped,
            OtherText::Whole | OtherText::Empty => 0,
        };
        let (serialization_dropped, serialization_bytes) = match texts.serialization {
            None => (0, 0),
            Some(_) => {
                let separator = if texts.other_blocks.is_empty() { 0 } else { 2 };
                let kept_len = serialized_len(&cut.value);
                (
                    texts.serialization_len.saturating_sub(kept_len),
                    texts.serialization_len + separator,
                )
            }
        };
        Truncation {
            dropped_bytes: other_dropped + serialization_dropped,
            original_bytes: texts.other.len() + serialization_bytes,
            dropped_blocks: texts.non_text,
            meta: kept,
            structured: cut.cuts.clone(),
        }
    }

    fn assemble(
        &self,
        cut: &Cut,
        texts: &Texts<'_>,
        mut meta: Map<String, Value>,
        kept: MetaKept,
    ) -> ToolResult {
        let mut content = match &cut.text {
            OtherText::Cut { text, .. } => vec![Content::text(text.clone())],
            OtherText::Whole => texts.other_blocks.iter().map(|b| (*b).clone()).collect(),
            OtherText::Empty if texts.other_blocks.is_empty() => Vec::new(),
            OtherText::Empty => vec![Content::text("")],
        };
        let report = self.report(cut, texts, kept);
        if texts.serialization.is_some() {
            let serialized = Content::text(cut.value.to_string());
            if texts.serialization_first {
                content.insert(0, serialized);
            } else {
                content.push(serialized);
            }
        }
        if let Some(header) = header_block(&report, texts) {
            content.insert(0, Content::text(header));
        }
        meta.insert(
            TRUNCATION_META_KEY.into(),
            serde_json::to_value(&report).unwrap_or(Value::Null),
        );
        ToolResult {
            content,
            structured_content: Some(cut.value.clone()),
            is_error: self.source.is_error,
            meta: Some(meta),
            result_type: self.source.result_type.clone(),
            extra: self.source.extra.clone(),
        }
    }

    /// L15 c: an `isError` result with the header and the tail of the result's text
    /// (its text blocks, then the suggestion), `error_type` `ResultTooLarge`.
    fn too_large(&self) -> Limited {
        let mut meta = self.source.meta.clone().unwrap_or_default();
        for key in ERROR_META_KEYS {
            meta.remove(key);
        }
        meta.insert("error_type".into(), RESULT_TOO_LARGE.into());
        meta.insert("expected".into(), true.into());
        meta.insert("suggestion".into(), RESULT_TOO_LARGE_SUGGESTION.into());
        let shell = ToolResult {
            content: Vec::new(),
            structured_content: None,
            is_error: Some(true),
            meta: Some(meta),
            result_type: self.source.result_type.clone(),
            extra: self.source.extra.clone(),
        };
        let texts: Vec<(Gap, &str)> = self
            .source
            .content
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((self.text_gap(i), c.as_text()?)))
            .collect();
        let json_text;
        let (joined, elided) = if texts.is_empty() {
            // Only the end of the JSON that a cut can keep is held (L13).
            let payload =
                super::PayloadTail::for_keep(self.source, self.limit.max_bytes(), self.limit.keep);
            json_text = payload.tail;
            let joined = Joined::new([json_text.as_str(), RESULT_TOO_LARGE_SUGGESTION]);
            (joined, payload.elided)
        } else {
            let joined = Joined::held_in_part(
                texts
                    .into_iter()
                    .chain([(Gap::NONE, RESULT_TOO_LARGE_SUGGESTION)]),
            );
            (joined, 0)
        };
        let cutter = Cutter {
            limit: self.limit,
            source: &shell,
            joined: &joined,
            elided,
            non_text: self
                .source
                .content
                .iter()
                .filter(|c| c.as_text().is_none())
                .count(),
        };
        cutter
            .cut(MetaKept::All)
            .or_else(|| cutter.cut(MetaKept::ErrorKeys))
            .unwrap_or_else(|| cutter.header_only())
    }
}

/// The text blocks of a result with `structuredContent`.
struct Texts<'a> {
    /// The index of the block that is the serialization of the value, if one is.
    serialization: Option<usize>,
    /// That block's length in bytes.
    serialization_len: usize,
    /// Whether that block comes before the other text blocks.
    serialization_first: bool,
    /// The other text blocks, joined (L3).
    other: Joined<'a>,
    other_blocks: Vec<&'a Content>,
    non_text: usize,
}

impl Texts<'_> {
    /// What the other text blocks add to a result whose other text is one empty block,
    /// counted up to `cap` (one more: over it).
    fn whole_cost(&self, cap: usize) -> usize {
        let mut empty = crate::wire::Meter::unlimited();
        let _ = Content::text("").measure(&mut empty);
        let empty = empty.used();
        let mut meter = crate::wire::Meter::new(cap + empty);
        let counted = self.other_blocks.iter().enumerate().try_for_each(|(i, b)| {
            meter.add(usize::from(i > 0))?;
            b.measure(&mut meter)
        });
        match counted {
            Ok(()) => meter.used().saturating_sub(empty),
            Err(_) => cap + 1,
        }
    }
}

/// L17: where the text blocks hold only the serialization of the value, a block with
/// the header line goes before it, so that a model reading the text sees the cut.
fn header_block(report: &Truncation, texts: &Texts<'_>) -> Option<String> {
    (texts.serialization.is_some() && texts.other_blocks.is_empty())
        .then(|| header_of(report.dropped_bytes, report.dropped_blocks))
}

/// The length of `value`'s compact serialization (as a cut writes it).
fn serialized_len(value: &Value) -> usize {
    crate::wire::value_size_upto(value, usize::MAX).unwrap_or_else(|| value.to_string().len())
}

/// What becomes of the text blocks that are not the serialization.
enum OtherText {
    /// There are none, or (measuring the skeleton) they stand as one empty block.
    Empty,
    /// They are kept as they were.
    Whole,
    /// They are cut per L3: one block, the header line and the kept tail.
    Cut { dropped: usize, text: String },
}

/// A structured cut in the making.
struct Cut {
    value: Value,
    cuts: Vec<StructuredCut>,
    text: OtherText,
}
