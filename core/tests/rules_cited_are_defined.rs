//! The rules live in the repository (SPEC A0, issue 34): every rule code the non-test
//! source and the docs cite (`E12`, `(SPEC L18)`, `L1–L19`) is defined in
//! `docs/rules.md`, each exactly once, under an anchor named after it
//! (`<a id="l18"></a>**L18**`), and every link into `docs/rules.md#…` names an anchor
//! that exists. In `tests/README.md`, the map of which test covers which rule, each
//! code in its prose links to its rule (`[L18]`, with `[L18]: ../docs/rules.md#l18`
//! at the end of the file).
//!
//! A code is a family letter (E V P L R G O A B) and a number of one or two digits,
//! standing as a word of its own. A range `E3–E5` (en dash or hyphen, one family) cites
//! every rule from its first to its last. The one thing in the sources that looks like
//! a code and is not one is a Rust path segment (`pulp::x86::V3`, a CPU level): a code
//! right after `::` is not a citation.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const FAMILIES: &[u8] = b"EVPLRGOAB";
const RULES: &str = "docs/rules.md";

/// The repository's root (the core is one level below it).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("core/ has a parent")
        .to_path_buf()
}

/// Where rules are cited: the non-test sources and the docs, relative to the root.
fn cited_in() -> Vec<PathBuf> {
    let root = root();
    let mut dirs = vec![
        root.join("core/src"),
        root.join("adapters/python/python"),
        root.join("fuzz/fuzz_targets"),
    ];
    let mut files: Vec<PathBuf> = [
        "README.md",
        "CHANGELOG.md",
        "BENCHMARKS.md",
        "tests/README.md",
        "core/README.md",
        "fuzz/README.md",
        RULES,
    ]
    .iter()
    .map(|f| root.join(f))
    .collect();
    let mut adapters: Vec<PathBuf> = fs::read_dir(root.join("adapters"))
        .expect("adapters/ is readable")
        .map(|entry| entry.expect("an adapters/ entry").path())
        .filter(|path| path.is_dir())
        .collect();
    adapters.sort();
    for adapter in adapters {
        dirs.push(adapter.join("src"));
        files.push(adapter.join("README.md"));
    }
    for dir in dirs {
        walk(&dir, &mut files);
    }
    files.retain(|path| path.is_file());
    files.sort();
    files.dedup();
    files
}

/// The `.rs`, `.py`, `.pyi` and `.md` files under `dir` (none if it is absent).
fn walk(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            walk(&path, into);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("rs" | "py" | "pyi" | "md")
        ) {
            into.push(path);
        }
    }
}

fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// A code standing as a word at `at` in `line`: its family, number and end.
fn code_at(line: &[u8], at: usize) -> Option<(u8, u32, usize)> {
    let family = *line.get(at)?;
    if !FAMILIES.contains(&family) || (at > 0 && is_word(line[at - 1])) {
        return None;
    }
    let digits = line[at + 1..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let end = at + 1 + digits;
    if !(1..=2).contains(&digits) || line.get(end).is_some_and(|&b| is_word(b)) {
        return None;
    }
    let number = std::str::from_utf8(&line[at + 1..end]).ok()?.parse().ok()?;
    Some((family, number, end))
}

/// Every code `line` cites, ranges spelled out.
fn codes_in(line: &str) -> Vec<String> {
    let bytes = line.as_bytes();
    let mut codes = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let Some((family, number, end)) = code_at(bytes, at) else {
            at += 1;
            continue;
        };
        if line[..at].ends_with("::") {
            at = end;
            continue;
        }
        let name = |n: u32| format!("{}{n}", family as char);
        codes.push(name(number));
        let rest = &line[end..];
        let after_dash = rest
            .strip_prefix('–')
            .or_else(|| rest.strip_prefix('-'))
            .map(|after| line.len() - after.len());
        if let Some(next) = after_dash
            && let Some((last_family, last, _)) = code_at(bytes, next)
            && last_family == family
            && last > number
        {
            codes.extend((number + 1..last).map(name));
        }
        at = end;
    }
    codes
}

/// Where each code is cited: the first `file:line`, and how many citations in all.
fn citations() -> BTreeMap<String, (String, usize)> {
    let root = root();
    let mut cited: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for path in cited_in() {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let shown = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for (n, line) in text.lines().enumerate() {
            for code in codes_in(line) {
                let entry = cited
                    .entry(code)
                    .or_insert_with(|| (format!("{shown}:{}", n + 1), 0));
                entry.1 += 1;
            }
        }
    }
    cited
}

/// The anchors `docs/rules.md` sets (`<a id="…"></a>`), each with the bold word that
/// follows it, and the line it is on.
fn anchors() -> Vec<(String, String, usize)> {
    let text = fs::read_to_string(root().join(RULES)).expect("docs/rules.md is readable");
    let mut anchors = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(start) = rest.find("<a id=\"") {
            rest = &rest[start + "<a id=\"".len()..];
            let id_end = rest.find('"').expect("an id's closing quote");
            let id = rest[..id_end].to_owned();
            rest = &rest[id_end..];
            let bold = rest
                .strip_prefix("\"></a>**")
                .and_then(|after| after.split_once("**"))
                .map(|(word, _)| word.to_owned())
                .unwrap_or_default();
            anchors.push((id, bold, n + 1));
        }
    }
    anchors
}

/// The rules `docs/rules.md` defines: every anchor followed by a bold code, by code,
/// with the lines that define it.
fn definitions() -> BTreeMap<String, Vec<usize>> {
    let mut defined: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (_, bold, line) in anchors() {
        if codes_in(&bold) == [bold.as_str()] {
            defined.entry(bold).or_default().push(line);
        }
    }
    defined
}

