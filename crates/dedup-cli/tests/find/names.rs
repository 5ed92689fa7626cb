//! Awkward names: spaces, newlines, quotes, backticks, leading dashes, glob
//! characters, non-UTF-8 bytes, 250-byte names, 60 levels of nesting.

use crate::common;

use common::*;
use std::fs;

const AWKWARD: &[&str] = &[
    "with space",
    " leading space",
    "trailing space ",
    "new\nline",
    "\nstarts with newline",
    "carriage\rreturn",
    "tab\there",
    "back`tick`",
    "$(echo injected)",
    "single'quote",
    "double\"quote",
    "back\\slash",
    "-leading-dash",
    "--help",
    "-",
    "*",
    "?",
    "[ab]",
    "star*and?q[x]",
    "{a,b}",
    "semi;colon&amp|pipe",
    "comma,in,name",
    "caf\u{e9} \u{1F389} \u{65e5}\u{672c}",
    "...",
    "..dots",
    "\u{7f}del\u{1b}esc",
];

#[test]
fn awkward_names_are_grouped_exactly() {
    let d = tmp();
    let t = d.path();
    let mut expected = Vec::new();
    for (i, name) in AWKWARD.iter().enumerate() {
        let data = pattern(300 + i, 1000 + i as u64);
        write(t, &format!("t/{name}"), &data);
        write(t, &format!("t/twins/{i}"), &data);
        expected.push(vec![format!("t/{name}").into_bytes(), format!("t/twins/{i}").into_bytes()]);
    }
    // an awkward directory name too
    let data = pattern(5000, 77);
    write(t, "t/dir with\nnewline and * [x]/-f", &data);
    write(t, "t/--/-x", &data);
    expected.push(vec![b"t/dir with\nnewline and * [x]/-f".to_vec(), b"t/--/-x".to_vec()]);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets_b(&expected));
    // valid UTF-8 paths are given as text
    for g in r.raw["groups"].as_array().unwrap() {
        for f in g["files"].as_array().unwrap() {
            assert!(f["path"].get("text").is_some(), "UTF-8 path not given as text: {}", f["path"]);
        }
    }
}

fn non_utf8_tree(t: &std::path::Path) -> Vec<Vec<Vec<u8>>> {
    let names: &[&[u8]] = &[b"caf\xe9", b"\xff\xfe", b"\x80", b"half\xe2\x82", b"new\nline\xff"];
    let mut expected = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let data = pattern(200 + i, 2000 + i as u64);
        let mut p = b"t/".to_vec();
        p.extend_from_slice(name);
        write_b(t, &p, &data);
        let twin = format!("t/twin{i}").into_bytes();
        write_b(t, &twin, &data);
        expected.push(vec![p, twin]);
    }
    // a non-UTF-8 directory
    let data = pattern(999, 3000);
    write_b(t, b"t/dir\xc3(/inner", &data);
    write_b(t, b"t/plain", &data);
    expected.push(vec![b"t/dir\xc3(/inner".to_vec(), b"t/plain".to_vec()]);
    expected
}

#[test]
fn non_utf8_names_survive_in_json() {
    let d = tmp();
    let t = d.path();
    let expected = non_utf8_tree(t);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets_b(&expected));
    // the non-UTF-8 ones are {"bytes": ...}, the others {"text": ...}
    for g in r.raw["groups"].as_array().unwrap() {
        for f in g["files"].as_array().unwrap() {
            let bytes = decode_path(&f["path"]).unwrap();
            let utf8 = std::str::from_utf8(&bytes).is_ok();
            let key = if utf8 { "text" } else { "bytes" };
            assert!(
                f["path"].get(key).is_some(),
                "path {:?} should be given as {key}: {}",
                String::from_utf8_lossy(&bytes),
                f["path"]
            );
        }
    }
}

#[test]
fn non_utf8_names_are_written_raw_in_text_output() {
    let d = tmp();
    let t = d.path();
    let data = pattern(64, 4000);
    write_b(t, b"t/a\xe9", &data);
    write_b(t, b"t/b\xff", &data);
    let out = find(t, &["t"]);
    out.assert_code(0);
    assert_eq!(out.stdout, b"t/a\xe9\nt/b\xff\n\n".to_vec(), "{}", out.dump());
    let out = find(t, &["-0", "t"]);
    out.assert_code(0);
    assert_eq!(out.stdout, b"t/a\xe9\0t/b\xff\0\0".to_vec(), "{}", out.dump());
}

#[test]
fn newline_in_name_is_unambiguous_with_print0() {
    let d = tmp();
    let t = d.path();
    let data = pattern(64, 4001);
    write(t, "t/x\ny", &data);
    write(t, "t/z", &data);
    let out = find(t, &["--print0", "t"]);
    out.assert_code(0);
    assert_eq!(out.stdout, b"t/x\ny\0t/z\0\0".to_vec(), "{}", out.dump());
}

