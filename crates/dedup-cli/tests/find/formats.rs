//! Output formats and order: exact text, -0, csv and json; root spelling;
//! ordering of groups and paths; -o FILE; -q; the summary on stderr.

use crate::common;

use common::*;
use std::fs;

/// t/big1..3 (300 bytes), t/s1, t/s2 (100 bytes), t/u (unique)
fn tree(t: &std::path::Path) {
    let big = pattern(300, 1);
    write(t, "t/big1", &big);
    write(t, "t/big2", &big);
    write(t, "t/big3", &big);
    let small = pattern(100, 2);
    write(t, "t/s1", &small);
    write(t, "t/s2", &small);
    write(t, "t/u", &pattern(300, 3));
}

const TEXT: &[u8] = b"t/big1\nt/big2\nt/big3\n\nt/s1\nt/s2\n\n";

#[test]
fn text_output_is_exact() {
    let d = tmp();
    let t = d.path();
    tree(t);
    let out = find(t, &["t"]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(TEXT),
        "{}",
        out.dump()
    );
}

#[test]
fn print0_output_is_exact() {
    let d = tmp();
    let t = d.path();
    tree(t);
    for flag in ["-0", "--print0"] {
        let out = find(t, &[flag, "t"]);
        out.assert_code(0);
        assert_eq!(
            out.stdout,
            b"t/big1\0t/big2\0t/big3\0\0t/s1\0t/s2\0\0".to_vec(),
            "{}",
            out.dump()
        );
    }
}

#[test]
fn default_root_is_the_current_directory() {
    let d = tmp();
    let t = d.path();
    tree(t);
    let out = find::<&str>(&t.join("t"), &[]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "./big1\n./big2\n./big3\n\n./s1\n./s2\n\n",
        "{}",
        out.dump()
    );
    let out = find(&t.join("t"), &["."]);
    out.assert_code(0);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "./big1\n./big2\n./big3\n\n./s1\n./s2\n\n");
}

#[test]
fn root_spelling_is_kept_and_trailing_slashes_removed() {
    let d = tmp();
    let t = d.path();
    tree(t);
    for root in ["t/", "t//", "t///"] {
        let out = find(t, &[root]);
        out.assert_code(0);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(TEXT),
            "root {root:?}"
        );
    }
    let out = find(t, &["./t"]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "./t/big1\n./t/big2\n./t/big3\n\n./t/s1\n./t/s2\n\n"
    );
    let abs = t.join("t");
    let abs = abs.to_str().unwrap();
    let out = find(t, &[abs]);
    out.assert_code(0);
    let expected = format!("{abs}/big1\n{abs}/big2\n{abs}/big3\n\n{abs}/s1\n{abs}/s2\n\n");
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    let out = find(t, &["t/../t"]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "t/../t/big1\nt/../t/big2\nt/../t/big3\n\nt/../t/s1\nt/../t/s2\n\n"
    );
}

