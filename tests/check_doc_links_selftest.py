#!/usr/bin/env python3
"""The link checker finds what it must: a scratch git tree whose links
resolve in every way the checker accepts (a file, a heading of another file,
a heading of the same file with code and a section sign in it, a repeated
heading's -1 anchor, a link into results/, links in inline and fenced code)
and two that do not (an anchor no heading has, a missing file) must give
exit 1 naming exactly those two with file and line."""
import pathlib
import subprocess
import sys
import tempfile

checker = sys.argv[1]
with tempfile.TemporaryDirectory() as d:
    root = pathlib.Path(d)
    (root / "sub").mkdir()
    (root / "a.md").write_text("# Top\n\n## A heading (with `code`, §1.2)\n\n## Dup\n\n## Dup\n\n"
                               "See [x](sub/b.md#second-part), [y](#a-heading-with-code-12), [z](#dup-1), "
                               "[r](results/fig.png), `[no](nowhere.md)`\n\n```\n[fenced](nowhere.md)\n```\n")
    (root / "sub" / "b.md").write_text("# B\n\n## Second part\n\n[bad](../a.md#missing) [gone](c.md) [ok](../a.md)\n")
    subprocess.run(["git", "init", "-q", d], check=True)
    subprocess.run(["git", "-C", d, "add", "-A"], check=True)
    r = subprocess.run([sys.executable, checker, d], capture_output=True, text=True)
    expected = ["sub/b.md:5: ../a.md#missing: no heading of a.md has the anchor #missing",
                "sub/b.md:5: c.md: no such file",
                "check_doc_links: 7 links in 2 Markdown files, 2 broken"]
    if r.returncode != 1 or r.stdout.splitlines() != expected:
        print("check_doc_links_selftest: exit %d, output:\n%s%s" % (r.returncode, r.stdout, r.stderr))
        sys.exit(1)
print("check_doc_links_selftest: ok")
