//! rsync's wildcards, on bytes: `?` is one byte but `/`, `*` a run of bytes without a `/`, two or
//! more `*` any run at all, `[...]` one byte of a class (`!` or `^` negates it; ranges `a-z`;
//! `[:alpha:]` and the other POSIX names, ASCII only; a `]` first in the class is a member; never
//! `/`), and a backslash makes the next byte literal. A pattern is compiled once into tokens and
//! matched by dynamic programming over (token, position), so no pattern can take more than
//! tokens × bytes steps.

/// A pattern that cannot be compiled: rsync would silently match nothing with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WildcardError {
    /// A `[` with no `]` to close it.
    #[error("a '[' is never closed by ']'")]
    UnclosedClass,
    /// A `[:name:]` that POSIX does not define.
    #[error("no character class [:{0}:]")]
    UnknownClass(String),
    /// A backslash with nothing after it.
    #[error("it ends with a lone backslash")]
    TrailingBackslash,
}

/// One member of a bracket class.
#[derive(Debug, Clone)]
enum Member {
    Byte(u8),
    Range(u8, u8),
    Named(fn(&u8) -> bool),
}

/// One step of a compiled pattern.
#[derive(Debug, Clone)]
enum Token {
    /// This byte.
    Byte(u8),
    /// `?`.
    One,
    /// `*`.
    Star,
    /// `**`.
    AnyRun,
    /// `[...]`.
    Class { negated: bool, members: Vec<Member> },
}

/// A compiled wildcard pattern.
#[derive(Debug, Clone)]
pub struct Wildcard {
    tokens: Vec<Token>,
}

impl Wildcard {
    /// Compile `pattern`.
    pub fn new(pattern: &[u8]) -> Result<Wildcard, WildcardError> {
        let mut tokens = Vec::with_capacity(pattern.len());
        let mut i = 0;
        while i < pattern.len() {
            match pattern[i] {
                b'\\' => {
                    let b = *pattern.get(i + 1).ok_or(WildcardError::TrailingBackslash)?;
                    tokens.push(Token::Byte(b));
                    i += 2;
                }
                b'?' => {
                    tokens.push(Token::One);
                    i += 1;
                }
                b'*' => {
                    let run = pattern[i..].iter().take_while(|&&b| b == b'*').count();
                    tokens.push(if run > 1 { Token::AnyRun } else { Token::Star });
                    i += run;
                }
                b'[' => {
                    let (token, next) = class(pattern, i + 1)?;
                    tokens.push(token);
                    i = next;
                }
                b => {
                    tokens.push(Token::Byte(b));
                    i += 1;
                }
            }
        }
        Ok(Wildcard { tokens })
    }

    /// True when the whole of `text` matches.
    pub fn matches(&self, text: &[u8]) -> bool {
        // `row[j]`: tokens from `t` on match `text[j..]`; built from the last token back.
        let n = text.len();
        let mut row = vec![false; n + 1];
        row[n] = true;
        let mut next = vec![false; n + 1];
        for token in self.tokens.iter().rev() {
            std::mem::swap(&mut row, &mut next);
            // `next` now holds the row of the tokens after this one.
            row[n] = matches!(token, Token::Star | Token::AnyRun) && next[n];
            for j in (0..n).rev() {
                let b = text[j];
                row[j] = match token {
                    Token::Byte(want) => b == *want && next[j + 1],
                    Token::One => b != b'/' && next[j + 1],
                    Token::Star => next[j] || (b != b'/' && row[j + 1]),
                    Token::AnyRun => next[j] || row[j + 1],
                    Token::Class { negated, members } => {
                        b != b'/' && members.iter().any(|m| m.has(b)) != *negated && next[j + 1]
                    }
                };
            }
        }
        row[0]
    }
}

impl Member {
    fn has(&self, b: u8) -> bool {
        match self {
            Member::Byte(x) => b == *x,
            Member::Range(lo, hi) => *lo <= b && b <= *hi,
            Member::Named(test) => test(&b),
        }
    }
}

