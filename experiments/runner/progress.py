"""A one-line progress bar on a terminal: runs done / total, elapsed, ETA; silent elsewhere."""
import sys
import time


def clock(seconds):
    """Seconds as H:MM:SS or M:SS."""
    seconds = int(round(max(0.0, seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return "%d:%02d:%02d" % (h, m, s) if h else "%d:%02d" % (m, s)


class Progress:
    """Redraws one line on `stream` when it is a terminal; does nothing otherwise."""

    WIDTH = 24

    def __init__(self, total, stream=None, title=""):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() and total > 0
        self.total = total
        self.done = 0
        self.failed = 0
        self.title = title
        self.start = time.monotonic()

    def eta(self):
        """Seconds left, from the mean time per finished run (None before the first)."""
        if self.done == 0:
            return None
        return (time.monotonic() - self.start) / self.done * (self.total - self.done)

    def line(self, last=""):
        """The text of the bar (also used by the tests)."""
        filled = self.WIDTH * self.done // max(1, self.total)
        eta = self.eta()
        text = "%s [%s%s] %d/%d  elapsed %s  ETA %s" % (
            self.title, "#" * filled, "." * (self.WIDTH - filled), self.done, self.total,
            clock(time.monotonic() - self.start), clock(eta) if eta is not None else "?")
        if self.failed:
            text += "  failed %d" % self.failed
        if last:
            text += "  | " + last
        return text

    def update(self, ok, last=""):
        """Counts one finished run and redraws."""
        self.done += 1
        self.failed += 0 if ok else 1
        if self.enabled:
            self.stream.write("\r\033[K" + self.line(last)[:200])
            self.stream.flush()

    def finish(self):
        """Clears the bar."""
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()
