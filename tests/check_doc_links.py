#!/usr/bin/python3
"""Every link between the project's Markdown documents resolves.

    check_doc_links.py SOURCE_DIR

For each tracked Markdown file (git ls-files '*.md'; outside a git checkout
every *.md but those of build folders and results/), every inline link
[text](target) whose target is not a URL (http:, https:, mailto:) must name a
file or folder that exists, relative to the linking file, and where it has a
#fragment, a heading of the target Markdown file (or of the linking file for
a bare #fragment) whose anchor is that fragment, the anchors being GitHub's:
the heading's text lowercased, inline code and link markup removed, every
character that is not a letter, a digit, a space, '-' or '_' dropped, spaces
turned into '-', and a repeated heading's anchor suffixed -1, -2, ... Links
into results/ are not checked: those files are written by the experiments
(git-ignored; REPRODUCTION.md's figures) and exist only where they ran. Links
inside fenced code blocks and inline code are not links.

Exit 0 when every link resolves, 1 listing each one that does not
(file:line, the target, why), 2 for a bad argument.
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def slug(text):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url) -> text
    text = text.replace("`", "").lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def strip_code(lines):
    """(line number, text) of the lines outside fenced code blocks, inline code removed."""
    out, fenced = [], False
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, re.sub(r"`[^`]*`", "", line)))
    return out


def anchors(path, cache):
    if path not in cache:
        seen, found = {}, set()
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        fenced = False
        for line in lines:
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if m:
                base = slug(m.group(2))
                k = seen.get(base, 0)
                seen[base] = k + 1
                found.add(base if k == 0 else "%s-%d" % (base, k))
        cache[path] = found
    return cache[path]


def tracked_docs(root):
    """The Markdown files git tracks, or outside a git checkout every *.md but build folders' and results/."""
    files = subprocess.run(["git", "-C", root, "ls-files", "*.md"], capture_output=True, text=True)
    if files.returncode == 0:
        return [os.path.join(root, f) for f in files.stdout.split()]
    docs = []
    for folder, subdirs, names in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith((".", "build")) and d != "results"]
        docs += [os.path.join(folder, n) for n in names if n.endswith(".md")]
    return sorted(docs)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: check_doc_links.py SOURCE_DIR", file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    docs = tracked_docs(root)
    cache, bad, count = {}, [], 0
    for doc in docs:
        with open(doc, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for n, text in strip_code(lines):
            for m in LINK.finditer(text):
                target = m.group(1) or m.group(2)
                if re.match(r"^(https?|mailto):", target):
                    continue
                count += 1
                where = "%s:%d" % (os.path.relpath(doc, root), n)
                path, _, fragment = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                rel = os.path.relpath(dest, root)
                if rel == "results" or rel.startswith("results" + os.sep):
                    continue
                if not os.path.exists(dest):
                    bad.append("%s: %s: no such file" % (where, target))
                elif fragment and dest.endswith(".md") and fragment not in anchors(dest, cache):
                    bad.append("%s: %s: no heading of %s has the anchor #%s" % (where, target, rel, fragment))
    for b in bad:
        print(b)
    print("check_doc_links: %d links in %d Markdown files, %d broken" % (count, len(docs), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
