"""The `p4scope switch-cli` command interpreter (simple_switch_CLI's commands).

Same command names, arguments and printed texts as simple_switch_CLI, so
command files written for BMv2 run unchanged and their output reads the
same. A failed command prints BMv2's message ("Invalid table operation
(DUPLICATE_ENTRY)", "Error: Invalid table name (foo)") and the shell goes
on. Two deliberate differences: an empty line does nothing (cmd's default,
kept by simple_switch_CLI, repeats the previous command) and lines starting
with '#' are comments. There is no `shell` command.
"""

from __future__ import annotations

import cmd
import functools
import json
import sys

from ...switch.thrift.idl import bm
from .client import Clients
from .program import CliProgram, CliTable, load_program
from .values import (InputError, MatchKeyError, RuntimeDataError, byte_str, hexstr,
                     parse_action_data, parse_match_key)

_LABELS = {
    "InvalidTableOperation": ("Invalid table operation", "TableOperationErrorCode"),
    "InvalidCounterOperation": ("Invalid counter operation", "CounterOperationErrorCode"),
    "InvalidMeterOperation": ("Invalid meter operation", "MeterOperationErrorCode"),
    "InvalidRegisterOperation": ("Invalid register operation", "RegisterOperationErrorCode"),
    "InvalidLearnOperation": ("Invalid learn operation", "LearnOperationErrorCode"),
    "InvalidSwapOperation": ("Invalid swap operation", "SwapOperationErrorCode"),
    "InvalidDevMgrOperation": ("Invalid device manager operation", "DevMgrErrorCode"),
    "InvalidCrcOperation": ("Invalid crc operation", "CrcErrorCode"),
    "InvalidToeplitzHashOperation": ("Invalid Toeplitz hash operation", "ToeplitzHashErrorCode"),
    "InvalidParseVSetOperation": ("Invalid parser value set operation",
                                  "ParseVSetOperationErrorCode"),
    "InvalidMcOperation": ("Invalid PRE operation", "McOperationErrorCode"),
    "InvalidMirroringOperation": ("Invalid mirroring operation", "MirroringOperationErrorCode"),
    "InvalidIdLookup": ("Invalid id lookup", "IdLookupErrorCode"),
}


class ResourceError(InputError):
    def __init__(self, kind: str, name: str):
        super().__init__(f"Invalid {kind} name ({name})")


class ConnectionLost(Exception):
    pass


def command(f):
    """Prints a command's failure the way simple_switch_CLI does."""
    @functools.wraps(f)
    def run(self, line):
        try:
            return f(self, line)
        except MatchKeyError as e:
            self.fail(f"Invalid match key: {e}")
        except RuntimeDataError as e:
            self.fail(f"Invalid runtime data: {e}")
        except InputError as e:
            self.fail(f"Error: {e}")
        except Exception as e:  # thrift exceptions of the switch, transport errors
            name = type(e).__name__
            if name in _LABELS:
                label, enum = _LABELS[name]
                codes = getattr(bm(), enum)._VALUES_TO_NAMES
                self.fail(f"{label} ({codes.get(e.code, e.code)})")
            elif name == "TApplicationException":
                self.fail(f"Error: the switch failed the call: {getattr(e, 'message', e)}")
            elif name in ("TTransportException", "BrokenPipeError", "ConnectionResetError",
                          "EOFError", "OSError", "TimeoutError"):
                self.fail(f"Error: lost the connection to the switch ({e})")
                raise ConnectionLost(str(e)) from None
            else:
                raise
    return run