/// The class whose contents start at `at` (just after its `[`), and where the pattern goes on.
/// As rsync reads it: the first member may be `]`; `-` between two members makes a range, and is
/// a member itself first, last, or right after a range or a named class; a `[:` with no `:]`
/// before the next `]` is a `[` member.
fn class(p: &[u8], mut at: usize) -> Result<(Token, usize), WildcardError> {
    let negated = matches!(p.get(at), Some(b'!' | b'^'));
    if negated {
        at += 1;
    }
    let mut members = Vec::new();
    // The last member that can start a range.
    let mut prev: Option<u8> = None;
    let mut first = true;
    loop {
        let &c = p.get(at).ok_or(WildcardError::UnclosedClass)?;
        if c == b']' && !first {
            return Ok((Token::Class { negated, members }, at + 1));
        }
        first = false;
        match c {
            b'\\' => {
                let &e = p.get(at + 1).ok_or(WildcardError::UnclosedClass)?;
                members.push(Member::Byte(e));
                prev = Some(e);
                at += 2;
            }
            b'-' if prev.is_some() && p.get(at + 1).is_some_and(|&n| n != b']') => {
                let (mut hi, mut step) = (p[at + 1], 2);
                if hi == b'\\' {
                    hi = *p.get(at + 2).ok_or(WildcardError::UnclosedClass)?;
                    step = 3;
                }
                let lo = prev.take().unwrap_or(0);
                members.push(Member::Range(lo, hi));
                at += step;
            }
            b'[' if p.get(at + 1) == Some(&b':') => {
                let start = at + 2;
                let close = p[start..]
                    .iter()
                    .position(|&b| b == b']')
                    .map(|k| start + k)
                    .ok_or(WildcardError::UnclosedClass)?;
                if close > start && p[close - 1] == b':' {
                    let name = &p[start..close - 1];
                    members.push(Member::Named(named(name).ok_or_else(|| {
                        WildcardError::UnknownClass(String::from_utf8_lossy(name).into_owned())
                    })?));
                    prev = None;
                    at = close + 1;
                } else {
                    members.push(Member::Byte(b'['));
                    prev = Some(b'[');
                    at += 1;
                }
            }
            _ => {
                members.push(Member::Byte(c));
                prev = Some(c);
                at += 1;
            }
        }
    }
}

/// The test of a POSIX class name, on ASCII.
fn named(name: &[u8]) -> Option<fn(&u8) -> bool> {
    Some(match name {
        b"alnum" => u8::is_ascii_alphanumeric,
        b"alpha" => u8::is_ascii_alphabetic,
        b"blank" => |b: &u8| *b == b' ' || *b == b'\t',
        b"cntrl" => u8::is_ascii_control,
        b"digit" => u8::is_ascii_digit,
        b"graph" => u8::is_ascii_graphic,
        b"lower" => u8::is_ascii_lowercase,
        b"print" => |b: &u8| b.is_ascii_graphic() || *b == b' ',
        b"punct" => u8::is_ascii_punctuation,
        b"space" => |b: &u8| b" \t\n\r\x0b\x0c".contains(b),
        b"upper" => u8::is_ascii_uppercase,
        b"xdigit" => u8::is_ascii_hexdigit,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, t: &str) -> bool {
        Wildcard::new(p.as_bytes()).unwrap().matches(t.as_bytes())
    }

    #[test]
    fn a_star_stays_within_a_name_and_two_cross_slashes() {
        assert!(m("*.o", "x.o"));
        assert!(!m("*.o", "a/x.o"));
        assert!(m("**.o", "a/x.o"));
        assert!(m("a/*/c", "a/b/c"));
        assert!(!m("a/*/c", "a/b/b/c"));
        assert!(m("a/**/c", "a/b/b/c"));
        assert!(!m("a/**/c", "a/c"), "the slashes around ** are literal");
        assert!(m("a***", "a/b/c"));
        assert!(m("*", ""));
        assert!(!m("?", ""));
        assert!(!m("?", "/"));
        assert!(m("a?c", "abc"));
    }

    #[test]
    fn classes_read_as_rsync_reads_them() {
        assert!(m("[abc]", "b"));
        assert!(!m("[abc]", "d"));
        assert!(m("[!abc]", "d") && m("[^abc]", "d"));
        assert!(!m("[!abc]", "/"), "a class never matches a slash");
        assert!(m("[]]", "]") && m("[!]]", "a") && !m("[!]]", "]"));
        assert!(m("[a-c]", "b") && !m("[a-c]", "d"));
        assert!(m("[a-]", "-") && m("[-a]", "-"));
        assert!(m("[[:digit:]x]", "7") && m("[[:digit:]x]", "x") && !m("[[:digit:]]", "a"));
        assert!(m("[[:alpha:]-]", "-"), "a - after a named class is a member");
        assert!(m("[[:x]", "[") && m("[[:x]", ":") && m("[[:x]", "x"));
        assert!(m("[\\]]", "]") && m("[a-\\z]", "q"));
    }

    #[test]
    fn a_backslash_makes_the_next_byte_literal() {
        assert!(m("\\*", "*") && !m("\\*", "a"));
        assert!(m("a\\?", "a?") && !m("a\\?", "ab"));
    }

    #[test]
    fn bad_patterns_are_refused_with_the_reason() {
        let err = |p: &[u8]| Wildcard::new(p).unwrap_err();
        assert_eq!(err(b"a[bc"), WildcardError::UnclosedClass);
        assert_eq!(err(b"["), WildcardError::UnclosedClass);
        assert_eq!(err(b"[[:nope:]]"), WildcardError::UnknownClass("nope".into()));
        assert_eq!(err(b"a\\"), WildcardError::TrailingBackslash);
    }

    #[test]
    fn many_stars_cost_no_more_than_tokens_times_bytes() {
        let p = "*a*a*a*a*a*a*a*a*a*a*a*a*b";
        assert!(!m(p, &"a".repeat(4000)));
    }
}
