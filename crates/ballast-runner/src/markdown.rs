//! Text from a config in the Markdown report: how it is written so that it reads as itself
//! and cannot change the report's structure.
//!
//! Titles, series names, reference labels, axis labels, grid variables, item ids and the
//! scale description go through [`text`]; config paths, commands and reference labels shown
//! as code through [`code`]; warnings through [`line`]; the notes, Markdown by design,
//! through [`notes`]; the item's name as a link destination through [`link`]. The rules (CommonMark, with GitHub's extensions):
//!
//! - [`text`]: every control character (line breaks and tabs included) becomes a space, so the
//!   text stays inside its line and cannot start a heading, list, quote, HTML block or table
//!   row. A backslash goes before each of `` \ ` < > | & # $ ~ `` (code, raw HTML and
//!   comments, autolinks, table cells, entities, headings' closing `#`, math, strikethrough).
//!   A run of `*` or `_` is escaped when it could open emphasis (a left-flanking run; for `_`
//!   one that is not also inside a word); a closing-only run stays as written (`β*`, `Γ_α`).
//!   A `[`…`]` pair whose `]` is followed by `(` or `[` (a link, an image, a reference) is
//!   escaped, and so is a `]` without a partner; a plain pair such as `Greedy[2]` stays (it
//!   is a link only if the report defines that label, which only the notes could), and so
//!   does a `[` without a partner (`uniform [0, 2)`: no `]` follows it on its line). Inside
//!   the text of a link ([`link_text`]: the item's name in the links to its files) every
//!   bracket is escaped. Any other character is written as it is.
//! - [`code`]: a code span, with control characters as spaces and a fence of backticks longer
//!   than any run inside (padded with spaces where the content starts or ends with one).
//! - [`line`]: generated prose that may quote config text: control characters as spaces, and
//!   a `<` that could open an HTML tag or comment (followed by a letter, `/`, `!` or `?`)
//!   written as `&lt;`.
//! - [`link`]: every byte but ASCII letters, digits, `-`, `.`, `_`, `~` percent-encoded.
//! - [`notes`]: kept as Markdown, with two exceptions that keep them from swallowing the
//!   sections after them: a line that would open an HTML block (up to three spaces, then `<`
//!   and a letter, `/`, `!` or `?`) has that `<` written as `&lt;`, and a fenced code block
//!   still open at the end is closed. Control characters other than tabs and line breaks
//!   become spaces.
//!
//! Every committed report was checked to be unchanged by these rules.

/// Text that renders as itself inside a line of the report (the rules are in the module docs).
pub(crate) fn text(s: &str) -> String {
    escape(s, false)
}

/// [`text`] for the text of a link, `[here](…)`: every bracket escaped.
pub(crate) fn link_text(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, all_brackets: bool) -> String {
    let chars: Vec<char> = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let brackets = escaped_brackets(&chars);
    let mut out = String::with_capacity(s.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' | '_' => {
                let mut j = i;
                while j < chars.len() && chars[j] == c {
                    j += 1;
                }
                let prev = i.checked_sub(1).map(|k| chars[k]);
                let escape = may_open_emphasis(c, prev, chars.get(j).copied());
                for _ in i..j {
                    if escape {
                        out.push('\\');
                    }
                    out.push(c);
                }
                i = j;
                continue;
            }
            '\\' | '`' | '<' | '>' | '|' | '&' | '#' | '$' | '~' => out.push('\\'),
            '[' | ']' if all_brackets || brackets[i] => out.push('\\'),
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Whether a run of `c` (`*` or `_`) between `prev` and `next` could open emphasis. The text
/// is written after a space or punctuation and before a space, a line end or ASCII
/// punctuation, so the ends count as such; unknown characters count the way that escapes.
fn may_open_emphasis(c: char, prev: Option<char>, next: Option<char>) -> bool {
    // Before the run: whitespace or punctuation as far as opening goes.
    let prev_open = prev.is_none_or(|p| !p.is_alphanumeric());
    let left_flanking = match next {
        Some(' ') => false,
        None => prev_open,
        Some(n) if n.is_ascii_punctuation() => prev_open,
        Some(_) => true,
    };
    // `_` inside a word (a letter or digit before it) does not open.
    let inside_word = prev.is_some_and(char::is_alphanumeric);
    left_flanking && (c == '*' || !inside_word)
}

/// For each character of `chars`, whether it is a bracket to escape: the two brackets of a
/// pair whose `]` is followed by `(` or `[`, and a `]` without a partner (a `[` without one
/// is plain text: no `]` follows it on its line).
fn escaped_brackets(chars: &[char]) -> Vec<bool> {
    let mut escape = vec![false; chars.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '[' => open.push(i),
            ']' => match open.pop() {
                Some(o) => {
                    if matches!(chars.get(i + 1), Some('(' | '[')) {
                        escape[o] = true;
                        escape[i] = true;
                    }
                }
                None => escape[i] = true,
            },
            _ => {}
        }
    }
    escape
}

