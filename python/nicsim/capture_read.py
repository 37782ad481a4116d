"""Reading a pcap or pcapng file into a :class:`~nicsim.capture_file.Capture`: :func:`read_capture`.

This module owns the records: scapy's raw readers with each pcap record
header checked here (a caplen past ``MAX_CAPLEN``, an orig_len past
``MAX_WIRE_LEN``, a record cut short, bytes after the last record), what
stopped the reading and what was skipped, counted in the capture's
:class:`~nicsim.capture_file.ReadReport`, and the memory limit looked at as
it reads. What a capture holds and which frames a host receives is
:mod:`nicsim.capture_file`'s; replaying them is :mod:`nicsim.capture`'s.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from array import array
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.capture_file import (
    ETH_HEADER_LEN,
    HEAD_BYTES,
    LINKTYPE_ETHERNET,
    LOOK_EVERY_FRAMES,
    MAX_CAPLEN,
    MAX_FILE_BYTES,
    MAX_FRAMES,
    MAX_TIME_NS,
    MAX_WIRE_LEN,
    PCAPNG_MAGIC,
    Capture,
    ReadReport,
    _CutError,
    _span,
)

if TYPE_CHECKING:
    pass


__all__ = ["check_file", "read_capture"]


def _check_path_type(path: object) -> None:
    """Refuse a capture that is neither a path nor a :class:`Capture`, naming it."""
    if not isinstance(path, str | os.PathLike | Capture):
        raise NicsimError(
            f"capture = {path!r}: expected the path of a pcap or pcapng file "
            "(str or pathlib.Path) or a nicsim.capture.Capture"
        )


def check_file(path: str | os.PathLike[str]) -> Path:
    """Check that ``path`` is a readable file within :data:`MAX_FILE_BYTES`; return it."""
    _check_path_type(path)
    p = Path(path)
    if not p.exists():
        raise NicsimError(f"pcap {p}: no such file")
    if not p.is_file():
        raise NicsimError(f"pcap {p}: not a file")
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise NicsimError(
            f"pcap {p}: {size:,} bytes, above the cap of {MAX_FILE_BYTES:,} bytes (1 GiB) "
            "a replay reads; cut it first (e.g. editcap -r)"
        )
    if size == 0:
        raise NicsimError(f"pcap {p}: empty file, not a capture")
    return p


class _SimplePacketBlockError(Exception):
    """A pcapng Simple Packet Block: a frame without a timestamp."""


class _Silenced(logging.Filter):
    """Holds back scapy's runtime warnings while a capture is read; keeps the last.

    What the reader warns about is said in nicsim's own line (the damage it
    names), not as a third-party logger's.
    """

    def __init__(self) -> None:
        super().__init__()
        self.last = ""

    def filter(self, record: logging.LogRecord) -> bool:
        self.last = record.getMessage()
        return False


def _pcap_reader(handle: IO[bytes]) -> Any:
    """Open a classic pcap capture with scapy's reader, made strict about record headers.

    A record (pcap-savefile(5)) is a 16-byte header (seconds, fraction,
    caplen, orig_len) and caplen bytes. scapy's reader stops at a record
    cut short with a logged warning only, and reads a caplen up to 4 GiB;
    here a record header cut short, a caplen above :data:`MAX_CAPLEN` or
    data cut short stops reading with :class:`_CutError` naming the byte.
    """
    from scapy.utils import RawPcapReader

    class StrictPcapReader(RawPcapReader):
        def _read_packet(self, size: int = 0) -> Any:
            start = self.f.tell()
            try:
                return self._read_record(start)
            except (OSError, EOFError, zlib.error) as err:  # a gzip'd capture cut or damaged
                raise _CutError(start, f"the compressed stream is damaged: {err}") from None

        def _read_record(self, start: int) -> Any:
            header = self.f.read(16)
            if not header:
                return None
            if len(header) < 16:
                raise _CutError(
                    start, f"{len(header)} bytes left, not a whole 16-byte record header"
                )
            sec, frac, caplen, wirelen = struct.unpack(self.endian + "IIII", header)
            if caplen > MAX_CAPLEN:
                raise _CutError(
                    start,
                    f"a record header with caplen {caplen:,} bytes, above the {MAX_CAPLEN:,} "
                    "a record holds: not a record",
                )
            data = self.f.read(caplen)
            if len(data) < caplen:
                raise _CutError(start, f"a record cut after {len(data):,} of its {caplen:,} bytes")
            return data, self.PacketMetadata(sec=sec, usec=frac, wirelen=wirelen, caplen=caplen)

        def __next__(self) -> Any:
            record = self._read_packet()
            if record is None:
                raise StopIteration
            return record

    # scapy's readers take a file object too (PcapReader_metaclass.open).
    return StrictPcapReader(handle)  # type: ignore[arg-type]


def _pcapng_reader(handle: IO[bytes]) -> Any:
    """Open a pcapng capture with scapy's reader, corrected for a replay.

    Per draft-ietf-opsawg-pcapng: a Section Header Block (section 4.1)
    starts a section, and an Interface ID (section 4.2) numbers the
    Interface Description Blocks of its own section, from 0; scapy keeps
    the interfaces of every section in one list. A Simple Packet Block
    (section 4.4) has no timestamp (and a length bounded by the
    interface's snaplen, where 0 means none), so it cannot be replayed. A
    block that scapy cannot read (cut short, lengths that disagree) ends
    its reading with a logged warning; here it stops reading with
    :class:`_CutError` naming the block's byte and scapy's reason.
    """
    from scapy.utils import RawPcapNgReader

    class SectionedPcapNgReader(RawPcapNgReader):
        sections = 0
        block_start = 0
        silenced: _Silenced | None = None

        def _read_block_shb(self) -> None:
            super()._read_block_shb()
            self.interfaces = []
            self.sections += 1

        def _read_block_spb(self, block: bytes, size: int) -> Any:
            raise _SimplePacketBlockError

        def _read_block_epb(self, block: bytes, size: int) -> Any:
            # Section 4.3: Captured Packet Length at offset 12 of the body,
            # the packet data from 20; scapy slices what there is.
            (caplen,) = struct.unpack(self.endian + "I", block[12:16]) if len(block) >= 16 else (0,)
            if 20 + caplen > len(block):
                raise _CutError(
                    self.block_start,
                    f"an Enhanced Packet Block whose caplen {caplen:,} is longer than the block",
                )
            return super()._read_block_epb(block, size)

        def _read_block(self, size: int = 0) -> Any:
            start = self.block_start = self.f.tell()
            if self.silenced is not None:
                self.silenced.last = ""
            try:
                return super()._read_block(size)
            except (EOFError, OSError, OverflowError, zlib.error, struct.error) as err:
                if self.f.tell() == start and not isinstance(err, OSError | zlib.error):
                    raise EOFError from None  # the end of the file, between blocks
                why = (self.silenced.last if self.silenced else "") or str(err) or "a block cut"
                raise _CutError(start, f"a block scapy cannot read: {why}") from None

    # scapy's readers take a file object too (PcapReader_metaclass.open).
    return SectionedPcapNgReader(handle)  # type: ignore[arg-type]


def _open_reader(handle: IO[bytes]) -> Any:
    """Return scapy's raw reader of ``handle``: pcap (:func:`_pcap_reader`) or pcapng."""
    import gzip

    magic = handle.read(4)
    if magic[:2] == b"\x1f\x8b":
        handle.seek(0)
        with gzip.GzipFile(fileobj=handle) as inner:
            try:
                magic = inner.read(4)
            except (OSError, EOFError, zlib.error):
                magic = b""
    handle.seek(0)
    if magic == PCAPNG_MAGIC:
        return _pcapng_reader(handle)
    return _pcap_reader(handle)


def _time_ns(p: Path, n: int, meta: Any, nano: bool) -> int:
    """Return record ``n``'s time in integer ns (exact; floored for an odd pcapng resolution).

    A pcap record's fraction of a second at or above one second is refused:
    the capture is damaged.
    """
    if hasattr(meta, "tsresol"):  # pcapng: ticks of 1/tsresol s
        ticks = (meta.tshigh << 32) | meta.tslow
        return int(ticks * 1_000_000_000 // meta.tsresol)
    per_second, unit = (1_000_000_000, "ns") if nano else (1_000_000, "µs")
    if meta.usec >= per_second:
        raise NicsimError(
            f"pcap {p}: record {n:,} has {meta.usec:,} {unit} past its second "
            f"(allowed: 0 to {per_second - 1:,}); the capture is damaged"
        )
    return int(meta.sec) * 1_000_000_000 + int(meta.usec) * (1 if nano else 1000)


def _left(stream: Any, start: int, size: int | None) -> int | None:
    """Return the bytes of ``stream`` from ``start`` to its end (``None``: not known)."""
    if size is not None:
        return max(size - start, 0)
    try:  # a gzip stream: its length is known once read
        stream.seek(start)
        n = 0
        while chunk := stream.read(1 << 20):
            n += len(chunk)
            if n > MAX_FILE_BYTES:
                return None
        return n
    except (OSError, EOFError, zlib.error):
        return None


def read_capture(path: str | os.PathLike[str], *, strict: bool = False) -> Capture:
    """Read every frame of a pcap or pcapng capture of Ethernet frames.

    What cannot be replayed is counted in the capture's :class:`ReadReport`
    (``Capture.report``): records of another link type, too short for an
    Ethernet header, or whose orig_len is above :data:`MAX_WIRE_LEN`, are
    skipped; at a record or block that cannot be read (cut short, a caplen
    above :data:`MAX_CAPLEN`, bytes after the last record that are no
    record), reading stops and the whole records before it are kept.
    Frames stamped earlier than one before them are kept (a replay runs
    them in time order) and counted.

    Parameters
    ----------
    strict
        Refuse a capture that is damaged (reading stopped before its end, a
        record skipped for its orig_len) or whose times go backwards.

    Raises
    ------
    NicsimError
        A missing or unreadable file, one above the size cap, not a capture,
        no Ethernet frames, more than :data:`MAX_FRAMES` frames, a record
        without a time (a pcapng Simple Packet Block) or with one that is not
        a time, frames that span more than :data:`MAX_TIME_NS`, more memory
        held than the limit while reading (one line naming the file), or,
        ``strict``, a damaged capture.
    """
    p = check_file(path)
    from scapy.error import Scapy_Exception

    size = p.stat().st_size
    silenced = _Silenced()
    logger = logging.getLogger("scapy.runtime")
    logger.addFilter(silenced)
    handle = p.open("rb")
    try:
        try:
            reader = _open_reader(handle)
        except (Scapy_Exception, OSError, EOFError) as err:
            raise NicsimError(f"pcap {p}: not a pcap or pcapng capture ({err})") from None
        reader.silenced = silenced
        gz = reader.f is not handle
        report = ReadReport(p, size)
        capture = _read_records(p, reader, report, handle, size)
        if report.stopped_at is not None:
            report.unread_bytes = _left(reader.f, report.stopped_at, None if gz else size)
    finally:
        logger.removeFilter(silenced)
        handle.close()
    if strict and report.damage():
        raise NicsimError(
            f"pcap {p}: damaged: {'; '.join(report.damage())} (strict: a capture must be whole; "
            "without it, the whole records are replayed and the rest is said)"
        )
    return capture


def _read_records(
    p: Path, reader: Any, report: ReadReport, handle: IO[bytes], size: int
) -> Capture:
    """Read the records of ``reader`` into a :class:`Capture`, counting in ``report``."""
    from scapy.error import Scapy_Exception

    snaplen = getattr(reader, "snaplen", None)
    if snaplen is not None and not 0 < snaplen <= MAX_CAPLEN:
        report.notes.append(
            f"the file header's snaplen {snaplen:,} is not a record length "
            f"(records are read up to {MAX_CAPLEN:,} bytes)"
        )
    at_ns: array[int] = array("q")
    wire_len: array[int] = array("I")
    heads = bytearray()
    head_end: array[int] = array("Q")
    record_no: array[int] = array("I")
    nano = bool(getattr(reader, "nano", False))
    first: int | None = None
    # (ns from the first frame, record) of the earliest frame and of the latest.
    lo = hi = (0, 0)
    last = 0
    records = 0
    first_link: tuple[int, object, str] | None = None
    try:
        for data, meta in reader:
            records += 1
            report.records = records
            if records % LOOK_EVERY_FRAMES == 0:
                _core.memory_check(
                    f"reading capture {p} (record {records:,}, "
                    f"{handle.tell():,} of {size:,} bytes)",
                    f"replay a slice of it (e.g. editcap -r {p} slice.pcap 1-{records // 2}), "
                    f"or raise {_core.MEMORY_LIMIT_VAR}",
                )
            link = getattr(meta, "linktype", getattr(reader, "linktype", None))
            if link != LINKTYPE_ETHERNET:
                section = getattr(reader, "sections", 1)
                where = f" (section {section})" if section > 1 else ""
                if first_link is None:
                    first_link = (records, link, where)
                kind = int(link) if isinstance(link, int) else -1
                report.link_types[kind] = report.link_types.get(kind, 0) + 1
                continue
            if len(at_ns) == MAX_FRAMES:
                raise NicsimError(
                    f"pcap {p}: more than {MAX_FRAMES:,} frames, the cap of a replay; cut it first"
                )
            if len(data) < ETH_HEADER_LEN:
                report.short += 1
                continue  # not even an Ethernet header: nothing a NIC would take
            wire = max(int(meta.wirelen), len(data))
            if wire > MAX_WIRE_LEN:
                if not report.bad_wire_len:
                    report.first_bad_wire_len = (records, int(meta.wirelen))
                report.bad_wire_len += 1
                continue
            t = _time_ns(p, records, meta, nano)
            if first is None:
                first, lo, hi, last = t, (0, records), (0, records), 0
            t -= first
            if t < last:
                if not report.backwards:
                    report.first_backwards = (records, last - t)
                report.backwards += 1
            last = max(last, t)
            if t < lo[0]:
                lo = (t, records)
            elif t > hi[0]:
                hi = (t, records)
            if hi[0] - lo[0] > MAX_TIME_NS:
                raise NicsimError(
                    f"pcap {p}: its frames span {_span(hi[0] - lo[0])} from record {lo[1]:,} "
                    f"to record {hi[1]:,}, more than simulated time holds (at most "
                    f"{_span(MAX_TIME_NS)}); cut it first (e.g. editcap -A/-B)"
                )
            at_ns.append(t)
            wire_len.append(wire)
            report.wire_bytes += wire
            heads += data[:HEAD_BYTES]
            head_end.append(len(heads))
            record_no.append(records)
    except _CutError as cut:
        report.stopped_at, report.stop_why = cut.offset, cut.why
    except _SimplePacketBlockError:
        raise NicsimError(
            f"pcap {p}: record {records + 1:,} is a Simple Packet Block, which has no "
            "timestamp; a replay needs each frame's time (capture with Enhanced Packet Blocks)"
        ) from None
    except Scapy_Exception as err:
        raise NicsimError(f"pcap {p}: unreadable record ({err})") from None
    if not at_ns:
        if first_link is not None:
            record, link, where = first_link
            raise NicsimError(
                f"pcap {p}: record {record:,}{where}: link type {link}, not Ethernet "
                f"({LINKTYPE_ETHERNET}); nicsim replays Ethernet frames"
            )
        stop = f" ({report.damage()[0]})" if report.damage() else ""
        raise NicsimError(f"pcap {p}: no Ethernet frames in the capture{stop}")
    report.frames = len(at_ns)
    report.span_ns = hi[0] - lo[0]
    return Capture(p, at_ns, wire_len, heads, head_end, report, record_no)