#[test]
fn json_report_follows_the_contract() {
    let d = tmp();
    let t = d.path();
    tree(t);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(r.raw["version"], 1);
    assert_eq!(r.raw["tool"], "dedup 0.1.0");
    assert_eq!(r.raw["roots"], serde_json::json!([{"text": "t"}]));
    // exact groups, in order, with their sizes
    let order: Vec<(u64, Vec<String>)> = r
        .groups
        .iter()
        .map(|g| {
            (
                g.size,
                g.files.iter().map(|f| String::from_utf8_lossy(&f.path).into_owned()).collect(),
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            (300, vec!["t/big1".into(), "t/big2".into(), "t/big3".into()]),
            (100, vec!["t/s1".into(), "t/s2".into()]),
        ]
    );
    // dev, ino and mtime_ns are those of the files
    for g in &r.groups {
        for f in &g.files {
            let p = t.join(String::from_utf8(f.path.clone()).unwrap());
            let (dev, ino, mtime_ns) = ident(&p);
            assert_eq!((f.dev, f.ino, f.mtime_ns), (dev, ino, mtime_ns), "{p:?}");
        }
    }
    assert_eq!(
        r.summary,
        Summary {
            files_scanned: 6,
            groups: 2,
            redundant_files: 3,
            redundant_bytes: 2 * 300 + 100,
            errors: 0
        }
    );
}

#[test]
fn json_roots_are_listed_as_given() {
    let d = tmp();
    let t = d.path();
    tree(t);
    fs::create_dir(bpath(t, b"r\xff")).unwrap();
    let out = run(cmd(t).args(["find", "--format", "json", "t"]).arg(os(b"r\xff")));
    out.assert_code(0);
    let r = out.json();
    assert_eq!(r.roots, vec![b"t".to_vec(), b"r\xff".to_vec()]);
    assert!(r.raw["roots"][1].get("bytes").is_some(), "{}", r.raw["roots"]);
}

#[test]
fn json_bytes_paths_use_standard_padded_base64() {
    let d = tmp();
    let t = d.path();
    let data = pattern(10, 4);
    // lengths chosen so that both kinds of padding occur
    write_b(t, b"t/\xff", &data); // "t/\xff" = 3 bytes: no padding
    write_b(t, b"t/\xfe\xfe", &data); // 4 bytes: "=="
    write_b(t, b"t/\xfd\xfd?>", &data); // 6 bytes, '+' and '/' likely
    write_b(t, b"t/\xfb\xff\xbf", &data); // 5 bytes: "="
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    use base64::Engine as _;
    let mut seen = 0;
    for f in out.json().raw["groups"][0]["files"].as_array().unwrap() {
        let s = f["path"]["bytes"].as_str().expect("bytes path");
        let decoded = base64::engine::general_purpose::STANDARD.decode(s).unwrap();
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(&decoded),
            s,
            "not canonical padded standard base64"
        );
        seen += 1;
    }
    assert_eq!(seen, 4);
}

/// Splits one CSV record line (RFC 4180 quoting, no embedded newlines).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if cur.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut cur)),
            (_, c) => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

#[test]
fn csv_output_is_exact() {
    let d = tmp();
    let t = d.path();
    tree(t);
    let out = find(t, &["--format", "csv", "t"]);
    out.assert_code(0);
    let mut expected = String::from("group,size,path,dev,ino,mtime_ns\n");
    for (g, size, names) in [(1, 300, &["big1", "big2", "big3"][..]), (2, 100, &["s1", "s2"][..])] {
        for n in names {
            let (dev, ino, m) = ident(&t.join("t").join(n));
            expected.push_str(&format!("{g},{size},t/{n},{dev},{ino},{m}\n"));
        }
    }
    let got = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert_eq!(got, expected, "{}", out.dump());
}

#[test]
fn csv_quotes_awkward_paths() {
    let d = tmp();
    let t = d.path();
    let data = pattern(10, 5);
    write(t, "t/a,b", &data);
    write(t, "t/q\"uote", &data);
    let out = find(t, &["--format", "csv", "t"]);
    out.assert_code(0);
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let rows: Vec<Vec<String>> = text.lines().map(csv_fields).collect();
    assert_eq!(rows.len(), 3, "{}", out.dump());
    assert_eq!(rows[0], ["group", "size", "path", "dev", "ino", "mtime_ns"]);
    assert_eq!(rows[1][2], "t/a,b", "{}", out.dump());
    assert_eq!(rows[2][2], "t/q\"uote", "{}", out.dump());
    assert!(rows.iter().all(|r| r.len() == 6), "{}", out.dump());
}

#[test]
fn groups_are_ordered_by_size_descending_then_first_path() {
    let d = tmp();
    let t = d.path();
    // three sizes, two groups of the same size
    let s10 = pattern(10, 10);
    let s5000 = pattern(5000, 11);
    let s700a = pattern(700, 12);
    let s700b = pattern(700, 13);
    write(t, "t/a10", &s10);
    write(t, "t/b10", &s10);
    write(t, "t/z5000", &s5000);
    write(t, "t/y5000", &s5000);
    write(t, "t/n700", &s700b);
    write(t, "t/p700", &s700b);
    write(t, "t/m700", &s700a);
    write(t, "t/q700", &s700a);
    let out = find(t, &["t"]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "t/y5000\nt/z5000\n\nt/m700\nt/q700\n\nt/n700\nt/p700\n\nt/a10\nt/b10\n\n",
        "{}",
        out.dump()
    );
    // json in the same order
    let out = find_json(t, &["t"]);
    let sizes: Vec<u64> = out.json().groups.iter().map(|g| g.size).collect();
    assert_eq!(sizes, vec![5000, 700, 700, 10]);
}