/// A code span showing `s` (control characters as spaces).
pub(crate) fn code(s: &str) -> String {
    let s: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = s.starts_with('`')
        || s.ends_with('`')
        || s.is_empty()
        || (s.starts_with(' ') && s.ends_with(' ') && !s.trim().is_empty());
    let sp = if pad { " " } else { "" };
    format!("{fence}{sp}{s}{sp}{fence}")
}

/// A relative link destination for the file name `s`: every byte other than ASCII letters,
/// digits, `-`, `.`, `_` and `~` percent-encoded (`a b` → `a%20b`).
pub(crate) fn link(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether `<` followed by `next` could open an HTML tag, comment or declaration.
fn opens_html(next: Option<char>) -> bool {
    next.is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?'))
}

/// Generated prose on one line (a warning), which may quote config text.
pub(crate) fn line(s: &str) -> String {
    let chars: Vec<char> = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '<' && opens_html(chars.get(i + 1).copied()) {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    out
}

/// The opening of a fenced code block on `l`, if any: its character and length.
pub(crate) fn fence_of(l: &str) -> Option<(char, usize)> {
    let indent = l.len() - l.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &l[indent..];
    let c = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let n = rest.len() - rest.trim_start_matches(c).len();
    // A backtick fence's info string holds no backtick.
    (n >= 3 && (c == '~' || !rest[n..].contains('`'))).then_some((c, n))
}

/// The notes of a config as Markdown that ends where they end (rules in the module docs).
pub(crate) fn notes(s: &str) -> String {
    let s = s.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(s.len());
    let mut fence: Option<(char, usize)> = None;
    for (k, l) in s.split('\n').enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let l: String =
            l.chars().map(|c| if c.is_control() && c != '\t' { ' ' } else { c }).collect();
        if let Some((c, n)) = fence {
            let closes = fence_of(&l)
                .is_some_and(|(c2, n2)| c2 == c && n2 >= n && l.trim().chars().all(|x| x == c));
            if closes {
                fence = None;
            }
            out.push_str(&l);
            continue;
        }
        fence = fence_of(&l);
        let indent = l.len() - l.trim_start_matches(' ').len();
        if indent <= 3 && l[indent..].starts_with('<') && opens_html(l[indent + 1..].chars().next())
        {
            out.push_str(&l[..indent]);
            out.push_str("&lt;");
            out.push_str(&l[indent + 1..]);
        } else {
            out.push_str(&l);
        }
    }
    if let Some((c, n)) = fence {
        out.push('\n');
        out.extend(std::iter::repeat_n(c, n));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_kinds_of_names_are_unchanged() {
        for s in [
            "Greedy[2] (on-line)",
            "(1+beta) beta=0.7 beta*",
            "(1+β), β = 0.7·β*",
            "Γ_α over time (α = n/b and 0.1): batched Two-Choice vs (1+β), b = 50n, n = 1000",
            "Reallocation: max load of equalize{d} vs Greedy[d] (Czumaj–Stemann)",
            "Batched Two-Choice vs b, n = 10^4 (Figure 12.2)",
            "two-point {0, 2}",
            "uniform [0, 2)",
            "τ/n (window / bins)",
            "raw.out",
            "fig8_1",
            "max_load_vs_lambda",
        ] {
            assert_eq!(text(s), s);
        }
        assert_eq!(code("configs/a/b.toml"), "`configs/a/b.toml`");
    }

    #[test]
    fn structure_characters_are_escaped() {
        assert_eq!(text("a\nb\r\n# c\t|d"), "a b  \\# c \\|d");
        assert_eq!(text("<!-- x"), "\\<!-- x");
        assert_eq!(text("*a* _b_ **c** a*b*c"), "\\*a* \\_b_ \\*\\*c** a\\*b\\*c");
        assert_eq!(text("[x](http://e) ![i][r] a]b [c"), "\\[x\\](http://e) !\\[i\\][r] a\\]b [c");
        assert_eq!(link_text("a[b]"), "a\\[b\\]");
        assert_eq!(text("`x` &amp; $1$ ~~s~~ \\"), "\\`x\\` \\&amp; \\$1\\$ \\~\\~s\\~\\~ \\\\");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a\nb"), "`a b`");
        assert_eq!(link("fig8_1"), "fig8_1");
        assert_eq!(link("a b)(é"), "a%20b%29%28%C3%A9");
        assert_eq!(line("bad <!-- x\ny < 2 <b>"), "bad &lt;!-- x y < 2 &lt;b>");
    }

    #[test]
    fn notes_stay_markdown_but_cannot_swallow_what_follows() {
        let kept = "Greedy[d] (`std::function<size_t>`) and *emphasis*\n\n- a list\n\n| t | u |\n|---|---|\n";
        assert_eq!(notes(kept), kept);
        assert_eq!(notes("x\n<!-- hide\n  <div>"), "x\n&lt;!-- hide\n  &lt;div>");
        assert_eq!(notes("```\ncode"), "```\ncode\n```");
        assert_eq!(notes("~~~~\n~~~\n"), "~~~~\n~~~\n\n~~~~");
        assert_eq!(notes("```\n<!--\n```\n<x"), "```\n<!--\n```\n&lt;x");
    }
}
