"""Shared helpers for the benchmark scripts (Python 3 standard library only)."""

import os
import shlex
import subprocess

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CONF = os.path.join(BENCH_DIR, "peers.conf")
DEFAULT_DEDUP = os.environ.get("DEDUP") or subprocess.run(
    [os.path.join(BENCH_DIR, "default-dedup.sh")], capture_output=True, text=True, check=True
).stdout.strip()


class Tool:
    def __init__(self, name, kind, fmt, template):
        self.name, self.kind, self.fmt, self.template = name, kind, fmt, template

    @property
    def writes_file(self):
        return "{out}" in self.template

    def command(self, path, dedup=DEFAULT_DEDUP, out="/dev/null"):
        """The shell command line for this tool on path."""
        return (self.template.replace("{dedup}", shlex.quote(dedup))
                .replace("{out}", shlex.quote(out))
                .replace("{path}", shlex.quote(path)))


def load_tools(conf=DEFAULT_CONF):
    tools = []
    with open(conf) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|", 3)]
            if len(parts) != 4:
                raise SystemExit(f"{conf}: bad line: {line}")
            tools.append(Tool(*parts))
    return tools


def select_tools(tools, names):
    if not names:
        return tools
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    by_name = {t.name: t for t in tools}
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise SystemExit(f"unknown tool(s): {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[n] for n in wanted]


# ---- report parsers: each returns a list of groups, a group being a list of path bytes ----------

def parse_fdupes(data):
    """fdupes/jdupes/dedup text: one path per line, groups separated by an empty line."""
    groups, cur = [], []
    for line in data.split(b"\n"):
        if line == b"":
            if cur:
                groups.append(cur)
                cur = []
        else:
            cur.append(line)
    if cur:
        groups.append(cur)
    return groups


def parse_rdfind(data):
    """rdfind results.txt: `duptype id depth size device inode priority name`; |id| is the group."""
    groups = {}
    for line in data.split(b"\n"):
        if not line or line.startswith(b"#"):
            continue
        parts = line.split(b" ", 7)
        if len(parts) != 8:
            continue
        groups.setdefault(abs(int(parts[1])), []).append(parts[7])
    return list(groups.values())


def parse_fclones(data):
    """fclones default report: '#' header lines, a `hash, size * n:` line per group, 4-space-indented paths."""
    groups, cur = [], None
    for line in data.split(b"\n"):
        if not line or line.startswith(b"#"):
            continue
        if line.startswith(b"    "):
            if cur is not None:
                cur.append(line[4:])
        else:
            cur = []
            groups.append(cur)
    return [g for g in groups if g]


PARSERS = {"fdupes": parse_fdupes, "rdfind": parse_rdfind, "fclones": parse_fclones}