#[test]
fn names_of_250_bytes() {
    let d = tmp();
    let t = d.path();
    let ascii = "n".repeat(250);
    let multibyte = "\u{e9}".repeat(125); // 250 bytes of UTF-8
    let mut raw = vec![0xffu8; 250]; // 250 bytes, not UTF-8
    raw[0] = b'r';
    let mut expected = Vec::new();
    for (i, name) in
        [ascii.as_bytes().to_vec(), multibyte.as_bytes().to_vec(), raw].into_iter().enumerate()
    {
        assert_eq!(name.len(), 250);
        let data = pattern(4096 + i, 5000 + i as u64);
        // a file with that name, and a file with that name in a directory
        // with that name
        let mut p = b"t/f/".to_vec();
        p.extend_from_slice(&name);
        write_b(t, &p, &data);
        let mut q = b"t/d/".to_vec();
        q.extend_from_slice(&name);
        q.push(b'/');
        q.extend_from_slice(&name);
        write_b(t, &q, &data);
        let short = format!("t/short{i}").into_bytes();
        write_b(t, &short, &data);
        expected.push(vec![p, q, short]);
    }
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets_b(&expected));
}

#[test]
fn nesting_of_60_levels() {
    let d = tmp();
    let t = d.path();
    let mut rel = String::from("t");
    let mut levels = Vec::new();
    for i in 0..60 {
        rel.push_str(&format!("/level{i:02}-{}", "x".repeat(40)));
        levels.push(rel.clone());
    }
    fs::create_dir_all(t.join(&rel)).unwrap();
    let data = pattern(777, 6000);
    let top = "t/top".to_string();
    let mid = format!("{}/middle", levels[29]);
    let bottom = format!("{}/bottom", levels[59]);
    write(t, &top, &data);
    write(t, &mid, &data);
    write(t, &bottom, &data);
    let other = pattern(888, 6001);
    let b1 = format!("{}/b1", levels[59]);
    let b2 = format!("{}/b2", levels[58]);
    write(t, &b1, &other);
    write(t, &b2, &other);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&[&top, &mid, &bottom], &[&b1, &b2]]));
}

#[test]
fn nesting_of_60_levels_of_250_byte_names_beyond_path_max() {
    // 60 directories named with 250 bytes each: the path of the bottom file
    // is about 15,000 bytes, far beyond PATH_MAX (4096).
    let d = tmp();
    let t = d.path();
    let data = pattern(1234, 6100);
    write(t, "t/top", &data);
    let name = format!("{}-{}", "long".repeat(61), "end!!");
    assert_eq!(name.len(), 250);
    // Built bottom-up with short paths only (creating it top-down would hit
    // ENAMETOOLONG): w0/NAME holds the files, then w{k-1}/NAME is moved to
    // wk/NAME/NAME, and so on; finally the chain becomes t/NAME.
    write(t, &format!("w0/{name}/bottom"), &data);
    write(t, &format!("w0/{name}/bottom2"), &data);
    for k in 1..60 {
        mkdir(t, &format!("w{k}/{name}"));
        fs::rename(t.join(format!("w{}/{name}", k - 1)), t.join(format!("w{k}/{name}/{name}")))
            .unwrap();
        fs::remove_dir(t.join(format!("w{}", k - 1))).unwrap();
    }
    fs::rename(t.join(format!("w59/{name}")), t.join(format!("t/{name}"))).unwrap();
    fs::remove_dir(t.join("w59")).unwrap();
    let mut deep = String::from("t");
    for _ in 0..60 {
        deep.push('/');
        deep.push_str(&name);
    }
    let bottom = format!("{deep}/bottom");
    let bottom2 = format!("{deep}/bottom2");
    assert!(bottom.len() > 15_000);
    let out = find_json(t, &["t"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["t/top", &bottom, &bottom2]]));
}

#[test]
fn root_argument_with_leading_dash() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 7000);
    write(t, "-dir/a", &data);
    write(t, "-dir/b", &data);
    let out = find_json(t, &["--", "-dir"]);
    out.assert_code(0);
    let r = assert_groups(&out, &sets(&[&["-dir/a", "-dir/b"]]));
    assert_eq!(r.roots, vec![b"-dir".to_vec()]);
    let out = find_json(t, &["./-dir"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["./-dir/a", "./-dir/b"]]));
}

#[test]
fn glob_characters_in_root_arguments_are_literal() {
    let d = tmp();
    let t = d.path();
    let data = pattern(100, 8000);
    write(t, "a*/x", &data);
    write(t, "a*/y", &data);
    write(t, "ab/x", &data);
    write(t, "a?/x", &data);
    write(t, "[a]/x", &data);
    let out = find_json(t, &["a*"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["a*/x", "a*/y"]]));
    // "[a]" is a directory of that name, not the class matching "a"
    let out = find_json(t, &["[a]", "a?"]);
    out.assert_code(0);
    assert_groups(&out, &sets(&[&["[a]/x", "a?/x"]]));
}
