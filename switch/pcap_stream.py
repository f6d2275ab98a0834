"""A pcap file read as a stream, for `--use-files`: a FIFO's packets as its
writer writes them, a regular file's to its end.

The file is opened without blocking (a FIFO's writer may come later, or
open the switch's FIFOs in any order) and read only as far as the next
record, like libpcap's pcap_next_ex under BMv2's PcapFileIn. `head` is the
next packet, as (timestamp in ns, bytes), once all its bytes are there.
"""

from __future__ import annotations

import os
import stat
import struct
from typing import Optional

CHUNK = 1 << 16
_MAGIC = {0xA1B2C3D4: ("<", 1000), 0xA1B23C4D: ("<", 1),  # microseconds, nanoseconds
          0xD4C3B2A1: (">", 1000), 0x4D3CB2A1: (">", 1)}


class PcapError(ValueError):
    """Bytes that are not a pcap file (BMv2 stops on them)."""


class PcapStream:
    """One input file, read without ever blocking."""

    def __init__(self, port: int, path: str):
        self.port = port
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        # A FIFO nobody has opened for writing reads as end-of-file: read it
        # only once poll() has said so (`readable`). A regular file always can.
        self.readable = stat.S_ISREG(os.fstat(self.fd).st_mode)
        self.buf = bytearray()
        self.endian = ""
        self.unit_ns = 0
        self.head: Optional[tuple[int, bytes]] = None
        self.eof = False

    def fill(self) -> None:
        """Reads until `head` holds the next packet, nothing more is there
        yet, or the file ends (`eof`). Raises PcapError on a malformed file."""
        while self.head is None and not self.eof:
            if self._parse():
                return
            if not self.readable:
                return
            try:
                chunk = os.read(self.fd, CHUNK)
            except (BlockingIOError, InterruptedError):
                return
            if not chunk:
                self.eof = True
                if not self.endian:
                    raise PcapError(f"{self.path}: no pcap file header ({len(self.buf)} bytes)")
                if self.buf:
                    raise PcapError(f"{self.path}: truncated packet record at the end")
                return
            self.buf += chunk

    def take(self) -> bytes:
        """The head packet, which the next fill() replaces."""
        assert self.head is not None
        data = self.head[1]
        self.head = None
        return data

    def _parse(self) -> bool:
        """Moves the next complete record (after the file header) to `head`."""
        if not self.endian:
            if len(self.buf) < 24:
                return False
            magic = struct.unpack("<I", self.buf[:4])[0]
            if magic not in _MAGIC:
                raise PcapError(f"{self.path}: not a pcap file (magic 0x{magic:08x})")
            self.endian, self.unit_ns = _MAGIC[magic]
            del self.buf[:24]
        if len(self.buf) < 16:
            return False
        sec, frac, incl, orig = struct.unpack(self.endian + "IIII", self.buf[:16])
        if len(self.buf) < 16 + incl:
            return False
        if incl != orig:  # BMv2 (PcapFileIn::advance) stops here too
            raise PcapError(f"{self.path}: incompletely captured packet "
                            f"({incl} of {orig} bytes)")
        self.head = (sec * 1_000_000_000 + frac * self.unit_ns, bytes(self.buf[16:16 + incl]))
        del self.buf[:16 + incl]
        return True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