#[test]
fn every_cited_rule_is_defined_in_docs_rules_md() {
    let defined = definitions();
    let undefined: Vec<String> = citations()
        .into_iter()
        .filter(|(code, _)| !defined.contains_key(code))
        .map(|(code, (at, count))| format!("{code}: cited {count} time(s), first at {at}"))
        .collect();
    assert!(
        undefined.is_empty(),
        "rule codes cited but not defined in {RULES}:\n{}",
        undefined.join("\n")
    );
}

#[test]
fn no_rule_is_defined_twice() {
    let twice: Vec<String> = definitions()
        .into_iter()
        .filter(|(_, lines)| lines.len() > 1)
        .map(|(code, lines)| format!("{code}: {RULES} lines {lines:?}"))
        .collect();
    assert!(
        twice.is_empty(),
        "rules defined more than once:\n{}",
        twice.join("\n")
    );
    let mut ids: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (id, _, line) in anchors() {
        ids.entry(id).or_default().push(line);
    }
    let repeated: Vec<String> = ids
        .into_iter()
        .filter(|(_, lines)| lines.len() > 1)
        .map(|(id, lines)| format!("#{id}: {RULES} lines {lines:?}"))
        .collect();
    assert!(
        repeated.is_empty(),
        "anchors set more than once:\n{}",
        repeated.join("\n")
    );
}

#[test]
fn each_rules_anchor_is_its_code_in_lower_case() {
    let is_code = |word: &str| codes_in(word) == [word];
    let wrong: Vec<String> = anchors()
        .into_iter()
        .filter(|(id, bold, _)| is_code(bold) || is_code(&id.to_uppercase()))
        .filter(|(id, bold, _)| *id != bold.to_lowercase())
        .map(|(id, bold, line)| format!("{RULES}:{line}: **{bold}** under #{id}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "rules under the wrong anchor:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_link_into_docs_rules_md_names_an_anchor() {
    let ids: Vec<String> = anchors().into_iter().map(|(id, ..)| id).collect();
    let root = root();
    let mut broken = Vec::new();
    for path in cited_in() {
        let text = fs::read_to_string(&path).expect("a readable source");
        let shown = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for (n, line) in text.lines().enumerate() {
            for (start, _) in line.match_indices("rules.md#") {
                let id: String = line[start + "rules.md#".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if !ids.contains(&id) {
                    broken.push(format!("{shown}:{}: #{id}", n + 1));
                }
            }
            if path.ends_with(RULES) {
                for (start, _) in line.match_indices("](#") {
                    let id: String = line[start + 3..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    if !ids.contains(&id) {
                        broken.push(format!("{shown}:{}: #{id}", n + 1));
                    }
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to no anchor of {RULES}:\n{}",
        broken.join("\n")
    );
}

/// The prose of a Markdown text, line by line: fenced blocks and code spans blanked
/// (a span may run over lines; a blank line ends it).
fn prose(text: &str) -> Vec<String> {
    let (mut fenced, mut in_span) = (false, false);
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        if fenced || line.starts_with("```") {
            lines.push(String::new());
            continue;
        }
        if line.trim().is_empty() {
            in_span = false;
        }
        let mut kept = String::new();
        for c in line.chars() {
            if c == '`' {
                in_span = !in_span;
            }
            kept.push(if in_span || c == '`' { ' ' } else { c });
        }
        lines.push(kept);
    }
    lines
}

#[test]
fn tests_readme_links_each_rule_it_names() {
    const MAP: &str = "tests/README.md";
    let text = fs::read_to_string(root().join(MAP)).expect("tests/README.md is readable");
    let mut unlinked = Vec::new();
    for (n, line) in prose(&text).iter().enumerate() {
        for (at, _) in line.char_indices() {
            let Some((family, number, end)) = code_at(line.as_bytes(), at) else {
                continue;
            };
            let code = format!("{}{number}", family as char);
            let linked = line[..at].ends_with('[')
                && line[end..].starts_with(']')
                && text.contains(&format!("\n[{code}]: ../{RULES}#{}\n", code.to_lowercase()));
            if !linked {
                unlinked.push(format!("{MAP}:{}: {code}", n + 1));
            }
        }
    }
    assert!(
        unlinked.is_empty(),
        "rule codes in {MAP} not written [E2] with a `[E2]: ../{RULES}#e2` below:\n{}",
        unlinked.join("\n")
    );
}

#[test]
fn the_matcher_reads_codes_and_ranges_and_nothing_else() {
    assert_eq!(
        codes_in("the hard cap (SPEC L4), E12: and L15(c)"),
        ["L4", "E12", "L15"]
    );
    assert_eq!(codes_in("E3–E5 and O1-O2"), ["E3", "E4", "E5", "O1", "O2"]);
    assert_eq!(
        codes_in("L8/L9, B3's, \"V3\", **A0**"),
        ["L8", "L9", "B3", "V3", "A0"]
    );
    // Different families, or a range backwards: each end alone.
    assert_eq!(codes_in("E2–L3, L9–L8"), ["E2", "L3", "L9", "L8"]);
    // Not codes: within a word, three digits, hex, a lower-case letter, a Rust path.
    assert!(codes_in("E2E X86_V3 L123 0xE0 \\x1B U+001B l18 e12_test").is_empty());
    assert!(codes_in("static X: Option<pulp::x86::V3> = pulp::x86::V3::try_new").is_empty());
}
