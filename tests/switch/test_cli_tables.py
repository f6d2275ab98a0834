"""BMv2's run-time API (Thrift) and `p4scope switch-cli`: match tables.

The switch runs basic.p4's JSON; the CLI adds, dumps, modifies and deletes
entries with simple_switch_CLI's syntax and texts; errors carry BMv2's
codes and leave the switch working; entries share the P4Runtime shadow.
"""

from __future__ import annotations

import pytest
from finsy.proto import p4r

from p4scope.switch.thrift.idl import bm
from tests.switch.sw_client import update
from tests.switch.sw_entities import eth, probe, table_entry

MAC1 = "00:00:00:00:00:01"


def test_table_add_forwards_and_dump_shows_entry(cli_switch):
    out = cli_switch.cli(f"table_add fwd forward {MAC1} => 3\n")
    assert "Adding entry to exact match table fwd" in out
    assert "match key:           EXACT-00:00:00:00:00:01" in out
    assert "runtime data:        00:03" in out
    assert "Entry has been added with handle 0" in out
    assert cli_switch.inject(1, eth(1)) == [(3, eth(1))]
    dump = cli_switch.cli("table_dump IngressImpl.fwd\n")
    assert "Dumping entry 0x0" in dump
    assert "* ethernet.dst        : EXACT     000000000001" in dump
    assert "Action entry: IngressImpl.forward - 0003" in dump
    assert "Dumping default entry\nAction entry: NoAction - " in dump
    assert cli_switch.cli("table_num_entries fwd\n").splitlines()[1] == "RuntimeCmd: 1"


def test_modify_delete_and_handle_versions(cli_switch):
    cli_switch.cli(f"table_add fwd forward {MAC1} => 3\n")
    out = cli_switch.cli("table_modify fwd forward 0 => 4\n")
    assert "Modifying entry 0 for exact match table fwd" in out
    assert cli_switch.inject(1, eth(1)) == [(4, eth(1))]
    assert "Deleting entry 0 from fwd" in cli_switch.cli("table_delete fwd 0\n")
    assert [p for p, _ in cli_switch.inject(1, eth(1))] == [0]  # miss: NoAction, egress_spec 0
    # the slot is reused with a new version, as BMv2 does: the old handle is stale
    out = cli_switch.cli(f"table_add fwd forward {MAC1} => 5\ntable_delete fwd 0\n")
    assert "Entry has been added with handle 16777216" in out
    assert "Invalid table operation (EXPIRED_HANDLE)" in out
    assert "Invalid table operation (INVALID_HANDLE)" in cli_switch.cli("table_delete fwd 7\n")
    assert cli_switch.inject(1, eth(1)) == [(5, eth(1))]


def test_lpm_ternary_range_priorities_and_default(cli_switch):
    out = cli_switch.cli("table_add routes forward 10.0.0.0/8 => 4\n"
                 "table_add acl drop 0x0001&&&0x00ff 3->7 0x05&&&0xff => 10\n"
                 "table_add acl drop 0x0001&&&0x00ff 3->7 0x05&&&0xff => 10\n"
                 "table_set_default routes forward 9\n")
    assert out.count("Entry has been added with handle 0") == 2
    assert "Invalid table operation (DUPLICATE_ENTRY)" in out
    assert "Setting default action of IngressImpl.routes" in out
    assert cli_switch.inject(1, probe(9, 0x0A010203)) == [(4, probe(9, 0x0A010203))]
    assert cli_switch.inject(1, probe(9, 0x0B010203)) == [(9, probe(9, 0x0B010203))]
    # the acl entry drops level 3..7, flags xx01, kind 5
    assert cli_switch.inject(1, probe(9, 0x0A000001, flags=0x1201, level=5, kind=5)) == []
    dump = cli_switch.cli("table_dump acl\n")
    assert "Priority: 10" in dump and "RANGE     03 -> 07" in dump
    assert "TERNARY   0001 &&& 00ff" in dump
    assert "Dumping default entry" in cli_switch.cli("table_reset_default routes\ntable_dump routes\n")
    assert [p for p, _ in cli_switch.inject(1, probe(9, 0x0B010203))] == [0]  # NoAction again


def test_errors_are_bmv2s_and_the_switch_carries_on(cli_switch):
    out = cli_switch.cli("table_add nope drop 1 =>\n"
                 "table_add fwd nope 1 =>\n"
                 "table_add fwd forward 1 2 => 3\n"
                 "table_add fwd forward zz:00 => 3\n"
                 f"table_add fwd forward {MAC1} => 3 4\n"
                 f"table_add fwd forward {MAC1} => 0x10000\n"
                 "table_add routes forward 10.0.0.0 => 1\n"
                 "table_add acl drop 1&&&1 1->2 1&&&1 =>\n"
                 "table_delete fwd x\n"
                 "bogus\n")
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert "Error: Invalid table name (nope)" in out
    assert "Error: Table fwd has no action nope" in out
    assert "Error: Table fwd needs 1 key fields" in out
    assert "Invalid match key: Error while parsing zz:00 - Invalid MAC address" in out
    assert "Error: Action IngressImpl.forward needs 1 parameters" in out
    assert "Invalid runtime data: Error while parsing 0x10000 - Parameter is too large" in out
    assert "Invalid match key: Invalid LPM value 10.0.0.0, use '/' to separate prefix and " \
           "length" in out
    assert "Error: Table is ternary, but could not extract a valid priority from args" in out
    assert "Error: Bad format for entry handle, expected integer" in out
    assert "*** Unknown syntax: bogus" in out
    assert cli_switch.last_errors == 10
    assert len(lines) >= 11
    # the switch still answers and forwards
    assert "Entry has been added with handle 0" in cli_switch.cli(f"table_add fwd forward {MAC1} => 2\n")
    assert cli_switch.inject(1, eth(1)) == [(2, eth(1))]


