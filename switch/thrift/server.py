"""The run-time control server: BMv2's Thrift API on --thrift-port.

Wire format as BMv2's server speaks it: TCP, buffered transport, binary
protocol, services multiplexed by name ("standard:bm_mt_add_entry"),
answered as Thrift's C++ processors answer (mux.py). One thread accepts,
one thread serves each connection; calls are serialised by the device lock
in the handlers. It listens on loopback unless the caller explicitly allows
another address (BMv2 listens on every interface).

Hostile or broken peers (BMv2's TThreadedServer has no limits here):
- at most `max_connections` (MAX_CONNECTIONS, 64) are served at once. When
  all are taken, a connection that has sent nothing for `idle_reclaim_s`
  (IDLE_RECLAIM_S) between two messages is closed to make room; if none
  is that idle, the new connection is accepted and closed at once, with
  one log line per spell of being full. Refusing at once (rather than
  leaving it in the listen backlog) keeps the server responsive: a client
  learns right away that it was not served instead of hanging, and the
  backlog never fills up behind stuck peers;
- idle connections are otherwise kept (an interactive simple_switch_CLI
  may wait long between commands), but a message once begun must arrive
  whole within MESSAGE_TIMEOUT_S;
- a message that cannot be decoded ends its connection with one log line
  ("thrift: peer H:P: malformed message: reason"), never a traceback;
  that includes types the binary protocol does not define and container
  sizes that cannot be real (protocol.py), which are refused before any
  element is read.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Optional

from ..options import is_loopback
from .handler import RuntimeApi
from .idl import SERVICES, bm
from .mux import MuxProcessor, Refused
from .protocol import CheckedBinaryProtocol

log = logging.getLogger("p4scope.switch.runtime")

MAX_CONNECTIONS = 64
IDLE_RECLAIM_S = 30.0
MESSAGE_TIMEOUT_S = 30.0
RECV_BYTES = 65536


class PeerTransport:
    """One connection's bytes for TBinaryProtocol: exact reads through a
    buffer filled by bounded recv calls (a length field claiming gigabytes
    costs only what the peer really sends), writes sent on flush."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._rbuf = bytearray()
        self._wbuf = bytearray()

    def pending(self) -> bool:
        return bool(self._rbuf)

    def read(self, sz: int) -> bytes:
        from thriftpy2.protocol.exc import TProtocolException
        from thriftpy2.transport import TTransportException
        if sz < 0:
            raise TProtocolException(TProtocolException.NEGATIVE_SIZE, f"negative size {sz}")
        while len(self._rbuf) < sz:
            chunk = self.sock.recv(RECV_BYTES)
            if not chunk:
                raise TTransportException(TTransportException.END_OF_FILE, "peer closed")
            self._rbuf += chunk
        out = bytes(self._rbuf[:sz])
        del self._rbuf[:sz]
        return out

    def write(self, buf: bytes) -> None:
        self._wbuf += buf

    def flush(self) -> None:
        out, self._wbuf = bytes(self._wbuf), bytearray()
        self.sock.sendall(out)


class _Peer:
    def __init__(self, sock: socket.socket, addr):
        self.sock = sock
        host, port = addr[0], addr[1]
        self.name = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self.idle_since: Optional[float] = time.monotonic()
        """When it last finished a message; None while one is under way."""

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _reason(e: BaseException) -> str:
    text = getattr(e, "message", None) or str(e)
    return text if text else type(e).__name__


