"""Output paths checked before a sweep starts, so that no run's result is lost at its end, and the
JSON files scripts read, loaded with one message naming the option and the file.

Each *_problem function returns why a path cannot take the output (one phrase
for the caller's message, which names the option and the path), or None when
it can; append_line adds a record to a JSON-lines file of results, and
replace_file writes a file whole or not at all. UsageError is the one error of
every script's bad options and input files; WriteError, of an output that
could not be written (a full disk), naming the file.
"""
import errno
import json
import os
import stat
import sys
import tempfile


class UsageError(ValueError):
    """A bad option or input file (exit 2): the message names the option or file and the value."""


class WriteError(OSError):
    """An output file that could not be written (exit 2): the message names the file and why."""


def write_error(path, e):
    """A WriteError naming `path` for the OSError `e` of writing it (whose own message may name no file: a full
    disk fails a write or a close, not an open)."""
    if isinstance(e, WriteError):
        return e
    return WriteError("%s: cannot write it (%s)" % (path, e.strerror or e))


def os_error_line(e):
    """One line for an OSError that reached a script's main: the file it names and why."""
    if not isinstance(e, WriteError) and getattr(e, "filename", None):
        return "%s: %s" % (e.filename, e.strerror or e)
    return str(e)


def load_json(option, path, what=None):
    """The JSON document of an input file, or UsageError naming the option (or the file's role) and the file;
    `what`, the kind of document expected, where the message should say it."""
    if os.path.isdir(path):
        raise UsageError("%s %s: is a directory, not %s" % (option, path, what or "a file"))
    try:
        with open(path, encoding="utf-8") as f:
            return loads(f.read())
    except OSError as e:
        raise UsageError("%s %s: cannot read it (%s)" % (option, path, e.strerror or e))
    except ValueError as e:
        raise UsageError("%s %s: not JSON (%s)%s" % (option, path, e, ", not " + what if what else ""))


def loads(text):
    """json.loads, where a document nested too deeply for Python's parser ([[[[... thousands deep) is a ValueError
    like any other text that is no JSON this can read, not a RecursionError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to read")


def run_main(main, *args):
    """sys.exit(main(*args)), quietly when the reader of stdout has gone (`script | head -1`): exit status 0 and
    no BrokenPipeError traceback, as a Unix filter ends."""
    try:
        status = main(*args)
        sys.stdout.flush()
    except BrokenPipeError:
        # Nothing more can be written: point stdout at /dev/null so the interpreter's last flush is quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 0
    sys.exit(status)


def folder_problem(path, create=True):
    """Why `path` cannot be a results folder. With `create` the folder is made (as the sweep would)
    and a file written into it and removed; without, only an existing non-folder is refused."""
    if os.path.exists(path) and not os.path.isdir(path):
        return "is a file, not a folder"
    if not create:
        return None
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        return "cannot create or write this folder (%s)" % (e.strerror or e)
    return None


def file_problem(path):
    """Why a file cannot be written at `path` (its folder missing or not writable, a folder of that name);
    nothing is left behind."""
    if os.path.isdir(path):
        return "is a folder, not a file"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return "its folder %s does not exist" % folder
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return "cannot write this file (permission denied)"
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        return "cannot write into its folder %s (%s)" % (folder, e.strerror or e)
    return None


def output_problem(path, inputs):
    """Why a script cannot write `path`: file_problem's reasons, or it is one of the `inputs` or the same file as
    one (an output over an input would overwrite it); None when it can."""
    for p in inputs:
        if os.path.realpath(p) == os.path.realpath(path) or (
                os.path.exists(p) and os.path.exists(path) and os.path.samefile(p, path)):
            return "is an input (%s): it would be overwritten" % p
    return file_problem(path)


def append_line(path, text):
    """Appends one line to `path`, after a newline of its own when the file's last line was cut short
    (a killed run's partial record stays a bad line of its own instead of swallowing this one); WriteError naming
    `path` when it cannot."""
    try:
        with open(path, "a+b") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    f.write(b"\n")
            f.write(text.encode() + b"\n")
    except OSError as e:
        raise write_error(path, e) from e


def replace_file(path, write, binary=False, newline=None):
    """Writes `path` whole or not at all: write(f) fills a temporary file beside it (open in text, UTF-8, or
    `binary`), which is then renamed over it, so that the previous file stays intact until the new one is complete
    (a full disk, an exception in `write`). On any error the temporary is removed; an OSError is raised again as a
    WriteError naming `path`. As tessera's outputs (experiments/output_path.cpp): a link's target is the file
    replaced; a FIFO, a device, anything under /dev or /proc and a file with other hard links are written in place;
    the file keeps its mode (a new one gets the umask's)."""
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except OSError:
        st = None
    in_place = (st is not None and (not stat.S_ISREG(st.st_mode) or st.st_nlink > 1)) or \
        target.startswith(("/dev/", "/proc/"))
    tmp = None
    if not in_place:
        try:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix="." + os.path.basename(target) + ".",
                                       suffix=".tmp")
        except OSError as e:
            if st is None or e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise write_error(path, e) from e
            in_place = True  # a file that can be written in a folder that cannot
    try:
        if in_place:
            f = open(path, "wb") if binary else open(path, "w", encoding="utf-8", newline=newline)
        else:
            os.fchmod(fd, st.st_mode & 0o7777 if st else 0o666 & ~_umask())
            f = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline=newline)
            fd = None
        with f:
            write(f)
        if tmp:
            os.replace(tmp, target)
            tmp = None
    except OSError as e:
        raise write_error(path, e) from e
    finally:
        if tmp and fd is not None:
            os.close(fd)
        if tmp:
            try:
                os.remove(tmp)
            except OSError:
                pass


def save_figure(fig, path, **options):
    """A Matplotlib figure saved to `path` through replace_file, in the format its extension names (the temporary's
    name ends otherwise), a PDF without its creation date (regenerated from the same results, the same bytes);
    `options` go to savefig (dpi)."""
    fmt = os.path.splitext(path)[1][1:].lower() or "png"
    if fmt == "pdf":
        options = dict(options, metadata={"CreationDate": None})
    replace_file(path, lambda f: fig.savefig(f, format=fmt, **options), binary=True)


def _umask():
    umask = os.umask(0o022)
    os.umask(umask)
    return umask