def test_server_checks_what_a_client_sends(cli_switch):
    """Calls that bypass the CLI's own checks get BMv2's error codes."""
    m = bm()
    std = cli_switch.clients.standard
    exact = lambda b: m.BmMatchParam(type=0, exact=m.BmMatchParamExact(key=b))  # noqa: E731
    codes = m.TableOperationErrorCode

    def code_of(call, *args):
        with pytest.raises(m.InvalidTableOperation) as e:
            call(0, *args)
        return e.value.code

    opts = m.BmAddEntryOptions(priority=0)
    assert code_of(std.bm_mt_add_entry, "IngressImpl.fwd", [exact(b"\x01")],
                   "IngressImpl.forward", [b"\x01"], opts) == codes.BAD_MATCH_KEY
    assert code_of(std.bm_mt_add_entry, "IngressImpl.fwd", [], "IngressImpl.forward",
                   [b"\x01"], opts) == codes.BAD_MATCH_KEY
    assert code_of(std.bm_mt_add_entry, "IngressImpl.fwd", [exact(bytes(6))], "nope", [],
                   opts) == codes.INVALID_ACTION_NAME
    assert code_of(std.bm_mt_add_entry, "IngressImpl.fwd", [exact(bytes(6))],
                   "IngressImpl.forward", [], opts) == codes.BAD_ACTION_DATA
    assert code_of(std.bm_mt_add_entry, "IngressImpl.nexthop", [exact(b"\x01")],
                   "IngressImpl.forward", [b"\x01"], opts) == codes.WRONG_TABLE_TYPE
    assert code_of(std.bm_mt_read_counter, "IngressImpl.routes", 0) == codes.COUNTERS_DISABLED
    assert code_of(std.bm_mt_get_num_entries, "x") == codes.INVALID_TABLE_NAME
    assert code_of(std.bm_mt_set_default_action, "IngressImpl.fixed_default",
                   "IngressImpl.drop", []) == codes.DEFAULT_ENTRY_IS_CONST
    # a valid call on the same connection still works
    assert std.bm_mt_add_entry(0, "IngressImpl.fwd", [exact(bytes(6))], "IngressImpl.forward",
                               [b"\x00\x01"], opts) == 0


def test_table_clear_and_entry_from_key(cli_switch):
    cli_switch.cli(f"table_add fwd forward {MAC1} => 3\ntable_add fwd drop 00:00:00:00:00:02 =>\n")
    out = cli_switch.cli(f"table_dump_entry_from_key fwd {MAC1}\ntable_dump_entry fwd 1\n")
    assert "Action entry: IngressImpl.forward - 0003" in out
    assert "Action entry: IngressImpl.drop - " in out
    cli_switch.cli("table_clear fwd\n")
    assert cli_switch.cli("table_num_entries fwd\n").splitlines()[1] == "RuntimeCmd: 0"


def test_cli_entries_are_p4runtime_entries(cli_switch_p4rt, ctl, schema):
    """On BMv2 both APIs write the same tables: so do they here."""
    out = cli_switch_p4rt.cli(f"table_add fwd forward {MAC1} => 3\n")
    assert "Entry has been added with handle 0" in out
    (ent,) = ctl.read(p4r.Entity(table_entry=p4r.TableEntry(
        table_id=schema.tables.find("fwd").id)))
    assert ent.table_entry.match[0].exact.value == b"\x01"
    assert ent.table_entry.action.action.params[0].value == b"\x03"
    # a controller's entry shows in table_dump and can be deleted by handle
    ctl.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 2},
                                                       "forward", {"port": 7})))
    dump = cli_switch_p4rt.cli("table_dump fwd\n")
    assert "000000000002" in dump and "Action entry: IngressImpl.forward - 0007" in dump
    assert cli_switch_p4rt.inject(1, eth(2)) == [(7, eth(2))]
    cli_switch_p4rt.cli("table_delete fwd 1\n")
    left = ctl.read(p4r.Entity(table_entry=p4r.TableEntry(
        table_id=schema.tables.find("fwd").id)))
    assert [e.table_entry.match[0].exact.value for e in left] == [b"\x01"]
    # ternary priorities: BMv2's lower-wins p is P4Runtime's INT_MAX - p
    cli_switch_p4rt.cli("table_add acl drop 0x0001&&&0x00ff 3->7 0x05&&&0xff => 10\n")
    (acl,) = ctl.read(p4r.Entity(table_entry=p4r.TableEntry(
        table_id=schema.tables.find("acl").id)))
    assert acl.table_entry.priority == 2**31 - 1 - 10
    assert {m.WhichOneof("field_match_type") for m in acl.table_entry.match} == \
        {"ternary", "range", "optional"}


def test_direct_counter_by_handle(cli_switch):
    cli_switch.cli(f"table_add fwd forward {MAC1} => 3\n")
    cli_switch.inject(1, eth(1))
    cli_switch.inject(1, eth(1))
    out = cli_switch.cli("counter_read fwd_counter 0\n")
    assert "this is the direct counter for table IngressImpl.fwd" in out
    assert f"fwd_counter[0]= ({2 * len(eth(1))} bytes, 2 packets)" in out
    out = cli_switch.cli("counter_write fwd_counter 0 5 500\ncounter_read fwd_counter 0\n"
                 "counter_reset fwd_counter\ncounter_read fwd_counter 0\n")
    assert "fwd_counter[0] has been updated" in out
    assert "fwd_counter[0]= (500 bytes, 5 packets)" in out
    assert "fwd_counter[0]= (0 bytes, 0 packets)" in out