#[test]
fn paths_are_ordered_by_root_argument_then_path_bytes() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 14);
    for p in ["z/b", "z/a", "z/B", "z/c/a", "a/x", "a/A", "m/k"] {
        write(t, p, &data);
    }
    let out = find(t, &["z", "a", "m"]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "z/B\nz/a\nz/b\nz/c/a\na/A\na/x\nm/k\n\n",
        "{}",
        out.dump()
    );
    let out = find(t, &["m", "a", "z"]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "m/k\na/A\na/x\nz/B\nz/a\nz/b\nz/c/a\n\n",
        "{}",
        out.dump()
    );
}

#[test]
fn output_is_deterministic_across_runs() {
    let d = tmp();
    let t = d.path();
    for g in 0..30u64 {
        let data = pattern(1000 + (g as usize % 5), 100 + g);
        for k in 0..4 {
            write(t, &format!("t/d{}/f{g}_{k}", (g + k) % 7), &data);
        }
    }
    let first = find(t, &["t"]);
    first.assert_code(0);
    assert!(!first.stdout.is_empty());
    for _ in 0..3 {
        let again = find(t, &["t"]);
        assert_eq!(again.stdout, first.stdout);
    }
}

#[test]
fn output_file_option_writes_the_report_to_the_file() {
    let d = tmp();
    let t = d.path();
    tree(t);
    for flag in ["-o", "--output"] {
        let out = find(t, &[flag, "report.txt", "t"]);
        out.assert_code(0);
        assert!(out.stdout.is_empty(), "report must not go to stdout\n{}", out.dump());
        assert_eq!(
            String::from_utf8_lossy(&fs::read(t.join("report.txt")).unwrap()),
            String::from_utf8_lossy(TEXT)
        );
        fs::remove_file(t.join("report.txt")).unwrap();
    }
    let out = find(t, &["--format", "json", "-o", "report.json", "t"]);
    out.assert_code(0);
    assert!(out.stdout.is_empty());
    let r = Report::parse(&fs::read(t.join("report.json")).unwrap()).unwrap();
    assert_eq!(r.sets(), sets(&[&["t/big1", "t/big2", "t/big3"], &["t/s1", "t/s2"]]));
    // an existing file is replaced, not appended to
    fs::write(t.join("old.txt"), vec![b'#'; 10_000]).unwrap();
    let out = find(t, &["-o", "old.txt", "t"]);
    out.assert_code(0);
    assert_eq!(
        String::from_utf8_lossy(&fs::read(t.join("old.txt")).unwrap()),
        String::from_utf8_lossy(TEXT)
    );
}

#[test]
fn summary_goes_to_stderr_and_quiet_silences_it() {
    let d = tmp();
    let t = d.path();
    tree(t);
    let out = find(t, &["t"]);
    out.assert_code(0);
    assert!(!out.stderr.is_empty(), "a summary is expected on stderr\n{}", out.dump());
    assert_eq!(out.stdout, TEXT.to_vec(), "summary must not be on stdout");
    // stderr is not a terminal: no progress display (no redraws, no escapes)
    assert!(
        !out.stderr.contains(&b'\r') && !out.stderr.contains(&0x1b),
        "progress drawn on a non-terminal stderr\n{}",
        out.dump()
    );
    for flag in ["-q", "--quiet"] {
        let out = find(t, &[flag, "t"]);
        out.assert_code(0);
        assert!(out.stderr.is_empty(), "-q must silence the summary\n{}", out.dump());
        assert_eq!(out.stdout, TEXT.to_vec());
        let out = find(t, &[flag, "--format", "json", "t"]);
        out.assert_code(0);
        assert!(out.stderr.is_empty(), "{}", out.dump());
    }
}

#[test]
fn help_is_complete() {
    let d = tmp();
    let out = run(cmd(d.path()).args(["find", "--help"]));
    out.assert_code(0);
    let help = String::from_utf8_lossy(&out.stdout);
    for opt in [
        "--format",
        "--print0",
        "--output",
        "--quiet",
        "--min-size",
        "--max-size",
        "--exclude",
        "--max-depth",
        "--one-file-system",
        "--follow-links",
        "--hardlinks",
        "--include-empty",
    ] {
        assert!(help.contains(opt), "find --help does not mention {opt}\n{help}");
    }
    let out = run(cmd(d.path()).arg("--help"));
    out.assert_code(0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("find"));
}
