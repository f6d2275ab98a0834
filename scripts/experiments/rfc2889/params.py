"""The RFC 2889 suite's parameters, checked before anything starts: which
tests, frame sizes, how many ports at what line rate, the offered loads of
the forwarding tests, the searches' resolution and trial length, and the
address tests' counts and rates. The defaults are a small mesh that runs
in seconds; the seed's set-up is `--ports 18 --line-rate 1G`, the issue's
benchmark `--ports 32 --line-rate 100G`. Each mode has defaults of its own
(MODE_DEFAULTS): Mininet runs at software rates, on the ports this
machine's cores allow; `chain` runs the forwarding tests through a chain
of switches in virtual time (chain.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

from ..linerate import frames_per_second
from ..params import (MAX_PORT, ParamError, check_int, check_mode, check_number, check_sizes,
                      mode_values)

STANDARD_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
LOADS = (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0)
TESTS = ("full_mesh", "partial_mesh_1n", "partial_mesh_nn", "congestion_control",
         "forward_pressure", "max_forwarding_rate", "address_caching", "address_learning",
         "errored_frames", "broadcast")
"""What `--tests` takes, in the order the cases run (the maximum
forwarding rate reuses the full mesh's forwarding trials of the same size)."""
NOT_MEASURED: dict[str, str] = {}
"""RFC 2889 tests not measured yet, and what they need: never a PASS."""
MIN_PORTS = {"full_mesh": 2, "partial_mesh_1n": 2, "partial_mesh_nn": 2,
             "congestion_control": 4, "max_forwarding_rate": 2, "address_caching": 3,
             "address_learning": 3, "broadcast": 2, "forward_pressure": 2, "errored_frames": 2}
MAX_ADDRESSES = 1_000_000
CHAIN_TESTS = ("full_mesh", "partial_mesh_1n", "partial_mesh_nn", "congestion_control",
               "max_forwarding_rate", "broadcast")
"""The tests run through a chain of switches (--chain): the forwarding ones."""
NOT_THROUGH_CHAIN = {
    "forward_pressure": "the chain's testbed sets no DUT MAC's transmit gap and its sinks "
                        "measure no gap yet (the embedded switch's testbed does)",
    "address_caching": "each switch of the chain learns through its own controller; the "
                       "virtual-time controller serves one switch",
    "address_learning": "each switch of the chain learns through its own controller; the "
                        "virtual-time controller serves one switch",
    "errored_frames": "the chain's testbed reads no DUT MAC's error counters yet (the "
                      "embedded switch's testbed does)",
}
"""Tests a chain run leaves out, and why."""
MAX_CHAIN = 16
MININET_MAX_ADDRESSES = 4096
MININET_MAX_PHASE_S = 30.0
"""A Mininet address trial sends each address its own one-frame stream,
and its analyzers report every stream per 10 ms interval: the addresses
and each phase's length (addresses / rate) are bounded."""
NOT_IN_MININET = {
    "forward_pressure": "veth links carry no preamble or inter-frame gap: a software tester "
                        "cannot send a gap below 96 bit, nor see the gap it receives",
    "errored_frames": "veth links carry no FCS: a software tester cannot send the test's "
                      "frames with a bad FCS, nor a switch count them as a MAC does",
}
"""RFC 2889 tests a Mininet run cannot do, whatever the DUT, and why."""
ADDRESS_TESTS = ("address_caching", "address_learning")
RESETTABLE = ("p4scope", "bmv2", "bridge")
"""Mininet DUTs whose learnt addresses p4scope can flush between address trials."""


def not_in_mininet(dut: str) -> dict[str, str]:
    """The tests a Mininet run against `dut` leaves out, and why."""
    out = dict(NOT_IN_MININET)
    if dut not in RESETTABLE:
        out.update({t: f"p4scope cannot reset the addresses {dut} learnt between trials"
                    for t in ADDRESS_TESTS})
    return out


def mininet_ports(cpus: Optional[int] = None) -> int:
    """A Mininet run's ports by default: two per core (each port runs a
    generator and an analyzer), at least the 4 congestion control needs,
    at most 16."""
    n = 2 * (cpus if cpus is not None else os.cpu_count() or 1)
    return max(4, min(16, n))


MODE_DEFAULTS: dict[str, dict[str, Any]] = {
    "virtual": {"rate_bps": 100e9, "ports": 4, "max_addresses": 1024, "learn_fps": 20.0},
    "mininet": {"rate_bps": 10e6, "trial_s": 1.0, "max_addresses": 256, "learn_fps": 100.0},
}
"""What a mode's run uses for the parameters not given (Mininet's ports:
mininet_ports(), from this machine's cores)."""


@dataclass(frozen=True)
class Rfc2889Params:
    """sizes: frame sizes (FCS included) of the forwarding, congestion,
    maximum-forwarding-rate and broadcast tests; ports: the DUT's ports
    1..ports; rate_bps: their line rate; tests: which of TESTS; loads: the
    forwarding tests' offered loads (% of line rate per sending port);
    tolerance_pct: the loss a throughput trial may have; resolution_pct:
    the searches' resolution (% of line rate); trial_frames: frames a port
    sends in a trial at line rate (None: an overload of one resolution step
    shows as 50 frames), or trial_us: the trial's length; dut_rate_pct: the
    DUT's egress ports shaped to this share of line rate (100: unshaped).

    The address tests (test port 1, learning port 2, monitor port 3):
    address_sizes: their frame sizes; max_addresses: the caching search's
    largest address count (its answer is at most this); learn_fps: the
    caching test's learning rate (frames/s); learning_addresses: the
    address counts of the learning-rate test; learn_rate_max_fps and
    learn_rate_resolution_fps: its search; ageing_s: the controller's
    ageing time (the learnt entries' idle timeout, in virtual time; RFC
    2889 asks for one longer than an address trial, so a shorter one is
    refused: longest_address_trial); mac_table_size: compile the DUT with this MAC table
    (None: the program's own size).

    Forward pressure (port 1 to port 2): ifg_bits: the source's gap
    (below 96); dut_ifg_bits: the DUT's own transmit gap (96: Ethernet's;
    less: a DUT that sends too fast). Errored frames (port 1 to port 2):
    dut_mtu: the DUT's receiving port's MTU (its largest frame mtu + 18);
    pass_errored: that port passes errored frames (the test then fails).

    mode: virtual (the reference DUT in virtual time) or mininet (real
    traffic through `dut`: p4scope, bmv2, bridge or module:Class; a trial
    lasts trial_s); chain: virtual time through that many switches in a
    row, the tester on the first and the last (CHAIN_TESTS only)."""

    sizes: tuple[int, ...] = STANDARD_SIZES
    ports: int = 4
    rate_bps: float = 100e9
    tests: tuple[str, ...] = TESTS
    loads: tuple[float, ...] = LOADS
    tolerance_pct: float = 0.0
    resolution_pct: float = 1.0
    trial_frames: Optional[int] = None
    trial_us: Optional[float] = None
    dut_rate_pct: float = 100.0
    address_sizes: tuple[int, ...] = (64,)
    max_addresses: int = 1024
    learn_fps: float = 20.0
    learning_addresses: tuple[int, ...] = (100, 500)
    learn_rate_max_fps: float = 10_000.0
    learn_rate_resolution_fps: float = 100.0
    ageing_s: float = 300.0
    mac_table_size: Optional[int] = None
    ifg_bits: int = 88
    dut_ifg_bits: int = 96
    dut_mtu: int = 1500
    pass_errored: bool = False
    mode: str = "virtual"
    dut: str = "p4scope"
    trial_s: Optional[float] = None
    chain: int = 1

    @classmethod
    def for_mode(cls, mode: str, **given: Any) -> "Rfc2889Params":
        """A `mode` run's parameters: those given (None: not given) over
        the mode's defaults."""
        more = {"ports": mininet_ports()} if mode == "mininet" else {}
        chain = given.get("chain") or 1
        if given.get("tests") is None:
            left_out = not_in_mininet(given.get("dut") or "p4scope")
            given["tests"] = (CHAIN_TESTS if chain > 1 else
                              tuple(t for t in TESTS if t not in left_out)
                              if mode == "mininet" else TESTS)
        return cls(mode=mode, **{**more, **mode_values(mode, MODE_DEFAULTS, given)})

    def check(self) -> "Rfc2889Params":
        unknown = [t for t in self.tests if t not in TESTS and t not in NOT_MEASURED]
        if unknown or not self.tests:
            raise ParamError(f"--tests: {', '.join(unknown) or 'none'}: choose from "
                             f"{', '.join(TESTS)}")
        later = [t for t in self.tests if t in NOT_MEASURED]
        if later:
            raise ParamError("--tests: " + "; ".join(f"{t} is not measured yet: needs "
                                                     f"{NOT_MEASURED[t]}" for t in later))
        if len(set(self.tests)) != len(self.tests):
            raise ParamError("--tests: a test is named twice")
        check_sizes(self.sizes, "--sizes")
        check_sizes(self.address_sizes, "--address-sizes")
        check_int(self.ports, 2, MAX_PORT, "--ports")
        for t in self.tests:
            if self.ports < MIN_PORTS[t]:
                raise ParamError(f"--ports {self.ports}: {t} needs at least {MIN_PORTS[t]} ports")
        check_number(self.rate_bps, 1e6, 400e9, "--line-rate", unit="bit/s")
        if not self.loads:
            raise ParamError("--loads: no offered loads")
        for x in self.loads:
            check_number(x, 0.0, 100.0, "--loads", above=True, unit="%")
        if len(set(self.loads)) != len(self.loads):
            raise ParamError("--loads: a load repeats")
        check_number(self.tolerance_pct, 0.0, 50.0, "--tolerance-pct")
        check_number(self.resolution_pct, 0.001, 10.0, "--resolution-pct")
        if self.trial_frames is not None and self.trial_us is not None:
            raise ParamError("--trial-frames and --trial-us: give one of them, not both")
        if self.trial_frames is not None:
            check_int(self.trial_frames, 100, 10_000_000, "--trial-frames")
        if self.trial_us is not None:
            check_number(self.trial_us, 0.0, 1_000_000.0, "--trial-us", above=True, unit="us")
        check_number(self.dut_rate_pct, 1.0, 100.0, "--dut-rate-pct")
        check_int(self.max_addresses, 1, MAX_ADDRESSES, "--max-addresses")
        line_fps = frames_per_second(max(self.address_sizes), self.rate_bps)
        where = f"a port's line rate at {max(self.address_sizes)} B"
        check_number(self.learn_fps, 0.0, line_fps, "--learn-fps", above=True, unit="frames/s",
                     where=where)
        if not self.learning_addresses:
            raise ParamError("--learning-addresses: no address counts")
        for n in self.learning_addresses:
            check_int(n, 1, MAX_ADDRESSES, "--learning-addresses")
        if len(set(self.learning_addresses)) != len(self.learning_addresses):
            raise ParamError("--learning-addresses: a count repeats")
        check_number(self.learn_rate_max_fps, 1.0, line_fps, "--learn-rate-max-fps",
                     unit="frames/s", where=where)
        check_number(self.learn_rate_resolution_fps, 0.001, self.learn_rate_max_fps,
                     "--learn-rate-resolution-fps", above=True, unit="frames/s")
        check_number(self.ageing_s, 1.0, 1e6, "--ageing-s", unit="s")
        if self.mac_table_size is not None:
            check_int(self.mac_table_size, 4, 1 << 20, "--mac-table-size")
        self._check_mac()
        self._check_mode()
        self._check_ageing()
        return self

    def longest_address_trial(self) -> tuple[float, str]:
        """The longest address trial the run's address tests may take, s
        of virtual time, and which it is (0 without address tests): the
        caching test's first (the most addresses), the learning-rate
        search's slowest (its largest count at its lowest rate, the
        resolution)."""
        trials = []
        if "address_caching" in self.tests:
            trials.append((address_trial_s(self.max_addresses, self.learn_fps),
                           f"address caching: {self.max_addresses} addresses at "
                           f"{self.learn_fps:g} frames/s"))
        if "address_learning" in self.tests:
            n = max(self.learning_addresses)
            trials.append((address_trial_s(n, self.learn_rate_resolution_fps),
                           f"address learning rate: {n} addresses at the search's lowest rate, "
                           f"{self.learn_rate_resolution_fps:g} frames/s"))
        return max(trials, default=(0.0, ""))

    def _check_ageing(self) -> None:
        """RFC 2889 s. 5.7: the DUT's ageing time exceeds the test's
        duration, else addresses learnt in a trial age before their test
        frames and are flooded (in virtual time the learnt entries age)."""
        longest, which = self.longest_address_trial()
        if self.mode == "virtual" and longest and self.ageing_s <= longest:
            raise ParamError(
                f"--ageing-s {self.ageing_s:g}: not longer than an address trial ({which}, "
                f"learnt then tested: {longest:g} s of virtual time); RFC 2889 asks for an "
                "ageing time longer than the test, else the addresses learnt age within it "
                "(a longer --ageing-s, fewer addresses or a higher rate)")

    def _check_mode(self) -> None:
        check_mode(self.mode)
        check_int(self.chain, 1, MAX_CHAIN, "--chain", unit="switches")
        if self.mode == "virtual":
            if self.trial_s is not None:
                raise ParamError("--trial-s: for --mode mininet only (virtual time sizes "
                                 "trials by --trial-frames or --trial-us)")
            off = [t for t in self.tests if t in NOT_THROUGH_CHAIN]
            if self.chain > 1 and off:
                raise ParamError(f"--tests: {', '.join(off)}: not run through a chain "
                                 f"(--chain {self.chain}): {NOT_THROUGH_CHAIN[off[0]]}; a "
                                 f"chain runs {', '.join(CHAIN_TESTS)}")
            return
        if self.chain != 1:
            raise ParamError(f"--chain {self.chain}: for --mode virtual only (a chain of "
                             "switches runs in virtual time)")
        off = [t for t in self.tests if t in NOT_IN_MININET]
        if off:
            raise ParamError(f"--tests: {', '.join(off)}: not run in Mininet: "
                             f"{NOT_IN_MININET[off[0]]}")
        for option, given in (("--trial-frames", self.trial_frames),
                              ("--trial-us", self.trial_us),
                              ("--mac-table-size", self.mac_table_size)):
            if given is not None:
                raise ParamError(f"{option}: for --mode virtual only")
        if self.trial_s is None:
            raise ParamError("--trial-s: a Mininet trial needs a length")
        check_number(self.trial_s, 0.05, 60.0, "--trial-s", unit="s")
        check_number(self.rate_bps, 1e6, 100e9, "--line-rate", unit="bit/s")
        if "," in self.dut or not (self.dut in ("p4scope", "bmv2", "bridge")
                                   or ":" in self.dut.strip(":")):
            raise ParamError(f"--dut {self.dut!r}: name one DUT: p4scope, bmv2, bridge or "
                             "module:Class (a Mininet switch class)")
        p4 = self.dut in ("p4scope", "bmv2")
        if self.dut_rate_pct < 100.0 and not p4:
            raise ParamError(f"--dut-rate-pct: shaping the DUT's ports needs a P4 DUT "
                             f"(--dut p4scope or bmv2), not {self.dut}")
        address = [t for t in self.tests if t in ADDRESS_TESTS]
        if address and self.dut not in RESETTABLE:
            raise ParamError(f"--tests: {', '.join(address)} against --dut {self.dut}: the "
                             "address reset between trials needs a DUT whose learnt addresses "
                             "p4scope can flush (p4scope, bmv2 or bridge)")
        if not address:
            return
        check_int(self.max_addresses, 1, MININET_MAX_ADDRESSES, "--max-addresses",
                  where="Mininet: a stream per address")
        for n in self.learning_addresses:
            check_int(n, 1, MININET_MAX_ADDRESSES, "--learning-addresses",
                      where="Mininet: a stream per address")
        for option, n, fps in (("--max-addresses", self.max_addresses, self.learn_fps),
                               ("--learning-addresses", max(self.learning_addresses),
                                self.learn_rate_resolution_fps)):
            if n / fps > MININET_MAX_PHASE_S:
                raise ParamError(f"{option} {n}: at {fps:g} frames/s a trial's learning phase "
                                 f"takes {n / fps:g} s; in Mininet at most "
                                 f"{MININET_MAX_PHASE_S:g} s (fewer addresses or a higher rate)")

    def _check_mac(self) -> None:
        check_int(self.ifg_bits, 8, 95, "--ifg-bits", unit="bit",
                  where="forward pressure: below Ethernet's 96")
        check_int(self.dut_ifg_bits, 8, 96, "--dut-ifg-bits", unit="bit")
        if self.dut_ifg_bits % 8:
            raise ParamError(f"--dut-ifg-bits {self.dut_ifg_bits}: whole bytes (a multiple of 8)")
        check_int(self.dut_mtu, 46, 9198, "--dut-mtu", unit="B")
        if "errored_frames" in self.tests and max(self.sizes) > self.dut_mtu + 18:
            raise ParamError(f"--sizes {max(self.sizes)}: errored frames filtering sends valid "
                             f"frames of each size, above the DUT's largest frame "
                             f"({self.dut_mtu + 18} B at --dut-mtu {self.dut_mtu})")

    @property
    def port_list(self) -> list[int]:
        return list(range(1, self.ports + 1))

    @property
    def defines(self) -> dict[str, str]:
        """The -D macros the DUT is compiled with."""
        return {} if self.mac_table_size is None else {"MAC_TABLE_SIZE": str(self.mac_table_size)}


def address_trial_s(addresses: int, rate_fps: float) -> float:
    """How long an address trial's frames last (address.py): `addresses`
    learning frames, then as many test frames, at `rate_fps`."""
    return 2 * addresses / rate_fps


def parse_loads(text: str) -> tuple[float, ...]:
    """'10,20,...' -> (10.0, 20.0, ...): offered loads in % of line rate."""
    out = []
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        try:
            out.append(float(item))
        except ValueError:
            raise ParamError(f"--loads: {item!r} is not a number (% of line rate)") from None
    if not out:
        raise ParamError("--loads: empty")
    return tuple(out)