class SwitchShell(cmd.Cmd):
    prompt = "RuntimeCmd: "
    intro = "Control utility for runtime P4 table manipulation"

    def __init__(self, clients: Clients, prog: CliProgram, stdin=None, stdout=None):
        super().__init__(stdin=stdin, stdout=stdout)
        if stdin is not None:
            self.use_rawinput = False
        self.c = clients
        self.prog = prog
        self.errors = 0

    # ----- plumbing --------------------------------------------------------

    def out(self, *parts, end="\n") -> None:
        self.stdout.write(" ".join(str(p) for p in parts) + end)

    def fail(self, msg: str) -> None:
        self.errors += 1
        self.out(msg)

    def emptyline(self):
        return False

    def default(self, line):
        if line.lstrip().startswith("#"):
            return False
        self.fail(f"*** Unknown syntax: {line}")
        return False

    def onecmd(self, line):
        try:
            return super().onecmd(line)
        except ConnectionLost:
            return True

    def do_EOF(self, line):
        self.out("")
        return True

    def do_exit(self, line):
        "Leave the CLI: exit"
        return True

    do_quit = do_exit

    # ----- argument helpers ----------------------------------------------------

    @staticmethod
    def nargs(args: list, n: int) -> None:
        if len(args) != n:
            raise InputError(f"Wrong number of args, expected {n} but got {len(args)}")

    @staticmethod
    def min_args(args: list, n: int) -> None:
        if len(args) < n:
            raise InputError("Insufficient number of args")

    @staticmethod
    def integer(text: str, what: str) -> int:
        try:
            return int(text, 0)
        except ValueError:
            raise InputError(f"Bad format for {what}, expected integer") from None

    def res(self, kind: str, label: str, name: str):
        obj = self.prog.find(kind, name)
        if obj is None:
            raise ResourceError(label, name)
        return obj

    def table(self, name: str) -> CliTable:
        return self.res("table", "table", name)

    def table_action(self, t: CliTable, name: str, typed: str = ""):
        a = self.prog.find("action", name)
        if a is None or a.name not in t.actions:
            raise InputError(f"Table {typed or t.name} has no action {name}")
        return a

    def runtime_data(self, action, words: list[str]) -> list[bytes]:
        if len(words) != len(action.params):
            raise InputError(f"Action {action.name} needs {len(action.params)} parameters")
        return parse_action_data(action.params, words)

    # ----- program ----------------------------------------------------------------

    @command
    def do_show_tables(self, line):
        "List tables defined in the P4 program: show_tables"
        self.nargs(line.split(), 0)
        for name in sorted(self.prog.tables):
            self.out(self.prog.tables[name].describe())

    @command
    def do_show_actions(self, line):
        "List actions defined in the P4 program: show_actions"
        self.nargs(line.split(), 0)
        for name in sorted(self.prog.actions):
            self.out(self.prog.actions[name].describe())

    @command
    def do_table_show_actions(self, line):
        "List one table's actions as per the P4 program: table_show_actions <table_name>"
        args = line.split()
        self.nargs(args, 1)
        for name in sorted(self.table(args[0]).actions):
            self.out(self.prog.actions[name].describe())

    @command
    def do_table_info(self, line):
        "Show info about a table: table_info <table_name>"
        args = line.split()
        self.nargs(args, 1)
        t = self.table(args[0])
        self.out(t.describe())
        self.out("*" * 80)
        for name in sorted(t.actions):
            self.out(self.prog.actions[name].describe())

    # ----- tables -------------------------------------------------------------------

    @command
    def do_table_set_default(self, line):
        "Set default action for a match table: table_set_default <table name> <action name> <action parameters>"
        args = line.split()
        self.min_args(args, 2)
        t = self.table(args[0])
        a = self.table_action(t, args[1], args[0])
        data = self.runtime_data(a, args[2:])
        self.out("Setting default action of", t.name)
        self.out(f"{'action:':20} {args[1]}")
        self.out(f"{'runtime data:':20} " + "\t".join(byte_str(d) for d in data))
        self.c.standard.bm_mt_set_default_action(0, t.name, a.name, data)

    @command
    def do_table_reset_default(self, line):
        "Reset default entry for a match table: table_reset_default <table name>"
        args = line.split()
        self.nargs(args, 1)
        self.c.standard.bm_mt_reset_default_entry(0, self.table(args[0]).name)

    @command
    def do_table_num_entries(self, line):
        "Return the number of entries in a match table (direct or indirect): table_num_entries <table name>"
        args = line.split()
        self.nargs(args, 1)
        self.out(self.c.standard.bm_mt_get_num_entries(0, self.table(args[0]).name))

    @command
    def do_table_clear(self, line):
        "Clear all entries in a match table (direct or indirect), but not the default entry: table_clear <table name>"
        args = line.split()
        self.nargs(args, 1)
        self.c.standard.bm_mt_clear_entries(0, self.table(args[0]).name, False)

    def _key_and_priority(self, t: CliTable, words: list[str]):
        prio = 0
        if t.needs_priority:
            try:
                prio = int(words.pop(-1))
            except (ValueError, IndexError):
                raise InputError("Table is ternary, but could not extract a valid priority "
                                 "from args") from None
        return words, prio

    @command
    def do_table_add(self, line):
        "Add entry to a match table: table_add <table name> <action name> <match fields> => <action parameters> [priority]"
        args = line.split()
        self.min_args(args, 3)
        t = self.table(args[0])
        a = self.table_action(t, args[1], args[0])
        rest, prio = self._key_and_priority(t, args[2:])
        cut = rest.index("=>") if "=>" in rest else len(rest)
        key_words, params = rest[:cut], rest[cut + 1:]
        if len(key_words) != len(t.keys):
            raise InputError(f"Table {args[0]} needs {len(t.keys)} key fields")
        data = self.runtime_data(a, params)
        key = parse_match_key(t.keys, key_words)
        m = bm()
        self.out("Adding entry to", t.match_type, "match table", args[0])
        self.out(f"{'match key:':20} " + "\t".join(_param_str(k) for k in key))
        self.out(f"{'action:':20} {args[1]}")
        self.out(f"{'runtime data:':20} " + "\t".join(byte_str(d) for d in data))
        h = self.c.standard.bm_mt_add_entry(0, t.name, _to_thrift(key), a.name, data,
                                            m.BmAddEntryOptions(priority=prio))
        self.out("Entry has been added with handle", h & 0xFFFFFFFF)

    @command
    def do_table_set_timeout(self, line):
        "Set a timeout in ms for a given entry; the table has to support timeouts: table_set_timeout <table_name> <entry handle> <timeout (ms)>"
        args = line.split()
        self.nargs(args, 3)
        t = self.table(args[0])
        if not t.support_timeout:
            raise InputError(f"Table {args[0]} does not support entry timeouts")
        h = self.integer(args[1], "entry handle")
        ms = self.integer(args[2], "timeout")
        self.out("Setting a", ms, "ms timeout for entry", h)
        self.c.standard.bm_mt_set_entry_ttl(0, t.name, _i32(h), ms)

    @command
    def do_table_modify(self, line):
        "Modify entry in a match table: table_modify <table name> <action name> <entry handle> [action parameters]"
        args = line.split()
        self.min_args(args, 3)
        t = self.table(args[0])
        a = self.table_action(t, args[1], args[0])
        h = self.integer(args[2], "entry handle")
        params = args[3:]
        if params and params[0] == "=>":
            params = params[1:]
        data = self.runtime_data(a, params)
        self.out("Modifying entry", h, "for", t.match_type, "match table", args[0])
        self.c.standard.bm_mt_modify_entry(0, t.name, _i32(h), a.name, data)

    @command
    def do_table_delete(self, line):
        "Delete entry from a match table: table_delete <table name> <entry handle>"
        args = line.split()
        self.nargs(args, 2)
        t = self.table(args[0])
        h = self.integer(args[1], "entry handle")
        self.out("Deleting entry", h, "from", args[0])
        self.c.standard.bm_mt_delete_entry(0, t.name, _i32(h))

    def _dump_action(self, a) -> None:
        if a.action_type == 1:
            self.out(f"Action entry: {a.action_name} - "
                     + ", ".join(hexstr(d) for d in (a.action_data or [])))
        elif a.action_type == 2:
            self.out(f"Index: member({a.mbr_handle})")
        elif a.action_type == 3:
            self.out(f"Index: group({a.grp_handle})")
        else:
            self.out("EMPTY")

    def _dump_entry(self, t: CliTable, e) -> None:
        w = max([20] + [len(k[0]) for k in t.keys])
        self.out(f"Dumping entry {hex(e.entry_handle & 0xFFFFFFFF)}")
        self.out("Match key:")
        for p, k in zip(e.match_key or [], t.keys):
            kind = {0: "exact", 1: "lpm", 2: "ternary", 3: "valid", 4: "range"}[p.type]
            self.out(f"* {k[0]:{w}}: {kind.upper():10}{_param_dump(p)}")
        if e.options is not None and e.options.priority is not None and e.options.priority >= 0:
            self.out(f"Priority: {e.options.priority}")
        self._dump_action(e.action_entry)
        if e.life is not None:
            self.out(f"Life: {e.life.time_since_hit_ms}ms since hit, timeout is "
                     f"{e.life.timeout_ms}ms")

    @command
    def do_table_dump_entry(self, line):
        "Display some information about a table entry: table_dump_entry <table name> <entry handle>"
        args = line.split()
        self.nargs(args, 2)
        t = self.table(args[0])
        h = self.integer(args[1], "entry handle")
        self._dump_entry(t, self.c.standard.bm_mt_get_entry(0, t.name, _i32(h)))

    @command
    def do_table_dump(self, line):
        "Display entries in a match-table: table_dump <table name>"
        args = line.split()
        self.nargs(args, 1)
        t = self.table(args[0])
        entries = self.c.standard.bm_mt_get_entries(0, t.name)
        self.out("==========")
        self.out("TABLE ENTRIES")
        for e in entries:
            self.out("**********")
            self._dump_entry(t, e)
        default = self.c.standard.bm_mt_get_default_entry(0, t.name)
        self.out("==========")
        self.out("Dumping default entry")
        self._dump_action(default)
        self.out("==========")

    @command
    def do_table_dump_entry_from_key(self, line):
        "Display some information about a table entry: table_dump_entry_from_key <table name> <match fields> [priority]"
        args = line.split()
        self.min_args(args, 1)
        t = self.table(args[0])
        words, prio = self._key_and_priority(t, args[1:])
        if len(words) != len(t.keys):
            raise InputError(f"Table {args[0]} needs {len(t.keys)} key fields")
        key = parse_match_key(t.keys, words)
        e = self.c.standard.bm_mt_get_entry_from_key(0, t.name, _to_thrift(key),
                                                     bm().BmAddEntryOptions(priority=prio))
        self._dump_entry(t, e)

    # ----- counters, registers, meters ------------------------------------------------

    @command
    def do_counter_read(self, line):
        "Read counter value: counter_read <name> <index>"
        args = line.split()
        self.nargs(args, 2)
        c = self.res("counter", "counter", args[0])
        i = self.integer(args[1], "index")
        if c.is_direct:
            self.out("this is the direct counter for table", c.binding)
            v = self.c.standard.bm_mt_read_counter(0, c.binding, _i32(i))
        else:
            v = self.c.standard.bm_counter_read(0, c.name, i)
        self.out(f"{args[0]}[{i}]= ({v.bytes} bytes, {v.packets} packets)")

    @command
    def do_counter_write(self, line):
        "Write counter value: counter_write <name> <index> <packets> <bytes>"
        args = line.split()
        self.nargs(args, 4)
        c = self.res("counter", "counter", args[0])
        i = self.integer(args[1], "index")
        pkts = self.integer(args[2], "packets")
        byts = self.integer(args[3], "bytes")
        value = bm().BmCounterValue(bytes=byts, packets=pkts)
        if c.is_direct:
            self.out("writing to direct counter for table", c.binding)
            self.c.standard.bm_mt_write_counter(0, c.binding, _i32(i), value)
        else:
            self.c.standard.bm_counter_write(0, c.name, i, value)
        self.out(f"{args[0]}[{i}] has been updated")

    @command
    def do_counter_reset(self, line):
        "Reset counter: counter_reset <name>"
        args = line.split()
        self.nargs(args, 1)
        c = self.res("counter", "counter", args[0])
        if c.is_direct:
            self.out("this is the direct counter for table", c.binding)
            self.c.standard.bm_mt_reset_counters(0, c.binding)
        else:
            self.c.standard.bm_counter_reset_all(0, c.name)

    @command
    def do_register_read(self, line):
        "Read register value: register_read <name> [index]"
        args = line.split()
        self.min_args(args, 1)
        r = self.res("register", "register", args[0])
        mask = (1 << r.width) - 1 if 0 < r.width <= 64 else None

        def show(v: int) -> int:
            return v & mask if mask is not None else v

        if len(args) > 1:
            self.nargs(args, 2)
            i = self.integer(args[1], "index")
            self.out(f"{args[0]}[{i}]=", show(self.c.standard.bm_register_read(0, r.name, i)))
        else:
            sys.stderr.write("register index omitted, reading entire array\n")
            values = self.c.standard.bm_register_read_all(0, r.name)
            self.out(f"{args[0]}=", ", ".join(str(show(v)) for v in values))

    @command
    def do_register_write(self, line):
        "Write register value: register_write <name> <index> <value>"
        args = line.split()
        self.nargs(args, 3)
        r = self.res("register", "register", args[0])
        i = self.integer(args[1], "index")
        try:
            v = int(args[2], 0)
        except ValueError:
            raise InputError("Bad format for value, must be an integer") from None
        v &= (1 << 64) - 1
        self.c.standard.bm_register_write(0, r.name, i, v - (1 << 64) if v >> 63 else v)

    @command
    def do_register_reset(self, line):
        "Reset all the cells in the register array to 0: register_reset <name>"
        args = line.split()
        self.nargs(args, 1)
        self.c.standard.bm_register_reset(0, self.res("register", "register", args[0]).name)

    def _rates(self, meter, words: list[str]) -> list:
        if len(words) != meter.rate_count:
            raise InputError(f"Invalid number of rates, expected {meter.rate_count} but got "
                             f"{len(words)}")
        out = []
        for w in words:
            try:
                r, b = w.split(":")
                out.append(bm().BmMeterRateConfig(units_per_micros=float(r), burst_size=int(b)))
            except ValueError:
                raise InputError("Error while parsing rates") from None
        return out

    @command
    def do_meter_array_set_rates(self, line):
        "Configure rates for an entire meter array: meter_array_set_rates <name> <rate_1>:<burst_1> <rate_2>:<burst_2> ..."
        args = line.split()
        self.min_args(args, 1)
        m = self.res("meter", "meter", args[0])
        self.c.standard.bm_meter_array_set_rates(0, m.name, self._rates(m, args[1:]))

    @command
    def do_meter_set_rates(self, line):
        "Configure rates for a meter: meter_set_rates <name> <index> <rate_1>:<burst_1> <rate_2>:<burst_2> ...\nRate uses units/microsecond and burst uses units where units is bytes or packets"
        args = line.split()
        self.min_args(args, 2)
        m = self.res("meter", "meter", args[0])
        i = self.integer(args[1], "index")
        rates = self._rates(m, args[2:])
        if m.is_direct:
            self.c.standard.bm_mt_set_meter_rates(0, m.binding, _i32(i), rates)
        else:
            self.c.standard.bm_meter_set_rates(0, m.name, i, rates)

    @command
    def do_meter_get_rates(self, line):
        "Retrieve rates for a meter: meter_get_rates <name> <index>"
        args = line.split()
        self.nargs(args, 2)
        m = self.res("meter", "meter", args[0])
        i = self.integer(args[1], "index")
        if m.is_direct:
            rates = self.c.standard.bm_mt_get_meter_rates(0, m.binding, _i32(i))
        else:
            rates = self.c.standard.bm_meter_get_rates(0, m.name, i)
        if len(rates) != m.rate_count:
            self.out("WARNING: expected", m.rate_count, "rates", end=" ")
            self.out("but only received", len(rates))
        for n, r in enumerate(rates):
            self.out(f"{n}: info rate = {r.units_per_micros}, burst size = {r.burst_size}")

    # ----- parser value sets -------------------------------------------------------------

    @command
    def do_show_pvs(self, line):
        "List parser value sets defined in the P4 program: show_pvs"
        self.nargs(line.split(), 0)
        for name in sorted(self.prog.value_sets):
            self.out(f"{name:30} [compressed bitwidth:{self.prog.value_sets[name].width}]")

    def _pvs_value(self, vs, text: str) -> bytes:
        try:
            v = int(text, 0)
        except ValueError:
            raise InputError("Invalid input, could not cast to integer, try in hex with 0x "
                             "prefix") from None
        if v >> vs.width:
            raise InputError(f"Input is too large, it should fit within {vs.width} bits")
        return v.to_bytes((vs.width + 7) // 8, "big")

    @command
    def do_pvs_add(self, line):
        "Add a value to a parser value set: pvs_add <pvs_name> <value>"
        args = line.split()
        self.nargs(args, 2)
        vs = self.res("value_set", "parser value set", args[0])
        self.c.standard.bm_parse_vset_add(0, vs.name, self._pvs_value(vs, args[1]))

    @command
    def do_pvs_remove(self, line):
        "Remove a value from a parser value set: pvs_remove <pvs_name> <value>"
        args = line.split()
        self.nargs(args, 2)
        vs = self.res("value_set", "parser value set", args[0])
        self.c.standard.bm_parse_vset_remove(0, vs.name, self._pvs_value(vs, args[1]))

    @command
    def do_pvs_get(self, line):
        "Print all values from a parser value set: pvs_get <pvs_name>"
        args = line.split()
        self.nargs(args, 1)
        vs = self.res("value_set", "parser value set", args[0])
        for v in self.c.standard.bm_parse_vset_get(0, vs.name):
            self.out(hexstr(v))

    @command
    def do_pvs_clear(self, line):
        "Remove all values from a parser value set: pvs_clear <pvs_name>"
        args = line.split()
        self.nargs(args, 1)
        vs = self.res("value_set", "parser value set", args[0])
        self.c.standard.bm_parse_vset_clear(0, vs.name)

    # ----- multicast ------------------------------------------------------------------

    @staticmethod
    def port_map(words: list[str], what: str = "port") -> str:
        nums = []
        for w in words:
            try:
                n = int(w)
            except ValueError:
                n = -1
            if n < 0:
                raise InputError(f"'{w}' is not a valid {what} number")
            nums.append(n)
        if len(set(nums)) != len(nums):
            dup = next(n for n in nums if nums.count(n) > 1)
            raise InputError(f"Found duplicate {what} number '{dup}'")
        if not nums:
            return ""
        bits = ["0"] * (max(nums) + 1)
        for n in nums:
            bits[n] = "1"
        return "".join(reversed(bits))

    def ports_and_lags(self, words: list[str]) -> tuple[str, str]:
        if "|" in words:
            cut = words.index("|")
            return self.port_map(words[:cut]), self.port_map(words[cut + 1:], "lag")
        return self.port_map(words), ""

    @command
    def do_mc_mgrp_create(self, line):
        "Create multicast group: mc_mgrp_create <group id>"
        args = line.split()
        self.nargs(args, 1)
        g = self.integer(args[0], "multicast group id")
        self.out("Creating multicast group", g)
        self.c.pre.bm_mc_mgrp_create(0, g)

    @command
    def do_mc_mgrp_destroy(self, line):
        "Destroy multicast group: mc_mgrp_destroy <group id>"
        args = line.split()
        self.nargs(args, 1)
        g = self.integer(args[0], "multicast group id")
        self.out("Destroying multicast group", g)
        self.c.pre.bm_mc_mgrp_destroy(0, g)

    @command
    def do_mc_node_create(self, line):
        "Create multicast node: mc_node_create <rid> <space-separated port list> [ | <space-separated lag list> ]"
        args = line.split()
        self.min_args(args, 1)
        rid = self.integer(args[0], "rid")
        ports, lags = self.ports_and_lags(args[1:])
        self.out("Creating node with rid", rid, ", port map", ports, "and lag map", lags)
        h = self.c.pre.bm_mc_node_create(0, rid, ports, lags)
        self.out("node was created with handle", h)

    @command
    def do_mc_node_update(self, line):
        "Update multicast node: mc_node_update <node handle> <space-separated port list> [ | <space-separated lag list> ]"
        args = line.split()
        self.min_args(args, 2)
        h = self.integer(args[0], "node handle")
        ports, lags = self.ports_and_lags(args[1:])
        self.out("Updating node", h, "with port map", ports, "and lag map", lags)
        self.c.pre.bm_mc_node_update(0, h, ports, lags)

    @command
    def do_mc_node_associate(self, line):
        "Associate node to multicast group: mc_node_associate <group handle> <node handle>"
        args = line.split()
        self.nargs(args, 2)
        g = self.integer(args[0], "multicast group id")
        h = self.integer(args[1], "node handle")
        self.out("Associating node", h, "to multicast group", g)
        self.c.pre.bm_mc_node_associate(0, g, h)

    @command
    def do_mc_node_dissociate(self, line):
        "Dissociate node from multicast group: mc_node_dissociate <group handle> <node handle>"
        args = line.split()
        self.nargs(args, 2)
        g = self.integer(args[0], "multicast group id")
        h = self.integer(args[1], "node handle")
        self.out("Dissociating node", h, "from multicast group", g)
        self.c.pre.bm_mc_node_dissociate(0, g, h)

    @command
    def do_mc_node_destroy(self, line):
        "Destroy multicast node: mc_node_destroy <node handle>"
        args = line.split()
        self.nargs(args, 1)
        h = self.integer(args[0], "node handle")
        self.out("Destroying node", h)
        self.c.pre.bm_mc_node_destroy(0, h)

    @command
    def do_mc_set_lag_membership(self, line):
        "Set lag membership of port list: mc_set_lag_membership <lag index> <space-separated port list>"
        args = line.split()
        self.min_args(args, 2)
        lag = self.integer(args[0], "lag index")
        ports = self.port_map(args[1:], "lag")
        self.out("Setting lag membership:", lag, "<-", ports)
        self.c.pre.bm_mc_set_lag_membership(0, lag, ports)

    @command
    def do_mc_dump(self, line):
        "Dump entries in multicast engine"
        doc = json.loads(self.c.pre.bm_mc_get_entries(0))
        l1 = {h["handle"]: (h["rid"], h["l2_handle"]) for h in doc.get("l1_handles", [])}
        l2 = {h["handle"]: (h["ports"], h["lags"]) for h in doc.get("l2_handles", [])}
        self.out("==========")
        self.out("MC ENTRIES")
        for g in doc.get("mgrps", []):
            self.out("**********")
            self.out(f"mgrp({g['id']})")
            for h in g["l1_handles"]:
                rid, l2h = l1[h]
                ports, lags = l2[l2h]
                self.out(f"  -> (L1h={h}, rid={rid})", end=" ")
                self.out(f"-> (ports=[{', '.join(map(str, ports))}], "
                         f"lags=[{', '.join(map(str, lags))}])")
        self.out("==========")
        self.out("LAGS")
        for lag in doc.get("lags", []):
            self.out(f"lag({lag['id']})", end=" ")
            self.out(f"-> ports=[{', '.join(map(str, lag['ports']))}]")
        self.out("==========")

    # ----- simple_switch: queues, mirroring, clock ------------------------------------

    def _queue(self, line, what: str) -> None:
        args = line.split()
        self.min_args(args, 1)
        v = self.integer(args[0], what)
        s = self.c.sswitch
        if len(args) > 2:
            port = self.integer(args[1], "egress_port")
            prio = self.integer(args[2], "priority")
            call = (s.set_egress_priority_queue_depth if what == "nb_pkts"
                    else s.set_egress_priority_queue_rate)
            call(port, prio, v)
        elif len(args) == 2:
            port = self.integer(args[1], "egress_port")
            call = s.set_egress_queue_depth if what == "nb_pkts" else s.set_egress_queue_rate
            call(port, v)
        else:
            call = s.set_all_egress_queue_depths if what == "nb_pkts" \
                else s.set_all_egress_queue_rates
            call(v)

    @command
    def do_set_queue_depth(self, line):
        "Set depth of one / all egress queue(s): set_queue_depth <nb_pkts> [<egress_port> [<priority>]]"
        self._queue(line, "nb_pkts")

    @command
    def do_set_queue_rate(self, line):
        "Set rate of one / all egress queue(s): set_queue_rate <rate_pps> [<egress_port> [<priority>]]"
        self._queue(line, "rate_pps")

    @command
    def do_mirroring_add(self, line):
        "Add mirroring session to unicast port: mirroring_add <mirror_id> <egress_port>"
        args = line.split()
        self.nargs(args, 2)
        sid = self.integer(args[0], "mirror_id")
        port = self.integer(args[1], "egress_port")
        self.c.sswitch.mirroring_session_add(sid, bm().MirroringSessionConfig(port=port))

    @command
    def do_mirroring_add_mc(self, line):
        "Add mirroring session to multicast group: mirroring_add_mc <mirror_id> <mgrp>"
        args = line.split()
        self.nargs(args, 2)
        sid = self.integer(args[0], "mirror_id")
        g = self.integer(args[1], "mgrp")
        self.c.sswitch.mirroring_session_add(sid, bm().MirroringSessionConfig(mgid=g))

    @command
    def do_mirroring_delete(self, line):
        "Delete mirroring session: mirroring_delete <mirror_id>"
        args = line.split()
        self.nargs(args, 1)
        self.c.sswitch.mirroring_session_delete(self.integer(args[0], "mirror_id"))

    @command
    def do_mirroring_get(self, line):
        "Display mirroring session: mirroring_get <mirror_id>"
        args = line.split()
        self.nargs(args, 1)
        cfg = self.c.sswitch.mirroring_session_get(self.integer(args[0], "mirror_id"))
        self.out(f"MirroringSessionConfig(port={cfg.port!r}, mgid={cfg.mgid!r})")

    @command
    def do_get_time_elapsed(self, line):
        "Get time elapsed (in microseconds) since the switch started: get_time_elapsed"
        self.out(self.c.sswitch.get_time_elapsed_us())

    @command
    def do_get_time_since_epoch(self, line):
        "Get time elapsed (in microseconds) since the switch clock's epoch: get_time_since_epoch"
        self.out(self.c.sswitch.get_time_since_epoch_us())

    # ----- switch -------------------------------------------------------------------------

    @command
    def do_port_add(self, line):
        "Add a port to the switch (behavior depends on device manager used): port_add <iface_name> <port_num> [pcap_path]"
        args = line.split()
        self.min_args(args, 2)
        try:
            port = int(args[1])
        except ValueError:
            raise InputError("Bad format for port_num, must be an integer") from None
        self.c.standard.bm_dev_mgr_add_port(args[0], port, args[2] if len(args) > 2 else "")

    @command
    def do_port_remove(self, line):
        "Removes a port from the switch (behavior depends on device manager used): port_remove <port_num>"
        args = line.split()
        self.nargs(args, 1)
        try:
            port = int(args[0])
        except ValueError:
            raise InputError("Bad format for port_num, must be an integer") from None
        self.c.standard.bm_dev_mgr_remove_port(port)

    @command
    def do_show_ports(self, line):
        "Shows the ports connected to the switch: show_ports"
        self.nargs(line.split(), 0)
        self.out(f"{'port #':^10}{'iface name':^20}{'status':^10}extra info")
        self.out("=" * 50)
        for p in self.c.standard.bm_dev_mgr_show_ports():
            extra = "; ".join(f"{k}={v}" for k, v in (p.extra or {}).items())
            self.out(f"{p.port_num:^10}{p.iface_name:^20}{'UP' if p.is_up else 'DOWN':^10}"
                     f"{extra}")

    @command
    def do_switch_info(self, line):
        "Show some basic info about the switch: switch_info"
        self.nargs(line.split(), 0)
        info = self.c.standard.bm_mgmt_get_info()
        names = ["device_id", "thrift_port", "notifications_socket", "elogger_socket",
                 "debugger_socket"]
        w = 5 + max(len(n) for n in names)
        for n in names:
            self.out(f"{n:{w}}: {getattr(info, n)}")

    @command
    def do_reset_state(self, line):
        "Reset all state in the switch (table entries, registers, ...), but P4 config is preserved: reset_state"
        self.nargs(line.split(), 0)
        self.c.standard.bm_reset_state()

    @command
    def do_write_config_to_file(self, line):
        "Retrieves the JSON config currently used by the switch and dumps it to user-specified file"
        args = line.split()
        self.nargs(args, 1)
        text = self.c.standard.bm_get_config()
        with open(args[0], "w", encoding="utf-8") as f:
            f.write(text)

    @command
    def do_serialize_state(self, line):
        "Serialize the switch state and dumps it to user-specified file"
        args = line.split()
        self.nargs(args, 1)
        with open(args[0], "w", encoding="utf-8") as f:
            f.write(self.c.standard.bm_serialize_state())

    @command
    def do_load_new_config_file(self, line):
        "Load new json config: load_new_config_file <path to .json file>"
        args = line.split()
        self.nargs(args, 1)
        try:
            with open(args[0], encoding="utf-8") as f:
                text = f.read()
        except OSError:
            raise InputError("Not a valid filename") from None
        try:
            json.loads(text)
        except ValueError:
            raise InputError("Not a valid JSON file") from None
        self.out("Loading new Json config")
        self.c.standard.bm_load_new_config(text)
        self.prog = load_program(text)

    @command
    def do_swap_configs(self, line):
        "Swap the 2 existing configs, need to have called load_new_config_file before"
        self.out("Swapping configs")
        self.c.standard.bm_swap_configs()

    def _crc(self, line, width: int) -> None:
        args = line.split()
        self.nargs(args, 6)
        if self.prog.crc_calcs.get(args[0]) != width:
            raise ResourceError(f"crc{width}_custom", args[0])

        def num(t: str) -> int:
            v = self.integer(t, "crc parameter")
            if v >> width:
                raise InputError(f"Integer cannot fit within {width} bits")
            return v - (1 << width) if v >> (width - 1) else v

        def flag(t: str) -> bool:
            if t in ("true", "True"):
                return True
            if t in ("false", "False"):
                return False
            try:
                return bool(int(t, 0))
            except ValueError:
                raise InputError("Invalid bool parameter") from None

        m = bm()
        cfg_type = m.BmCrc16Config if width == 16 else m.BmCrc32Config
        cfg = cfg_type(*[num(a) for a in args[1:4]], *[flag(a) for a in args[4:6]])
        call = self.c.standard.bm_set_crc16_custom_parameters if width == 16 \
            else self.c.standard.bm_set_crc32_custom_parameters
        call(0, args[0], cfg)

    @command
    def do_set_crc16_parameters(self, line):
        "Change the parameters for a custom crc16 hash: set_crc16_parameters <name> <polynomial> <initial remainder> <final xor value> <reflect data?> <reflect remainder?>"
        self._crc(line, 16)

    @command
    def do_set_crc32_parameters(self, line):
        "Change the parameters for a custom crc32 hash: set_crc32_parameters <name> <polynomial> <initial remainder> <final xor value> <reflect data?> <reflect remainder?>"
        self._crc(line, 32)

    # ----- completion of names -------------------------------------------------------

    def completenames(self, text, *ignored):
        return [n[3:] for n in self.get_names() if n.startswith("do_" + text)]

    def completedefault(self, text, line, begidx, endidx):
        pool = list(self.prog.tables) + list(self.prog.actions) + list(self.prog.counters) \
            + list(self.prog.registers) + list(self.prog.meters)
        return sorted(n for n in pool if n.startswith(text))


# ----- helpers -----------------------------------------------------------------------------

def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def _to_thrift(key: list[tuple]) -> list:
    m = bm()
    out = []
    for k in key:
        if k[0] == "exact":
            out.append(m.BmMatchParam(type=0, exact=m.BmMatchParamExact(key=k[1])))
        elif k[0] == "lpm":
            out.append(m.BmMatchParam(type=1, lpm=m.BmMatchParamLPM(key=k[1], prefix_length=k[2])))
        elif k[0] == "ternary":
            out.append(m.BmMatchParam(type=2, ternary=m.BmMatchParamTernary(key=k[1], mask=k[2])))
        elif k[0] == "valid":
            out.append(m.BmMatchParam(type=3, valid=m.BmMatchParamValid(key=k[1])))
        else:
            out.append(m.BmMatchParam(type=4, range=m.BmMatchParamRange(start=k[1], end_=k[2])))
    return out


def _param_str(k: tuple) -> str:
    """A match parameter as table_add echoes it ("EXACT-0a:00:00:01")."""
    kind = k[0]
    if kind == "exact":
        return f"EXACT-{byte_str(k[1])}"
    if kind == "lpm":
        return f"LPM-{byte_str(k[1])}/{k[2]}"
    if kind == "ternary":
        return f"TERNARY-{byte_str(k[1])} &&& {byte_str(k[2])}"
    if kind == "valid":
        return "VALID-"
    return f"RANGE-{byte_str(k[1])} -> {byte_str(k[2])}"


def _param_dump(p) -> str:
    """A match parameter as table_dump shows it ("0a000001/24")."""
    if p.type == 0:
        return hexstr(p.exact.key)
    if p.type == 1:
        return f"{hexstr(p.lpm.key)}/{p.lpm.prefix_length}"
    if p.type == 2:
        return f"{hexstr(p.ternary.key)} &&& {hexstr(p.ternary.mask)}"
    if p.type == 3:
        return "01" if p.valid.key else "00"
    return f"{hexstr(p.range.start)} -> {hexstr(p.range.end_)}"
