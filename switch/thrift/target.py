"""What BMv2's run-time API acts on: the device's engine and its state.

On BMv2 the Thrift API and P4Runtime (PI) write the same tables. p4scope
keeps one table shadow per engine (p4runtime.tables.TableManager inside a
`ForwardingPipeline`), so the run-time API finds it here:

* a P4Runtime pipeline is committed and forwards: its ForwardingPipeline, shared
  with P4Runtime (a table_add is seen by a P4Runtime Read and vice versa);
* the switch runs the command line's JSON without P4Info: a private
  ForwardingPipeline over that engine with a P4Info derived from the JSON
  (json_p4info), created on first use.

Per engine the API also keeps BMv2 objects P4Runtime has no words for
(entry handle versions, PRE nodes, mirroring sessions): `EngineState`,
dropped when the engine is replaced (a new pipeline starts empty, as on
BMv2). Queue depths and rates belong to the traffic manager, not to the
program: they are re-applied to every new engine, as BMv2 keeps them
across pipeline changes. All calls happen under the device lock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..p4runtime.pipeline import ForwardingPipeline
from .json_p4info import p4info_from_json

if TYPE_CHECKING:
    from ..device import Device


@dataclass
class EngineState:
    engine: Any
    pipe: ForwardingPipeline
    json_text: str
    extra: dict = field(default_factory=dict)
    """Per-engine state of the run-time modules, by module ("pre", "handles", ...)."""

    def part(self, key: str, make: Callable[[], Any]) -> Any:
        obj = self.extra.get(key)
        if obj is None:
            obj = self.extra[key] = make()
        return obj


class NoProgram(Exception):
    """The switch runs no program (--no-p4 and no pipeline set yet)."""


class RuntimeTarget:
    def __init__(self, device: "Device"):
        self.device = device
        self._state: Optional[EngineState] = None
        self._json_of: Optional[tuple[Any, str]] = None
        self.queue_settings: list[tuple[str, tuple]] = []
        """("depth"|"rate", args) in order, replayed on every new engine."""
        inner = device.engine_factory

        def factory(json_text, opts):
            engine = inner(json_text, opts)
            self._replay_queues(engine)
            return engine

        device.engine_factory = factory

    # ----- the current program -------------------------------------------

    def state(self) -> EngineState:
        """The current engine's state (caller holds device.lock)."""
        dev = self.device
        eng = dev.dataplane
        if eng is None:
            raise NoProgram("the switch runs no P4 program yet")
        st = self._state
        if st is not None and st.engine is eng:
            p = dev.pipeline
            if p is not None and p.engine is eng and st.pipe is not p:
                st = None  # a P4Runtime pipeline took over this engine
            else:
                return st
        p = dev.pipeline
        if p is not None and p.engine is eng:
            st = EngineState(eng, p, p.json_text)
        else:
            json_text = self.json_of(eng)
            pipe = ForwardingPipeline(p4info_from_json(json_text), json_text, engine=eng,
                            options=dev.engine_options)
            pipe.set_stream_sink(lambda msg: None)  # no controller listens to this one
            st = EngineState(eng, pipe, json_text)
        self._state = st
        return st

    def json_of(self, engine) -> str:
        p = self.device.pipeline
        if p is not None and p.engine is engine:
            self._json_of = (engine, p.json_text)
            return p.json_text
        if self._json_of is not None and self._json_of[0] is engine:
            return self._json_of[1]
        if self.device.startup_json is None:
            raise NoProgram("the switch runs no P4 program yet")
        return self.device.startup_json

    def config(self) -> str:
        """The BMv2 JSON the switch runs ("" without a program)."""
        with self.device.lock:
            eng = self.device.dataplane
            return "" if eng is None else self.json_of(eng)

    def config_md5(self) -> bytes:
        return hashlib.md5(self.config().encode("utf-8")).digest()

    def forget(self) -> None:
        """Drops the per-engine state (after a reset or a new program)."""
        self._state = None

    # ----- traffic manager -------------------------------------------------

    def queue(self, kind: str, *args) -> None:
        """Applies a queue setting to the current engine and remembers it.
        kind "depth": (depth, port|None, priority|None); "rate": (pps, port|None,
        priority|None)."""
        self.queue_settings.append((kind, args))
        eng = self.device.dataplane
        if eng is not None:
            self._apply(eng, kind, args)

    def _replay_queues(self, engine) -> None:
        for kind, args in self.queue_settings:
            self._apply(engine, kind, args)

    @staticmethod
    def _apply(engine, kind: str, args: tuple) -> None:
        raw = engine.raw
        if kind == "depth":
            depth, port, prio = args
            raw.set_queue_depth(depth, port, prio)
        else:
            pps, port, prio = args
            if port is None:
                for p in _known_ports(engine):
                    raw.set_queue_rate(p, pps or None, prio)
            else:
                raw.set_queue_rate(port, pps or None, prio)


def _known_ports(engine) -> range:
    """Ports an all-ports rate applies to: the engine sets rates per port, so
    'all' means every port number a v1model program can name (9 bits)."""
    return range(512)
