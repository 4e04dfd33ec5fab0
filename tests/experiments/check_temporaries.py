#!/usr/bin/python3
"""Tests that leave nothing in the temporary folder: each script given runs
with TMPDIR a fresh empty folder, must pass, and must leave that folder empty
(its results folders made by hand with tempfile.mkdtemp were never removed:
hundreds of them in /tmp after a few ctest runs).

    check_temporaries.py SCRIPT [SCRIPT ...]
"""
import os
import shutil
import subprocess
import sys
import tempfile


def main(scripts):
    status = 0
    for script in scripts:
        # Outside the source tree (the build folder may be inside it): the scripts show paths under it relative.
        tmp = tempfile.mkdtemp(prefix="tessera-temporaries-")
        try:
            p = subprocess.run(["/usr/bin/python3", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=120, env=dict(os.environ, TMPDIR=tmp))
            left = sorted(os.listdir(tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if p.returncode != 0:
            print("FAIL: %s: exit %d\n%s" % (script, p.returncode, p.stdout))
            status = 1
        elif left:
            print("FAIL: %s left %d temporary folder(s): %s" % (script, len(left), ", ".join(left[:5])))
            status = 1
        else:
            print("ok: %s" % os.path.basename(script))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