class RuntimeServer:
    def __init__(self, api: RuntimeApi, host: str = "127.0.0.1", port: int = 9090,
                 allow_remote: bool = False, max_connections: int = MAX_CONNECTIONS,
                 idle_reclaim_s: float = IDLE_RECLAIM_S,
                 message_timeout_s: float = MESSAGE_TIMEOUT_S):
        if not allow_remote and not is_loopback(host):
            raise ValueError(f"the run-time server listens on loopback only; '{host}' is not "
                             "a loopback address (ask for it explicitly to allow it)")
        self.api = api
        self.host = host
        self.port = port
        self.max_connections = max_connections
        self.idle_reclaim_s = idle_reclaim_s
        self.message_timeout_s = message_timeout_s
        self._sock: Optional[socket.socket] = None
        self._threads: list[threading.Thread] = []
        self._peers: dict[socket.socket, _Peer] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._full_logged = False
        self._processor: Optional[MuxProcessor] = None

    def _make_processor(self) -> MuxProcessor:
        m = bm()
        return MuxProcessor({name: (getattr(m, SERVICES[name]), handler)
                             for name, handler in self.api.handlers().items()})

    def start(self) -> int:
        """Binds and starts serving; returns the port (useful with port 0)."""
        self._processor = self._make_processor()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((self.host, self.port))
            s.listen(16)
        except OSError:
            s.close()
            raise
        self._sock = s
        self.port = s.getsockname()[1]
        self.api.thrift_port = self.port
        t = threading.Thread(target=self._accept, name="thrift-accept", daemon=True)
        t.start()
        self._threads.append(t)
        return self.port

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self._peers)

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, addr = self._sock.accept()
            except OSError:
                return
            peer = _Peer(conn, addr)
            with self._lock:
                if self._stopped.is_set():
                    conn.close()
                    return
                if len(self._peers) >= self.max_connections and not self._reclaim_idle():
                    self._refuse(peer)
                    continue
                self._peers[conn] = peer
            threading.Thread(target=self._serve, args=(peer,), name=f"thrift-conn-{self.port}",
                             daemon=True).start()

    def _reclaim_idle(self) -> bool:
        """Closes the longest idle peer past idle_reclaim_s (lock held)."""
        now = time.monotonic()
        idle = [p for p in self._peers.values()
                if p.idle_since is not None and now - p.idle_since >= self.idle_reclaim_s]
        if not idle:
            return False
        victim = min(idle, key=lambda p: p.idle_since)
        del self._peers[victim.sock]
        log.info("thrift: peer %s: closed after %.0f s idle to make room for a new connection",
                 victim.name, now - victim.idle_since)
        victim.close()
        return True

    def _refuse(self, peer: _Peer) -> None:
        """Over the limit: closed at once (lock held)."""
        try:
            peer.sock.close()
        except OSError:
            pass
        if not self._full_logged:
            self._full_logged = True
            log.warning("thrift: peer %s: refused: %d connections open, the limit; new ones are "
                        "closed until one ends", peer.name, self.max_connections)

    def _serve(self, peer: _Peer) -> None:
        from thriftpy2.transport import TTransportException
        conn = peer.sock
        trans = PeerTransport(conn)
        proto = CheckedBinaryProtocol(trans)
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            while not self._stopped.is_set():
                peer.idle_since = time.monotonic()
                if not trans.pending():
                    conn.settimeout(None)  # between messages: as long as the peer likes
                    if not conn.recv(1, socket.MSG_PEEK):
                        break
                peer.idle_since = None
                conn.settimeout(self.message_timeout_s)
                self._processor.process(proto, proto)
        except (TTransportException, ConnectionError):
            pass  # the peer went away
        except TimeoutError:
            log.warning("thrift: peer %s: message incomplete after %.0f s; connection closed",
                        peer.name, self.message_timeout_s)
        except OSError:
            pass  # closed under it (stop, reclaimed)
        except Refused as e:
            log.warning("thrift: peer %s: malformed message: %s", peer.name, e)
        except Exception as e:  # noqa: BLE001 -- undecodable input ends this connection only
            if not self._stopped.is_set() and peer.sock in self._peers:
                log.warning("thrift: peer %s: malformed message: %s", peer.name, _reason(e))
        finally:
            with self._lock:
                if self._peers.get(conn) is peer:
                    del self._peers[conn]
                if len(self._peers) < self.max_connections:
                    self._full_logged = False
            try:
                conn.close()
            except OSError:
                pass

    def stop(self) -> None:
        self._stopped.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()
        with self._lock:
            peers = list(self._peers.values())
        for p in peers:
            p.close()
        for t in self._threads:
            t.join(timeout=2)
